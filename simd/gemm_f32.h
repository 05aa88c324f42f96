// fp32 GEMM for the projections: C = A W^T + bias, with W [n x k] as PyTorch stores a Linear
// weight, packed once into panels that the tile kernel reads with unit stride.
#ifndef EDGEATTN_SIMD_GEMM_F32_H_
#define EDGEATTN_SIMD_GEMM_F32_H_

#include <stddef.h>

namespace edgeattn {
namespace simd {

// Output features per packed panel. A multiple of every target's tile width (16, 32 or 64).
inline constexpr size_t kGemmPanelWidth = 64;

// Floats needed by PackGemmWeights for n output features of k inputs.
size_t PackedGemmWeightsSize(size_t n, size_t k);

// Packs W [n x k] (row stride ldw) into panels: panel p holds features [64p, 64p + 64) as
// k rows of 64, zero-padded past n. `packed` must hold PackedGemmWeightsSize(n, k) floats.
void PackGemmWeights(const float* w, size_t ldw, size_t n, size_t k, float* packed);

// Packed weights plus a bias padded with zeros to a whole panel (bias may be null: no bias).
struct GemmWeightsView {
  const float* panels;
  const float* bias;
  size_t n;
  size_t k;
};

inline size_t GemmPanelCount(size_t n) {
  return (n + kGemmPanelWidth - 1) / kGemmPanelWidth;
}

// C[rows [row_begin, row_end), panels [panel_begin, panel_end)] = A W^T + bias.
// A is [*, k] with row stride lda, C has row stride ldc. Any sub-range may be computed by any
// thread: each element's arithmetic is the same whatever the split.
void GemmF32(const float* a, size_t lda, size_t row_begin, size_t row_end,
             const GemmWeightsView& w, size_t panel_begin, size_t panel_end, float* c,
             size_t ldc);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_GEMM_F32_H_
