// qd8_qc8w_maddubs_2x4v (Highway's AVX2 and AVX3 targets: the x86 CPUs with neither AVX512-VNNI
// nor AVX-VNNI, e.g. AMD Zen 2 and 3, Intel's client cores before Ice Lake and Alder Lake,
// Skylake-SP Xeons). vpmaddubsw multiplies unsigned by signed bytes and adds adjacent products
// into int16 with saturation; it is exact here because one factor never exceeds 127 in
// magnitude. It multiplies the weights' magnitudes (vpabsb: up to 128, as unsigned bytes) by the
// activations carrying the weights' signs (vpsignb: x sign(w), which cannot overflow, since
// QuantizeRowsI8 stores |x| <= 127; a non-finite block may hold -128, but its NaN scale makes
// the row NaN on every kernel), so a pair sums to at most 2 x 128 x 127 = 32512 < 2^15;
// vpmaddwd by ones then adds a feature's two pairs into int32. Per 32 products: vpsignb,
// vpmaddubsw, vpmaddwd and vpaddd, plus a vpabsb per weight vector for the tile's rows, against
// the portable kernel's widening of every weight byte to int16. Tiles of 2 rows x 4 vectors (32
// features) of a panel slice (PanelI8Tiles): 8 accumulators, 2 broadcast activation words, a
// weight vector, its magnitudes, the ones and two products in flight, 15 of the 16 registers of
// AVX2 (AVX3 runs the same 256-bit code). Defines EDGEATTN_I8_MADDUBS (whether this target has
// the kernel) for the kernel list (gemm_i8-inl.h, which undefines it).

#if defined(EDGEATTN_SIMD_GEMM_I8_MADDUBS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_MADDUBS_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_MADDUBS_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_MADDUBS_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "simd/gemm_i8.h"
#include "simd/gemm_i8_panel-inl.h"
#include "simd/gemm_i8_x86_tile-inl.h"
#include "simd/quantize.h"

#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3)
#define EDGEATTN_I8_MADDUBS 1
#include <immintrin.h>

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// acc += the exact int32 sums, per 4-byte lane, of w's bytes times x's (see the file comment):
// `magnitudes` is |w|.
HWY_INLINE __m256i AddSignedProducts(__m256i acc, __m256i w, __m256i magnitudes, __m256i x) {
  const __m256i pairs = _mm256_maddubs_epi16(magnitudes, _mm256_sign_epi8(x, w));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

// kRows rows x 32 features from `weights` (a slice of a panel: 32 features' 4-byte lanes of
// each 256-byte group), dequantized into c's rows from c_rows, features col on up to w.n: the
// sum over blocks of x_scale[row][b] x (block b's exact int32 dot product), each block added with
// one multiply-add, as the other kernels do (sums: the earlier blocks' running sums).
template <size_t kRows>
HWY_INLINE void DotTileMaddubs(const QuantizedRowsView& a, const I8Layout& L,
                               const int8_t* HWY_RESTRICT weights, size_t row0,
                               float* HWY_RESTRICT sums, const GemmI8WeightsView& w, size_t col,
                               float* HWY_RESTRICT c_rows, size_t ldc) {
  const hn::Full256<float> df;
  PrefetchTileOutput<kRows>(df, w, col, c_rows, ldc);
  for (size_t b = 0; b < L.blocks; ++b) {
    __m256i acc[kRows][4];
    EDGEATTN_UNROLL_ACCUMULATORS for (size_t r = 0; r < kRows; ++r) {
      EDGEATTN_UNROLL_ACCUMULATORS for (size_t v = 0; v < 4; ++v) acc[r][v] =
          _mm256_setzero_si256();
    }
    const size_t g_end = HWY_MIN(L.groups, (b + 1) * L.group_per_block);
    for (size_t g = b * L.group_per_block; g < g_end; ++g) {
      const int8_t* wg = weights + g * kGemmI8GroupBytes;
      __m256i x[kRows];
      EDGEATTN_UNROLL_ACCUMULATORS for (size_t r = 0; r < kRows; ++r) {
        // A broadcast from memory is a load alone, no shuffle port.
        x[r] = _mm256_set1_epi32(static_cast<int32_t>(LoadWord(a.q + (row0 + r) * L.ldq + 4 * g)));
      }
      EDGEATTN_UNROLL_ACCUMULATORS for (size_t v = 0; v < 4; ++v) {
        const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + 32 * v));
        const __m256i magnitudes = _mm256_abs_epi8(wv);
        EDGEATTN_UNROLL_ACCUMULATORS for (size_t r = 0; r < kRows; ++r) {
          acc[r][v] = AddSignedProducts(acc[r][v], wv, magnitudes, x[r]);
        }
      }
      PinTileToRegisters(acc);
    }
    FinishTileBlock(df, acc, a, row0, L.blocks, b, sums, w, col, c_rows, ldc);
  }
}

HWY_NOINLINE void PanelMaddubs(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                               const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                               size_t ldc) {
  const I8Layout L = MakeI8Layout(w);
  PanelI8Tiles<2, I8TileStore::kByTile>(
      hn::Full256<float>(), L, row_begin, row_end, w, p, c, ldc,
      [&](auto rows, const int8_t* weights, size_t row, float* sums, size_t col, float* c_rows)
          HWY_ATTR {
            DotTileMaddubs<decltype(rows)::value>(a, L, weights, row, sums, w, col, c_rows, ldc);
          });
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#else
#define EDGEATTN_I8_MADDUBS 0
#endif  // HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3

#endif  // EDGEATTN_SIMD_GEMM_I8_MADDUBS_INL_H_
