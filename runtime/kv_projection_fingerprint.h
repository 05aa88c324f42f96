// What a KV cache records of the operator it was made for: a fingerprint of what makes its keys
// and values (the key and value projections' weights as given, their scales and biases, and the
// key transforms: norm and rotary embedding). Operators of one layer that differ only in how
// they attend (window, softcap, sinks, score scale, kernels) share it and may decode into one
// cache; another layer's, of the same shape, has another and is refused.
#ifndef EDGEATTN_RUNTIME_KV_PROJECTION_FINGERPRINT_H_
#define EDGEATTN_RUNTIME_KV_PROJECTION_FINGERPRINT_H_

#include <cstddef>
#include <cstdint>

#include "runtime/attention_math.h"
#include "simd/projection_kernel.h"

namespace edgeattn {

// The key and value projections: kvd x d weights each of the kernel's weight type, int8 scales
// (kvd floats each, or null) and biases (kvd floats each, or null).
struct KvProjectionWeights {
  simd::WeightType type;
  const void *k, *v;
  const float *k_scale, *v_scale, *k_bias, *v_bias;
  std::size_t kvd, d;
};

// A few thousand evenly spaced weights of each matrix, every scale and bias, and the key
// transforms: reading a whole LLM layer's weights again would add milliseconds to each build,
// and two trained layers differ almost everywhere.
std::uint64_t KvProjectionFingerprint(const KvProjectionWeights& w, const StepMath& math);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_KV_PROJECTION_FINGERPRINT_H_
