// What a built MultiheadAttention holds: its configuration and packed projections.
#ifndef EDGEATTN_RUNTIME_MULTIHEAD_ATTENTION_IMPL_H_
#define EDGEATTN_RUNTIME_MULTIHEAD_ATTENTION_IMPL_H_

#include <cstdint>

#include "edgeattn/edgeattn.hpp"
#include "runtime/attention_math.h"
#include "runtime/packed_projection.h"
#include "simd/attention.h"

namespace edgeattn {

// Per-channel quantized weights of the four projections (values [n x d_model], one scale per
// row) and float biases (null: none), as int8 weight files hold them.
struct Int8Weights {
  const std::int8_t *q, *k, *v, *out;
  const float *q_scale, *k_scale, *v_scale, *out_scale;
  const float *q_bias, *k_bias, *v_bias, *out_bias;
};

// A number no other operator of the process has had: what a CrossAttentionMemory records of the
// operator it was made for, as an address may be reused by the next operator built.
std::uint64_t NewOperatorId();

struct EDGEATTN_HIDDEN MultiheadAttention::Impl {
  // The four projections' weights: n x d_model values of the kernel's weight type each (float,
  // or int8 with one float scale per row), and float biases (null: none).
  struct Weights {
    const void *q, *k, *v, *out;
    const float *q_scale, *k_scale, *v_scale, *out_scale;  // int8 weights only
    const float *q_bias, *k_bias, *v_bias, *out_bias;
  };

  std::uint64_t id = NewOperatorId();
  // What makes its keys and values (KvProjectionFingerprint): a KvCache's check of its layer.
  std::uint64_t kv_fingerprint = 0;
  Config config;
  StepMath math;
  MhaProjections projections;
  const simd::AttentionKernel* attention = nullptr;

  // Packs the weights for `kernel`, chosen for config (ChooseProjectionKernel), and chooses the
  // attention kernel.
  void Build(const simd::ProjectionKernel& kernel, const Weights& weights);
  // Packs int8 weights for the int8 kernel config asks for.
  void BuildInt8(const Int8Weights& weights);
};

// The projection kernel config asks for: the one named by config.projection_kernel, or else the
// best this CPU runs for config.precision. Throws edgeattn::Error naming the kernels this CPU
// runs when the name is not one of them.
const simd::ProjectionKernel& ChooseProjectionKernel(const Config& config);
// Likewise the attention kernel of config.attention_kernel among config.kv_format's; a name of
// another format's kernel is an error naming both formats.
const simd::AttentionKernel& ChooseAttentionKernel(const Config& config);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_MULTIHEAD_ATTENTION_IMPL_H_
