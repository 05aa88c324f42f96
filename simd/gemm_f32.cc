#include "simd/gemm_f32.h"

#include <string.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/gemm_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "simd/gemm_f32-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(GemmF32Panels);

size_t PackedGemmWeightsSize(size_t n, size_t k) {
  return GemmPanelCount(n) * kGemmPanelWidth * k;
}

void PackGemmWeights(const float* w, size_t ldw, size_t n, size_t k, float* packed) {
  memset(packed, 0, PackedGemmWeightsSize(n, k) * sizeof(float));
  for (size_t row = 0; row < n; ++row) {
    float* panel = packed + (row / kGemmPanelWidth) * k * kGemmPanelWidth;
    const size_t lane = row % kGemmPanelWidth;
    for (size_t i = 0; i < k; ++i) panel[i * kGemmPanelWidth + lane] = w[row * ldw + i];
  }
}

void GemmF32(const float* a, size_t lda, size_t row_begin, size_t row_end,
             const GemmWeightsView& w, size_t panel_begin, size_t panel_end, float* c,
             size_t ldc) {
  HWY_DYNAMIC_DISPATCH(GemmF32Panels)(a, lda, row_begin, row_end, w, panel_begin, panel_end, c,
                                       ldc);
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
