// Per-target fp32 projection kernel over packed weight panels.
//
// Blocking: a panel of 64 features x k stays in L2 while every row tile of a block of A streams
// past it; a row tile of A (at most 8 rows x k) and the current tile's slice of the panel are
// what the inner loop touches. Rows are taken in blocks that fit L2 (RowBlock), panels inside
// each block: A is then read from memory once per call and each panel once per block. Measured
// on a Sapphire Rapids core (whisper, 1500 x 384 x 384): A re-read from L3 once per panel cost
// 10-15% of the time; a 32 KiB k-block of the panel held in L1 (C reloaded per k-block) was
// slower (0-8%) than streaming the whole panel from L2, so k is not blocked.

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

// Rows of A per block: at least kMinRowBlock, so that reading each panel from L3 is spread over
// that many rows (B traffic per flop is 2 / rows bytes), and beyond that as many as keep the
// block of A (rows x k floats) within kRowBlockBytes of L2, where every panel re-reads it.
inline constexpr size_t kRowBlockBytes = 512 * 1024;
inline constexpr size_t kMinRowBlock = 192;

HWY_INLINE size_t RowBlock(size_t k) {
  const size_t tile_rows = MaxTileShape().rows;
  const size_t fit = kRowBlockBytes / (HWY_MAX(k, size_t{1}) * sizeof(float));
  const size_t rows = HWY_MAX(kMinRowBlock, fit);
  return rows / tile_rows * tile_rows;
}

// Whether each panel's tiles prefetch the next panel into L2. Measured on AVX-512 (Sapphire
// Rapids, bert's 7 MB of QKV weights, read from L3 on every call): the first row tile of each
// panel otherwise waits on L3 for all of it, 10-15% of the projection's time at 128 rows. Those
// tiles also ask for their own rows of C, to be written: 2-3% off whisper's 1500-row
// projections on Zen 4 (docs/performance.md). Other targets are unmeasured and keep the
// hardware prefetchers alone.
#if HWY_ARCH_X86 && EDGEATTN_TARGET_HAS_AVX512
inline constexpr bool kPrefetchNextPanel = true;
#else
inline constexpr bool kPrefetchNextPanel = false;
#endif

// TB: the panels' element type, float or a half type that the tile widens to float.
template <class TB>
HWY_NOINLINE void RunPanels(const ProjectionInput& a, size_t row_begin, size_t row_end,
                            const PackedProjectionView& w, size_t panel_begin, size_t panel_end,
                            float* HWY_RESTRICT c, size_t ldc) {
  const TB* panels = static_cast<const TB*>(w.packed);
  const size_t panel_size = w.k * kGemmPanelWidth;
  const TileInit mode = w.bias != nullptr ? TileInit::kRowVector : TileInit::kZero;
  const size_t block = RowBlock(w.k);
  const size_t panel_count = GemmPanelCount(w.n);
  for (size_t row = row_begin; row < row_end; row += block) {
    const size_t rows = HWY_MIN(block, row_end - row);
    const bool last_block = row + rows == row_end;
    for (size_t p = panel_begin; p < panel_end; ++p) {
      const size_t col = p * kGemmPanelWidth;
      // The panel read next: the first again for the next row block, else the following one,
      // also past panel_end, as the runtime's items (one panel each, in panel order) read it.
      const size_t next = p + 1 < panel_end || last_block ? p + 1 : panel_begin;
      const float* a_rows = a.f32 + row * a.ld;
      const TB* panel = panels + p * panel_size;
      const size_t cols = HWY_MIN(kGemmPanelWidth, w.n - col);
      const float* bias = w.bias != nullptr ? w.bias + col : nullptr;
      float* c_rows = c + row * ldc + col;
      if constexpr (kPrefetchNextPanel) {
        const bool prefetch = next < panel_count && next != p;
        MatMulTilesPrefetching(
            a_rows, a.ld, rows, panel, kGemmPanelWidth, w.k, cols, mode, bias, c_rows, ldc,
            prefetch ? reinterpret_cast<const uint8_t*>(panels + next * panel_size) : nullptr,
            prefetch ? panel_size * sizeof(TB) : 0);
      } else {
        MatMulTiles(a_rows, a.ld, rows, panel, kGemmPanelWidth, w.k, cols, mode, bias, c_rows, ldc);
      }
    }
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
