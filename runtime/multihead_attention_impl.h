// What a built MultiheadAttention holds: its configuration and packed projections.
#ifndef EDGEATTN_RUNTIME_MULTIHEAD_ATTENTION_IMPL_H_
#define EDGEATTN_RUNTIME_MULTIHEAD_ATTENTION_IMPL_H_

#include <cstdint>

#include "edgeattn/edgeattn.hpp"
#include "runtime/projection_weights.h"

namespace edgeattn {

struct MultiheadAttention::Impl {
  // Per-channel quantized weights (values [n x d_model], one scale per row) and float biases
  // (null: none) of the four projections.
  struct Int8Weights {
    const std::int8_t *q, *k, *v, *out;
    const float *q_scale, *k_scale, *v_scale, *out_scale;
    const float *q_bias, *k_bias, *v_bias, *out_bias;
  };

  Config config;
  MhaProjections projections;

  void BuildInt8(const Int8Weights& weights);
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_MULTIHEAD_ATTENTION_IMPL_H_
