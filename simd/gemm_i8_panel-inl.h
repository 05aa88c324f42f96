// What the int8 projection kernels (gemm_i8-inl.h and the per-instruction files it includes)
// share: the panel layout's sizes, the dequantized store of the float sums, and the driver of the
// row-tiled dot-product kernels (NEON, SVE, AVX-VNNI, maddubs).
//
// Panels hold 64 features x 4 k-values = 256 bytes per group of 4 k. Every kernel sums each
// block's products exactly in int32, then scales them into float in the same order, so every
// kernel gives the same bits.

#if defined(EDGEATTN_SIMD_GEMM_I8_PANEL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_PANEL_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_PANEL_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_PANEL_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "hwy/highway.h"
#include "simd/gemm_i8.h"
#include "simd/partial_vector-inl.h"
#include "simd/quantize.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct I8Layout {
  size_t ldq;     // bytes per quantized activation row
  size_t groups;  // groups of 4 k-values
  size_t blocks;
  size_t group_per_block;
};

HWY_INLINE I8Layout MakeI8Layout(const GemmI8WeightsView& w) {
  const size_t ldq = QuantizedRowStride(w.k);
  return {ldq, ldq / 4, QuantBlockCount(w.k, w.block), w.block / 4};
}

HWY_INLINE uint32_t LoadWord(const int8_t* p) {
  uint32_t word;
  memcpy(&word, p, 4);
  return word;
}

// c[col, col + N) = f * scale + bias, storing at most `cols` values.
template <class DF, class VF>
HWY_INLINE void StoreDequantized(DF df, VF f, const GemmI8WeightsView& w, size_t col, size_t cols,
                                 float* HWY_RESTRICT c) {
  const auto bias = w.bias != nullptr ? hn::LoadU(df, w.bias + col) : hn::Zero(df);
  StorePartial(df, hn::MulAdd(f, hn::LoadU(df, w.scales + col), bias), c, cols);
}

// A block's int32 sums as float times the row's block scale, plus the earlier blocks' f[0, N)
// past the first block: the x86 kernels' order, which the AMX kernel keeps to give the VNNI
// kernel's bits.
template <class DF, class VI>
HWY_INLINE hn::Vec<DF> SumsThroughBlock(DF df, VI block_sums, hn::Vec<DF> scale, bool first,
                                        const float* HWY_RESTRICT f) {
  const auto sums = hn::ConvertTo(df, block_sums);
  return first ? hn::Mul(sums, scale) : hn::MulAdd(sums, scale, hn::LoadU(df, f));
}

// f[0, N) = SumsThroughBlock: the sums so far, for the next block.
template <class DF, class VI>
HWY_INLINE void AddBlockSums(DF df, VI block_sums, hn::Vec<DF> scale, bool first,
                             float* HWY_RESTRICT f) {
  hn::StoreU(SumsThroughBlock(df, block_sums, scale, first, f), df, f);
}

// A tile's float sums (`rows` rows of 4 vectors, for the features from col on) stored
// dequantized into those columns of c's rows, up to the last feature w.n.
template <class DF>
HWY_INLINE void StoreDequantizedTile(DF df, const float* HWY_RESTRICT sums, size_t rows,
                                     const GemmI8WeightsView& w, size_t col, float* HWY_RESTRICT c,
                                     size_t ldc) {
  const size_t N = hn::Lanes(df);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t v = 0; v < 4 && col + v * N < w.n; ++v) {
      const size_t at = col + v * N;
      StoreDequantized(df, hn::LoadU(df, sums + (4 * r + v) * N), w, at, w.n - at,
                       c + r * ldc + at);
    }
  }
}

// tile(std::integral_constant<size_t, rows>(), args...) for rows in [1, kRows].
template <size_t kRows, class Tile, class... Args>
HWY_INLINE void CallTileRows(size_t rows, const Tile& tile, Args... args) {
  if (rows == kRows) return tile(std::integral_constant<size_t, kRows>(), args...);
  if constexpr (kRows > 1) CallTileRows<kRows - 1>(rows, tile, args...);
}

// Who stores a tile's results in PanelI8Tiles: the driver, from the float sums the tile leaves,
// or the tile itself (the AVX-VNNI and maddubs tiles, whose last block goes straight to c).
enum class I8TileStore { kByDriver, kByTile };

// Runs a dot-product tile kernel over panel p: slices of 4 vectors (4N features: 4N x 4 weight
// bytes of each 256-byte group), each slice over tiles of up to kMaxRows rows, so that a slice's
// weights (4N x k bytes) stay in L1 across the row tiles. The tile is called with rows as a
// std::integral_constant. kByDriver: tile(rows, weights, row, sums) leaves the tile's float sums
// (rows x 4N) in sums, stored here with the weight scales and the bias. kByTile: tile(rows,
// weights, row, sums, col, c_rows) stores them so itself, into the features from col on, up to
// the last (w.n), of c's rows from c_rows (ldc apart), with sums as its scratch.
template <size_t kMaxRows, I8TileStore kStore = I8TileStore::kByDriver, class DF, class Tile>
HWY_INLINE void PanelI8Tiles(DF df, const I8Layout& L, size_t row_begin, size_t row_end,
                             const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                             size_t ldc, const Tile& tile) {
  const size_t N = hn::Lanes(df);
  const int8_t* panel = w.panels + p * L.groups * kGemmI8GroupBytes;
  const size_t col0 = p * kGemmI8PanelWidth;
  HWY_ALIGN float sums[kMaxRows * kGemmI8PanelWidth];
  for (size_t slice = 0; slice * 4 * N < kGemmI8PanelWidth && col0 + slice * 4 * N < w.n;
       ++slice) {
    const int8_t* weights = panel + 16 * N * slice;
    const size_t col = col0 + slice * 4 * N;
    for (size_t row = row_begin; row < row_end; row += kMaxRows) {
      const size_t rows = HWY_MIN(kMaxRows, row_end - row);
      float* c_rows = c + row * ldc;
      if constexpr (kStore == I8TileStore::kByTile) {
        CallTileRows<kMaxRows>(rows, tile, weights, row, sums, col, c_rows);
      } else {
        CallTileRows<kMaxRows>(rows, tile, weights, row, sums);
        StoreDequantizedTile(df, sums, rows, w, col, c_rows, ldc);
      }
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_GEMM_I8_PANEL_INL_H_
