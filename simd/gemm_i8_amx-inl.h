// qd8_qc8w_amx_16x64 (x86-64 targets with AVX512-VNNI, on CPUs with AMX-INT8, e.g. Sapphire
// Rapids and later Xeons): the int8 projection on AMX tiles, in the VNNI kernel's layout and
// arithmetic (gemm_i8_vnni-inl.h), so both give the same bits: activations offset to unsigned bytes
// (kQdu8) times signed weights (tdpbusd, as vpdpbusd), each block's int32 sum started at the
// block's -128 x weight-sum offsets, converted and scaled into float once per block.
//
// One tile step multiplies 16 rows x 64 bytes of activations (16 groups of 4 k-values) by a
// weight tile of 16 groups x 16 features: a panel's group (64 features x 4 bytes) holds four such
// tile rows side by side, so each weight tile is read straight from the panels with a stride of
// one group, no repacking. Four accumulator tiles cover a panel's 64 features for up to 16 rows,
// starting from the block starts (a tile load with stride 0 repeats the one row of them). A block
// ends with the tiles stored to an L1 buffer, where AVX-512 adds the block's groups past its last
// whole 16 (blocks that are not a multiple of 64 values, the tail of k) with vpdpbusd, converts
// and adds into the float sums with the row's block scale.
//
// Panels run outermost, so that a panel's weights (48 KiB at k = 768) are read from L1/L2 for
// every 16 rows while the activation rows (16 x 64 bytes per step) stream past. The tiles are
// configured once for whole groups of 16 rows and once more for the rows left, and released at
// the end of each call, so a thread holds tile state only inside the kernel.

#if defined(EDGEATTN_SIMD_GEMM_I8_AMX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_AMX_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_AMX_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_AMX_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "hwy/highway.h"
#include "simd/amx_tiles.h"
#include "simd/cpu_features.h"
#include "simd/gemm_i8-inl.h"
#include "simd/gemm_i8.h"
#include "simd/gemm_i8_panel-inl.h"
#include "simd/gemm_i8_vnni-inl.h"
#include "simd/highway_compat.h"
#include "simd/projection_kernel.h"

// The AMX intrinsics arrived in g++ 11 and clang 12; AMX exists in 64-bit mode only.
#if EDGEATTN_TARGET_HAS_AVX512_VNNI && HWY_ARCH_X86_64 && \
    (HWY_COMPILER_GCC_ACTUAL >= 1100 || HWY_COMPILER_CLANG >= 1200)
#include <immintrin.h>
#define EDGEATTN_I8_AMX 1
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512vnni,amx-tile,amx-int8")
#else
#define EDGEATTN_I8_AMX 0
HWY_BEFORE_NAMESPACE();
#endif
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if EDGEATTN_I8_AMX

inline constexpr size_t kAmxRows = 16;        // activation rows per tile
inline constexpr size_t kAmxTileGroups = 16;  // groups of 4 k-values per tile step (64 bytes)
inline constexpr size_t kAmxTileFeatures = 16;

// The tiles: 0-3 accumulators (rows x 16 features each), 4 activations (rows x 64 bytes), 5 and 6
// weights (16 groups x 16 features), alternating so a load overlaps the previous product.
HWY_INLINE void ConfigureAmxTiles(size_t rows) {
  AmxTileConfig config;
  for (size_t t = 0; t <= 4; ++t) config.Tile(t, rows, 64);
  config.Tile(5, kAmxTileGroups, 64).Tile(6, kAmxTileGroups, 64);
  LoadTileConfig(config);
}

// Per-call buffers in L1: the int32 sums of two blocks as the tiles store them, alternating, and
// the float sums. Block b's tile stores then go to lines block b - 1's scaling did not just
// read: one buffer for both measured 0.84-0.89x on 1500 rows at blocks of 64 (kernels_bench,
// 6 and 10 alternating rounds), though program order alone would allow it.
struct AmxPanelBuffers {
  HWY_ALIGN int32_t block[2][kAmxRows * kGemmI8PanelWidth];
  HWY_ALIGN float sums[kAmxRows * kGemmI8PanelWidth];
};

// Block b's groups: [begin, tiles) in whole tile steps, [tiles, end) left to vpdpbusd.
struct BlockGroups {
  size_t begin, tiles, end;
};

HWY_INLINE BlockGroups GroupsOfBlock(const I8Layout& L, size_t b) {
  const size_t begin = b * L.group_per_block;
  const size_t end = HWY_MIN(L.groups, begin + L.group_per_block);
  return {begin, begin + (end - begin) / kAmxTileGroups * kAmxTileGroups, end};
}

// Accumulators 0-3 = block b's starts + its whole tile steps. The tile unit runs these while
// the caller goes on to scale the previous block.
HWY_INLINE void AccumulateBlock(const int8_t* HWY_RESTRICT rows_q, size_t ldq,
                                const int8_t* HWY_RESTRICT panel, const int32_t* starts,
                                const BlockGroups& groups) {
  EDGEATTN_TILE_LOADD(0, starts, 0);
  EDGEATTN_TILE_LOADD(1, starts + kAmxTileFeatures, 0);
  EDGEATTN_TILE_LOADD(2, starts + 2 * kAmxTileFeatures, 0);
  EDGEATTN_TILE_LOADD(3, starts + 3 * kAmxTileFeatures, 0);
  for (size_t g = groups.begin; g < groups.tiles; g += kAmxTileGroups) {
    const int8_t* weights = panel + g * kGemmI8GroupBytes;
    EDGEATTN_TILE_LOADD(4, rows_q + 4 * g, ldq);
    EDGEATTN_TILE_LOADD(5, weights, kGemmI8GroupBytes);
    _tile_dpbusd(0, 4, 5);
    EDGEATTN_TILE_LOADD(6, weights + 64, kGemmI8GroupBytes);
    _tile_dpbusd(1, 4, 6);
    EDGEATTN_TILE_LOADD(5, weights + 128, kGemmI8GroupBytes);
    _tile_dpbusd(2, 4, 5);
    EDGEATTN_TILE_LOADD(6, weights + 192, kGemmI8GroupBytes);
    _tile_dpbusd(3, 4, 6);
  }
}

HWY_INLINE void StoreAccumulators(int32_t* HWY_RESTRICT block) {
  const size_t stride = kGemmI8PanelWidth * sizeof(int32_t);
  _tile_stored(0, block, stride);
  _tile_stored(1, block + kAmxTileFeatures, stride);
  _tile_stored(2, block + 2 * kAmxTileFeatures, stride);
  _tile_stored(3, block + 3 * kAmxTileFeatures, stride);
}

// Block b's int32 sums of `rows` rows (stored in `block`, plus the groups past its tile steps,
// summed here with vpdpbusd) scaled into `sums`, as the VNNI kernel does in registers.
HWY_INLINE void ScaleBlock(const QuantizedRowsView& a, size_t row0, size_t rows, const I8Layout& L,
                           const int8_t* HWY_RESTRICT panel, size_t b, const int32_t* block,
                           float* HWY_RESTRICT sums) {
  const hn::Full512<int32_t> di;
  const hn::Full512<float> df;
  const size_t N = hn::Lanes(df);
  const BlockGroups groups = GroupsOfBlock(L, b);
  for (size_t r = 0; r < rows; ++r) {
    __m512i acc[4];
    for (size_t v = 0; v < 4; ++v) acc[v] = hn::Load(di, block + r * kGemmI8PanelWidth + N * v).raw;
    for (size_t g = groups.tiles; g < groups.end; ++g) {
      const int8_t* weights = panel + g * kGemmI8GroupBytes;
      const __m512i x = BroadcastActivationWord(a.q + (row0 + r) * L.ldq + 4 * g);
      for (size_t v = 0; v < 4; ++v) {
        acc[v] = _mm512_dpbusd_epi32(acc[v], x, _mm512_loadu_si512(weights + 64 * v));
      }
    }
    const auto scale = hn::Set(df, a.scales[(row0 + r) * L.blocks + b]);
    for (size_t v = 0; v < 4; ++v) {
      AddBlockSums(df, hn::Vec512<int32_t>{acc[v]}, scale, b == 0,
                   sums + r * kGemmI8PanelWidth + N * v);
    }
  }
}

// Rows [row0, row0 + rows) of panel p, rows <= 16, with the tiles configured for `rows`. Block
// b's tile products are issued before block b - 1 is scaled, so that the tile unit and the
// vector units work side by side instead of each waiting on the other.
HWY_NOINLINE void PanelRowsAmx(const QuantizedRowsView& a, size_t row0, size_t rows,
                               const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                               size_t ldc) {
  const hn::Full512<float> df;
  const I8Layout L = MakeI8Layout(w);
  const int8_t* panel = w.panels + p * L.groups * kGemmI8GroupBytes;
  AmxPanelBuffers buf;
  for (size_t b = 0; b <= L.blocks; ++b) {
    if (b < L.blocks) {
      const int32_t* starts = w.block_starts + (p * L.blocks + b) * kGemmI8PanelWidth;
      AccumulateBlock(a.q + row0 * L.ldq, L.ldq, panel, starts, GroupsOfBlock(L, b));
    }
    if (b > 0) ScaleBlock(a, row0, rows, L, panel, b - 1, buf.block[(b - 1) & 1], buf.sums);
    if (b < L.blocks) StoreAccumulators(buf.block[b & 1]);
  }
  StoreDequantizedTile(df, buf.sums, rows, w, p * kGemmI8PanelWidth, c + row0 * ldc, ldc);
}

// ProjectionKernel::run: every panel for the whole groups of 16 rows, then for the rows left,
// then the outliers' products. Blocks of fewer than 64 values hold no whole tile step: those
// run the VNNI kernel's code on the same layout, with the same bits.
HWY_NOINLINE void RunAmx(const ProjectionInput& a, size_t row_begin, size_t row_end,
                         const PackedProjectionView& packed, size_t panel_begin, size_t panel_end,
                         float* HWY_RESTRICT c, size_t ldc) {
  if (packed.block < 4 * kAmxTileGroups) {
    RunI8<&PanelVnni, &Qc8PanelsWithStartsView>(a, row_begin, row_end, packed, panel_begin,
                                                panel_end, c, ldc);
    return;
  }
  const GemmI8WeightsView w = Qc8PanelsWithStartsView(packed);
  const size_t whole_end = row_begin + (row_end - row_begin) / kAmxRows * kAmxRows;
  if (whole_end > row_begin) {
    ConfigureAmxTiles(kAmxRows);
    for (size_t p = panel_begin; p < panel_end; ++p) {
      for (size_t row = row_begin; row < whole_end; row += kAmxRows) {
        PanelRowsAmx(a.qd8, row, kAmxRows, w, p, c, ldc);
      }
    }
  }
  if (whole_end < row_end) {
    ConfigureAmxTiles(row_end - whole_end);
    for (size_t p = panel_begin; p < panel_end; ++p) {
      PanelRowsAmx(a.qd8, whole_end, row_end - whole_end, w, p, c, ldc);
    }
  }
  if (row_end > row_begin) _tile_release();
  if (a.qd8.outlier_count == nullptr) return;
  for (size_t p = panel_begin; p < panel_end; ++p) {
    AddOutliers(a.qd8, row_begin, row_end, w, p, c, ldc);
  }
}

#endif  // EDGEATTN_I8_AMX

// The int8 kernels compiled for this target, best first: the AMX kernel ahead of ListI8Kernels'.
// Plain inline for the same reason as ListI8Kernels.
inline std::vector<const ProjectionKernel*> ListI8KernelsWithAmx() {
  std::vector<const ProjectionKernel*> kernels;
#if EDGEATTN_I8_AMX
  static const ProjectionKernel kAmx = {
      "qd8_qc8w_amx_16x64",     ActivationType::kQdu8, WeightType::kQc8,
      &CpuRunsAmxInt8,          kGemmI8PanelWidth,     &Qc8PanelsWithStartsBytes,
      &PackQc8PanelsWithStarts, &UnpackQc8Panels,      &RunAmx};
  kernels.push_back(&kAmx);
#endif
  for (const ProjectionKernel* kernel : ListI8Kernels()) kernels.push_back(kernel);
  return kernels;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_I8_AMX

#endif  // EDGEATTN_SIMD_GEMM_I8_AMX_INL_H_
