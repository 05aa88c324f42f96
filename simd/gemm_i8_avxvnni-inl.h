// qd8_qc8w_avxvnni_3x4v (Highway's AVX2 target, where the CPU has AVX-VNNI: Intel's client and
// Atom cores from Alder Lake and Gracemont on, which have no AVX-512): the VEX-encoded vpdpbusd on
// 256-bit vectors, with the VNNI kernel's contract and layout (gemm_i8_vnni-inl.h): activations
// offset by +128 (ActivationType::kQdu8), each block's accumulator starting at -128 x the
// block's weight sums stored after the panels. Tiles of up to 3 rows x 4 vectors (32 features)
// of a panel slice (PanelI8Tiles): 12 accumulators, a broadcast activation word and three of a
// group's weight vectors fill the 16 vector registers, g++ reading the fourth as a memory operand
// of each row's vpdpbusd. At 2 rows g++ read every weight from memory (bert 1.2x slower), at 4 it
// spilled accumulators (1.5x slower). Defines EDGEATTN_I8_AVX_VNNI (whether this target has the
// kernel) for the kernel list (gemm_i8-inl.h, which undefines it).

#if defined(EDGEATTN_SIMD_GEMM_I8_AVXVNNI_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_AVXVNNI_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_AVXVNNI_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_AVXVNNI_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "simd/gemm_i8.h"
#include "simd/gemm_i8_panel-inl.h"
#include "simd/gemm_i8_x86_tile-inl.h"
#include "simd/quantize.h"

// g++ from 11 and clang from 12 have the AVX-VNNI intrinsics; the AVX-512 targets have their
// own kernel.
#if HWY_TARGET == HWY_AVX2 && HWY_ARCH_X86_64 && \
    (HWY_COMPILER_GCC_ACTUAL >= 1100 || HWY_COMPILER_CLANG >= 1200)
#define EDGEATTN_I8_AVX_VNNI 1
#include <immintrin.h>

#include "simd/cpu_features.h"

// No Highway target includes AVX-VNNI: added to the AVX2 target's attributes for this file (the
// kernel runs only where CpuHasAvxVnni says the CPU has it).
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avxvnni")
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// kRows rows x 32 features from `weights` (a slice of a panel: 32 features' 4-byte lanes of
// each 256-byte group), dequantized into c's rows from c_rows, features col on up to w.n: the
// sum over blocks of x_scale[row][b] x (block b's exact int32 dot product), each block added with
// one multiply-add, as the VNNI kernel does (sums: the earlier blocks' running sums).
template <size_t kRows>
HWY_INLINE void DotTileAvxVnni(const QuantizedRowsView& a, const I8Layout& L, const int32_t* starts,
                               const int8_t* HWY_RESTRICT weights, size_t row0,
                               float* HWY_RESTRICT sums, const GemmI8WeightsView& w, size_t col,
                               float* HWY_RESTRICT c_rows, size_t ldc) {
  const hn::Full256<int32_t> di;
  const hn::Full256<float> df;
  const size_t N = hn::Lanes(df);
  PrefetchTileOutput<kRows>(df, w, col, c_rows, ldc);
  for (size_t b = 0; b < L.blocks; ++b) {
    const int32_t* block_starts = starts + b * kGemmI8PanelWidth;
    __m256i acc[kRows][4];
    EDGEATTN_UNROLL_ACCUMULATORS for (size_t r = 0; r < kRows; ++r) {
      EDGEATTN_UNROLL_ACCUMULATORS for (size_t v = 0; v < 4; ++v) acc[r][v] =
          hn::LoadU(di, block_starts + N * v).raw;
    }
    const size_t g_end = HWY_MIN(L.groups, (b + 1) * L.group_per_block);
    for (size_t g = b * L.group_per_block; g < g_end; ++g) {
      const int8_t* wg = weights + g * kGemmI8GroupBytes;
      const __m256i wv[4] = {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg)),
                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + 32)),
                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + 64)),
                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + 96))};
      EDGEATTN_UNROLL_ACCUMULATORS for (size_t r = 0; r < kRows; ++r) {
        // A broadcast from memory is a load alone, no shuffle port.
        const __m256i x =
            _mm256_set1_epi32(static_cast<int32_t>(LoadWord(a.q + (row0 + r) * L.ldq + 4 * g)));
        EDGEATTN_UNROLL_ACCUMULATORS for (size_t v = 0; v < 4; ++v) {
          acc[r][v] = _mm256_dpbusd_avx_epi32(acc[r][v], x, wv[v]);
        }
      }
      PinTileToRegisters(acc);
    }
    FinishTileBlock(df, acc, a, row0, L.blocks, b, sums, w, col, c_rows, ldc);
  }
}

HWY_NOINLINE void PanelAvxVnni(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                               const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                               size_t ldc) {
  const I8Layout L = MakeI8Layout(w);
  const int8_t* panel = w.panels + p * L.groups * kGemmI8GroupBytes;
  const int32_t* starts = w.block_starts + p * L.blocks * kGemmI8PanelWidth;
  // No HWY_ATTR: clang would take its target string, without avxvnni, over the pushed one and
  // refuse to inline DotTileAvxVnni into the lambda.
  const auto tile = [&](auto rows, const int8_t* weights, size_t row, float* sums, size_t col,
                        float* c_rows) {
    // The slice's first feature in the panel: its bytes start 4 per feature into each group.
    const size_t feature = static_cast<size_t>(weights - panel) / 4;
    DotTileAvxVnni<decltype(rows)::value>(a, L, starts + feature, weights, row, sums, w, col,
                                          c_rows, ldc);
  };
  PanelI8Tiles<3, I8TileStore::kByTile>(hn::Full256<float>(), L, row_begin, row_end, w, p, c, ldc,
                                        tile);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#else
#define EDGEATTN_I8_AVX_VNNI 0
#endif  // HWY_TARGET == HWY_AVX2

#endif  // EDGEATTN_SIMD_GEMM_I8_AVXVNNI_INL_H_
