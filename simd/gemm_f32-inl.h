// Per-target fp32 projection kernel over packed weight panels.
//
// Blocking: a panel of 64 features x k stays in L2 while every row tile of A streams past it; a
// row tile of A (at most 8 rows x k) and the current tile's slice of the panel are what the inner
// loop touches, which L1 (32-48 KiB on the cores we target) holds for k up to ~1024. The panel
// loop is outermost so that each panel is read from memory once per call; A (L x d_model) is
// re-read from L2/L3 once per panel.

#if defined(EDGEATTN_SIMD_GEMM_F32_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_F32_INL_H_
#undef EDGEATTN_SIMD_GEMM_F32_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_F32_INL_H_
#endif

#include <vector>

#include "simd/gemm_f32.h"
#include "simd/projection_kernel.h"
#include "simd/tile_f32-inl.h"

namespace edgeattn {
namespace simd {
// The target-independent parts of the fp32 kernels' contract (gemm_f32.cc).
size_t F32PanelBytes(size_t n, size_t k, size_t block);
void PackF32Panels(const void* w, size_t n, size_t k, size_t block, void* packed);
void UnpackF32Panels(const void* packed, size_t n, size_t k, size_t block, void* w);
}  // namespace simd
}  // namespace edgeattn

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

// TB: the panels' element type, float or a half type that the tile widens to float.
template <class TB>
HWY_NOINLINE void RunPanels(const ProjectionInput& a, size_t row_begin, size_t row_end,
                            const PackedProjectionView& w, size_t panel_begin, size_t panel_end,
                            float* HWY_RESTRICT c, size_t ldc) {
  if (row_end <= row_begin) return;
  const TB* panels = static_cast<const TB*>(w.packed);
  const TileInit mode = w.bias != nullptr ? TileInit::kRowVector : TileInit::kZero;
  for (size_t p = panel_begin; p < panel_end; ++p) {
    const size_t col = p * kGemmPanelWidth;
    MatMulTiles(a.f32 + row_begin * a.ld, a.ld, row_end - row_begin,
                panels + p * w.k * kGemmPanelWidth, kGemmPanelWidth, w.k,
                HWY_MIN(kGemmPanelWidth, w.n - col), mode,
                w.bias != nullptr ? w.bias + col : nullptr, c + row_begin * ldc + col, ldc);
  }
}

// Exported: plain inline, as a one-target build (EDGEATTN_TARGETS=phone) calls it directly
// from code without this target's attributes, where always_inline cannot apply.
inline std::vector<const ProjectionKernel*> ListF32Kernels() {
  static const ProjectionKernel kTiles = {
      F32KernelName(),   ActivationType::kF32, WeightType::kF32, &RunsWhereItsTargetRuns,
      kGemmPanelWidth,   &F32PanelBytes,       &PackF32Panels,   &UnpackF32Panels,
      &RunPanels<float>};
  return {&kTiles};
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_GEMM_F32_INL_H_
