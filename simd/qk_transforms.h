// What happens to each head's projected query and key rows before they are scored: an RMS norm
// with a learned weight (Qwen3, Gemma 3) and a rotary position embedding (RoPE), in the two
// layouts models use. A row of `heads` heads of dk floats is transformed per head.
#ifndef EDGEATTN_SIMD_QK_TRANSFORMS_H_
#define EDGEATTN_SIMD_QK_TRANSFORMS_H_

#include <stddef.h>

namespace edgeattn {
namespace simd {

struct HeadTransform {
  // Per head: x = x / sqrt(mean(x^2) + norm_eps) * norm_weight[0, dk); null: no norm.
  const float* norm_weight = nullptr;
  float norm_eps = 0.0f;
  // Then the first rotary_dim dims (even, <= dk; 0: no rotation) are rotated by the tables
  // RotaryTables made for the row's position.
  size_t rotary_dim = 0;
  bool interleaved = false;
  const float* cos = nullptr;
  const float* sin = nullptr;
};

// Floats of each of the cos and sin tables for rotary_dim dims.
inline size_t RotaryTableSize(size_t rotary_dim) { return rotary_dim; }

// The tables of a row at `position` (already divided by the scaling factor): the angle of pair
// i is position * inv_freq[i], i < rotary_dim / 2, computed in float as PyTorch does.
// Halves layout: cos[i] and sin[i] for pair i (the first rotary_dim / 2 entries).
// Interleaved: cos[2i] = cos[2i + 1] = cos a_i, sin[2i] = -sin a_i, sin[2i + 1] = sin a_i, so that
// the rotation is x * cos + (x with each pair swapped) * sin.
void RotaryTables(float position, const float* inv_freq, size_t rotary_dim, bool interleaved,
                  float* cos, float* sin);

// Transforms each of the `heads` heads of dk floats of row x in place.
void TransformHeads(float* x, size_t heads, size_t dk, const HeadTransform& transform);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_QK_TRANSFORMS_H_
