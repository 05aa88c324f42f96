// f32_bf16w_amx_16x64 (x86-64 AVX-512 targets, on CPUs with AMX-BF16, e.g. Sapphire Rapids and
// later Xeons): the bf16 projection on AMX tiles, under the dot-product kernel's contract
// (simd/gemm_half.h: activations rounded to bf16, nearest even, subnormals read as zero; fp32
// sums) and in its layout: a pair row of a panel (64 features x 2 k-values) holds four 16-feature
// rows of a tdpbf16ps weight tile side by side, so a weight tile (16 pairs x 16 features) is read
// straight from the panels with a stride of one pair row.
//
// Per 16 rows x one panel: four accumulator tiles start at the bias (a tile load with stride 0
// repeats its one row) and take tdpbf16ps over all of k, so there is no epilogue but the store.
// The activation rows are rounded to bf16 per chunk of kBf16DotChunk values into one of two
// buffers, alternately, so that the next chunk's rounding runs while the tile unit works on the
// last. A k that is not a multiple of 32 ends with a narrower tile step (tiles 6 and 7,
// configured per call), so nothing past the panel or the rounded values is read.

#if defined(EDGEATTN_SIMD_GEMM_BF16_AMX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_BF16_AMX_INL_H_
#undef EDGEATTN_SIMD_GEMM_BF16_AMX_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_BF16_AMX_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "simd/amx_tiles.h"
#include "simd/cpu_features.h"
#include "simd/gemm_bf16_dot-inl.h"
#include "simd/gemm_f32.h"
#include "simd/highway_compat.h"
#include "simd/panel_layout.h"
#include "simd/projection_kernel.h"

// The AMX intrinsics arrived in g++ 11 and clang 12; AMX exists in 64-bit mode only.
#if EDGEATTN_TARGET_HAS_AVX512 && HWY_ARCH_X86_64 && \
    (HWY_COMPILER_GCC_ACTUAL >= 1100 || HWY_COMPILER_CLANG >= 1200)
#include <immintrin.h>
#define EDGEATTN_BF16_AMX 1
#else
#define EDGEATTN_BF16_AMX 0
#endif

#if EDGEATTN_BF16_AMX
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512bf16,amx-tile,amx-bf16")
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

inline constexpr size_t kBf16AmxRows = 16;
inline constexpr size_t kBf16AmxStepPairs = 16;  // k-pairs per tile step (32 k-values)
inline constexpr size_t kBf16AmxTileFeatures = 16;

// Tiles: 0-3 accumulators (rows x 16 floats), 4 activations (rows x 32 bf16), 5 weights (16
// pairs x 16 features); for k's last partial step 6 activations and 7 weights, `tail_pairs`
// wide (no rows when k is a multiple of 32).
HWY_INLINE void ConfigureBf16AmxTiles(size_t rows, size_t tail_pairs) {
  AmxTileConfig config;
  for (size_t t = 0; t <= 4; ++t) config.Tile(t, rows, 64);
  config.Tile(5, kBf16AmxStepPairs, 64);
  config.Tile(6, tail_pairs == 0 ? 0 : rows, 4 * tail_pairs).Tile(7, tail_pairs, 64);
  LoadTileConfig(config);
}

// One pair row of a panel: 64 features x 2 values = 256 bytes.
inline constexpr size_t kBf16PairRowBytes = kBf16PairRowElements * sizeof(uint16_t);

// Accumulators 0-3 += the rounded activations (pairs [0, pairs) of `rounded`, a row every
// kBf16DotChunk values) x the panel's pair rows from `weights` on.
HWY_INLINE void AccumulateChunk(const uint16_t* HWY_RESTRICT rounded, const uint8_t* weights,
                                size_t pairs) {
  const size_t lda = kBf16DotChunk * sizeof(uint16_t);
  size_t q = 0;
  for (; q + kBf16AmxStepPairs <= pairs; q += kBf16AmxStepPairs) {
    const uint8_t* w = weights + q * kBf16PairRowBytes;
    EDGEATTN_TILE_LOADD(4, rounded + 2 * q, lda);
    EDGEATTN_TILE_LOADD(5, w, kBf16PairRowBytes);
    _tile_dpbf16ps(0, 4, 5);
    EDGEATTN_TILE_LOADD(5, w + 64, kBf16PairRowBytes);
    _tile_dpbf16ps(1, 4, 5);
    EDGEATTN_TILE_LOADD(5, w + 128, kBf16PairRowBytes);
    _tile_dpbf16ps(2, 4, 5);
    EDGEATTN_TILE_LOADD(5, w + 192, kBf16PairRowBytes);
    _tile_dpbf16ps(3, 4, 5);
  }
  if (q == pairs) return;
  const uint8_t* w = weights + q * kBf16PairRowBytes;
  EDGEATTN_TILE_LOADD(6, rounded + 2 * q, lda);
  EDGEATTN_TILE_LOADD(7, w, kBf16PairRowBytes);
  _tile_dpbf16ps(0, 6, 7);
  EDGEATTN_TILE_LOADD(7, w + 64, kBf16PairRowBytes);
  _tile_dpbf16ps(1, 6, 7);
  EDGEATTN_TILE_LOADD(7, w + 128, kBf16PairRowBytes);
  _tile_dpbf16ps(2, 6, 7);
  EDGEATTN_TILE_LOADD(7, w + 192, kBf16PairRowBytes);
  _tile_dpbf16ps(3, 6, 7);
}

// C rows [row0, row0 + rows) x the `cols` columns of one panel from col (bias: the panel's 64,
// padded, or null), rows <= 16 with the tiles configured for them.
HWY_NOINLINE void Bf16AmxPanelRows(const float* HWY_RESTRICT a, size_t lda, size_t rows,
                                   const uint16_t* HWY_RESTRICT panel, size_t k,
                                   const float* HWY_RESTRICT bias, float* HWY_RESTRICT c,
                                   size_t ldc, size_t cols) {
  if (bias != nullptr) {
    EDGEATTN_TILE_LOADD(0, bias, 0);
    EDGEATTN_TILE_LOADD(1, bias + kBf16AmxTileFeatures, 0);
    EDGEATTN_TILE_LOADD(2, bias + 2 * kBf16AmxTileFeatures, 0);
    EDGEATTN_TILE_LOADD(3, bias + 3 * kBf16AmxTileFeatures, 0);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  HWY_ALIGN uint16_t rounded[2][kBf16AmxRows][kBf16DotChunk];
  for (size_t k0 = 0, chunk = 0; k0 < k; k0 += kBf16DotChunk, ++chunk) {
    const size_t count = HWY_MIN(kBf16DotChunk, k - k0);
    RoundRowsToBf16(a + k0, lda, rows, count, rounded[chunk & 1]);
    AccumulateChunk(&rounded[chunk & 1][0][0],
                    reinterpret_cast<const uint8_t*>(panel + (k0 / 2) * kBf16PairRowElements),
                    Bf16PairRows(count));
  }
  const size_t stride = (cols == kGemmPanelWidth ? ldc : kGemmPanelWidth) * sizeof(float);
  HWY_ALIGN float edge[kBf16AmxRows * kGemmPanelWidth];
  float* out = cols == kGemmPanelWidth ? c : edge;
  _tile_stored(0, out, stride);
  _tile_stored(1, out + kBf16AmxTileFeatures, stride);
  _tile_stored(2, out + 2 * kBf16AmxTileFeatures, stride);
  _tile_stored(3, out + 3 * kBf16AmxTileFeatures, stride);
  if (out == c) return;
  // A panel past n: only its first `cols` columns are C's (the next may be another thread's).
  const __mmask16 all = 0xFFFF;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t v = 0; 16 * v < cols; ++v) {
      const size_t rest = cols - 16 * v;
      const __mmask16 mask = rest >= 16 ? all : static_cast<__mmask16>((1u << rest) - 1);
      _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask,
                            _mm512_load_ps(edge + r * kGemmPanelWidth + 16 * v));
    }
  }
}

// Rows [row_begin, row_end) (a multiple of `rows`) x panels, the tiles configured for `rows`.
HWY_INLINE void Bf16AmxRows(const ProjectionInput& a, size_t row_begin, size_t row_end, size_t rows,
                            const PackedProjectionView& w, size_t panel_begin, size_t panel_end,
                            float* HWY_RESTRICT c, size_t ldc) {
  const uint16_t* panels = static_cast<const uint16_t*>(w.packed);
  const size_t panel_elements = Bf16PairRows(w.k) * kBf16PairRowElements;
  for (size_t p = panel_begin; p < panel_end; ++p) {
    const size_t col = p * kGemmPanelWidth;
    const size_t cols = HWY_MIN(kGemmPanelWidth, w.n - col);
    const float* bias = w.bias != nullptr ? w.bias + col : nullptr;
    for (size_t row = row_begin; row < row_end; row += rows) {
      Bf16AmxPanelRows(a.f32 + row * a.ld, a.ld, rows, panels + p * panel_elements, w.k, bias,
                       c + row * ldc + col, ldc, cols);
    }
  }
}

// ProjectionKernel::run: the whole groups of 16 rows, then the rows left.
HWY_NOINLINE void RunBf16AmxPanels(const ProjectionInput& a, size_t row_begin, size_t row_end,
                                   const PackedProjectionView& w, size_t panel_begin,
                                   size_t panel_end, float* HWY_RESTRICT c, size_t ldc) {
  if (row_end <= row_begin || panel_end <= panel_begin) return;
  const size_t tail_pairs = Bf16PairRows(w.k % (2 * kBf16AmxStepPairs));
  const size_t whole_end = row_begin + (row_end - row_begin) / kBf16AmxRows * kBf16AmxRows;
  if (whole_end > row_begin) {
    ConfigureBf16AmxTiles(kBf16AmxRows, tail_pairs);
    Bf16AmxRows(a, row_begin, whole_end, kBf16AmxRows, w, panel_begin, panel_end, c, ldc);
  }
  if (whole_end < row_end) {
    ConfigureBf16AmxTiles(row_end - whole_end, tail_pairs);
    Bf16AmxRows(a, whole_end, row_end, row_end - whole_end, w, panel_begin, panel_end, c, ldc);
  }
  _tile_release();
}

// Not inlined: its callers lack the AMX attributes.
HWY_NOINLINE const ProjectionKernel& Bf16AmxKernel() {
  static const ProjectionKernel kKernel = {
      "f32_bf16w_amx_16x64", ActivationType::kF32,  WeightType::kBf16,
      &CpuRunsAmxBf16,       kGemmPanelWidth,       &Bf16PairPanelBytes,
      &PackBf16PairPanels,   &UnpackBf16PairPanels, &RunBf16AmxPanels};
  return kKernel;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_POP_ATTRIBUTES
#endif  // EDGEATTN_BF16_AMX

#endif  // EDGEATTN_SIMD_GEMM_BF16_AMX_INL_H_
