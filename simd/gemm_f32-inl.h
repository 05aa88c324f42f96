// Per-target projection GEMM driver over packed weight panels.
//
// Blocking: a panel of 64 features x k (k = d_model <= 1024: at most 256 KiB) stays in L2 while
// every row tile of A streams past it; a row tile of A (8 rows x k: at most 32 KiB) and the
// current tile's slice of the panel are what the inner loop touches, which L1 (32-48 KiB on the
// cores we target) holds. The panel loop is outermost so that each panel is read from memory once
// per call; A (L x d_model) is re-read from L2/L3 once per panel.

#if defined(EDGEATTN_SIMD_GEMM_F32_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_F32_INL_H_
#undef EDGEATTN_SIMD_GEMM_F32_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_F32_INL_H_
#endif

#include "simd/gemm_f32.h"
#include "simd/tile_f32-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

HWY_INLINE void GemmF32Panels(const float* HWY_RESTRICT a, size_t lda, size_t row_begin,
                              size_t row_end, const GemmWeightsView& w, size_t panel_begin,
                              size_t panel_end, float* HWY_RESTRICT c, size_t ldc) {
  if (row_end <= row_begin) return;
  const size_t rows = row_end - row_begin;
  for (size_t p = panel_begin; p < panel_end; ++p) {
    const size_t col = p * kGemmPanelWidth;
    const size_t cols = HWY_MIN(kGemmPanelWidth, w.n - col);
    const float* panel = w.panels + p * w.k * kGemmPanelWidth;
    const TileInit mode = w.bias != nullptr ? TileInit::kRowVector : TileInit::kZero;
    MatMulTiles(a + row_begin * lda, lda, rows, panel, kGemmPanelWidth, w.k, cols, mode,
                w.bias != nullptr ? w.bias + col : nullptr, c + row_begin * ldc + col, ldc);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_GEMM_F32_INL_H_
