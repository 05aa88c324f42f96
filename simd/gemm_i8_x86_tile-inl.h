// What the x86 int8 kernels with intrinsic accumulator tiles (the VNNI, AVX-VNNI and maddubs
// kernels: kRows rows x 4 vectors of int32) share: the prefetch of a tile's output, their block
// epilogue, and what keeps the tiles (and the int8 KV cache's maddubs score accumulators) in
// registers with g++:
// - EDGEATTN_UNROLL_ACCUMULATORS before every loop over such an array: g++ keeps an array in
//   registers only when its loops are unrolled before its scalar replacement, which -O2 (and so
//   CMake's RelWithDebInfo) leaves undone; each group's products then load and store it.
// - PinToRegister: an empty asm that takes a vector in a register and gives it back. g++ 12
//   otherwise gives each loop iteration's accumulators new registers and copies them back at the
//   loop end (two moves per product, and spills at 4 rows). Without GCC-style asm, the
//   compiler's choice.

#ifndef EDGEATTN_UNROLL_ACCUMULATORS
#define EDGEATTN_UNROLL_ACCUMULATORS _Pragma("GCC unroll 8")
#endif

#if defined(EDGEATTN_SIMD_GEMM_I8_X86_TILE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_X86_TILE_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_X86_TILE_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_X86_TILE_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "simd/gemm_i8_panel-inl.h"
#include "simd/prefetch.h"
#include "simd/quantize.h"

#if HWY_ARCH_X86
HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// "v": any vector register the target can encode (xmm/ymm 0-15, 0-31 with AVX-512).
template <class V>
HWY_INLINE void PinToRegister(V& v) {
#if HWY_COMPILER_GCC
  asm("" : "+v"(v));
#else
  (void)v;
#endif
}

template <size_t kRows, class Raw>
HWY_INLINE void PinTileToRegisters(Raw (&acc)[kRows][4]) {
  EDGEATTN_UNROLL_ACCUMULATORS for (size_t r = 0; r < kRows; ++r) {
    EDGEATTN_UNROLL_ACCUMULATORS for (size_t v = 0; v < 4; ++v) PinToRegister(acc[r][v]);
  }
}

// The lines a tile will store, features [col, min(col + 4N, w.n)) of the kRows rows from c_rows,
// asked for before its first block: whisper's 1500-row projections, whose outputs lie beyond
// L2, took 14-18% less time for it on Zen 4 (the VNNI kernel; docs/performance.md).
template <size_t kRows, class DF>
HWY_INLINE void PrefetchTileOutput(DF df, const GemmI8WeightsView& w, size_t col, float* c_rows,
                                   size_t ldc) {
  PrefetchF32RowsForWriting(c_rows + col, ldc, kRows, HWY_MIN(4 * hn::Lanes(df), w.n - col));
}

// Block b's epilogue: each row's exact int32 sums (acc[r][v]: features [v N, (v + 1) N) of the
// tile) as float times the row's scale of block b, added to sums[(4 r + v) N, ...) past the
// first block (AddBlockSums).
template <size_t kRows, class DF, class Raw>
HWY_INLINE void AddTileBlockSums(DF df, Raw (&acc)[kRows][4], const QuantizedRowsView& a,
                                 size_t row0, size_t blocks, size_t b, float* HWY_RESTRICT sums) {
  const hn::Repartition<int32_t, DF> di;
  const size_t N = hn::Lanes(df);
  EDGEATTN_UNROLL_ACCUMULATORS for (size_t r = 0; r < kRows; ++r) {
    const auto scale = hn::Set(df, a.scales[(row0 + r) * blocks + b]);
    EDGEATTN_UNROLL_ACCUMULATORS for (size_t v = 0; v < 4; ++v) {
      AddBlockSums(df, hn::Vec<decltype(di)>{acc[r][v]}, scale, b == 0, sums + (4 * r + v) * N);
    }
  }
}

// The last block's epilogue and the store in one: each row's sums over the blocks (the earlier
// ones' from `sums`, as AddTileBlockSums left them) dequantized straight into c's rows from
// column col, up to the last feature w.n; the same operations in the same order as
// AddTileBlockSums then StoreDequantizedTile, without the round trip through `sums`.
template <size_t kRows, class DF, class Raw>
HWY_INLINE void StoreTileLastBlock(DF df, Raw (&acc)[kRows][4], const QuantizedRowsView& a,
                                   size_t row0, size_t blocks, const float* HWY_RESTRICT sums,
                                   const GemmI8WeightsView& w, size_t col, float* HWY_RESTRICT c,
                                   size_t ldc) {
  const hn::Repartition<int32_t, DF> di;
  const size_t N = hn::Lanes(df);
  const size_t b = blocks - 1;
  EDGEATTN_UNROLL_ACCUMULATORS for (size_t r = 0; r < kRows; ++r) {
    const auto scale = hn::Set(df, a.scales[(row0 + r) * blocks + b]);
    EDGEATTN_UNROLL_ACCUMULATORS for (size_t v = 0; v < 4; ++v) {
      const size_t at = col + v * N;
      if (at >= w.n) break;
      const auto f = SumsThroughBlock(df, hn::Vec<decltype(di)>{acc[r][v]}, scale, b == 0,
                                      sums + (4 * r + v) * N);
      StoreDequantized(df, f, w, at, w.n - at, c + r * ldc + at);
    }
  }
}

// Either epilogue of block b: the sums so far into `sums` (AddTileBlockSums), or after the last
// block the tile's results into c (StoreTileLastBlock).
template <size_t kRows, class DF, class Raw>
HWY_INLINE void FinishTileBlock(DF df, Raw (&acc)[kRows][4], const QuantizedRowsView& a,
                                size_t row0, size_t blocks, size_t b, float* HWY_RESTRICT sums,
                                const GemmI8WeightsView& w, size_t col, float* HWY_RESTRICT c,
                                size_t ldc) {
  if (b + 1 < blocks) {
    AddTileBlockSums(df, acc, a, row0, blocks, b, sums);
  } else {
    StoreTileLastBlock(df, acc, a, row0, blocks, sums, w, col, c, ldc);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();
#endif  // HWY_ARCH_X86

#endif  // EDGEATTN_SIMD_GEMM_I8_X86_TILE_INL_H_
