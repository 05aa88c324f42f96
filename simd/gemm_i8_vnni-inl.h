// qd8_qc8w_vnni_4x4v (x86 targets with AVX512-VNNI, and AVX3 where the CPU has it): vpdpbusd
// multiplies unsigned by signed bytes, so it reads activations quantized offset by +128
// (ActivationType::kQdu8) and each block's accumulator starts at -128 * sum(weights), which its
// layout stores after the panels. Tiles of up to 4 rows x 4 vectors: each group's weight vectors
// are loaded once for all rows of the tile, the int32 accumulators stay in registers, and the float
// sums over blocks go to an L1 buffer once per block but the last, which ends in C. Defines
// EDGEATTN_I8_VNNI (whether this target has the kernel) for the kernel list (gemm_i8-inl.h,
// which undefines it).

#if defined(EDGEATTN_SIMD_GEMM_I8_VNNI_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_VNNI_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_VNNI_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_VNNI_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "simd/gemm_i8.h"
#include "simd/gemm_i8_panel-inl.h"
#include "simd/gemm_i8_x86_tile-inl.h"
#include "simd/highway_compat.h"
#include "simd/quantize.h"

// Also on Highway's AVX3 target, whose CPUs have VNNI in part (Cascade Lake and Cooper Lake, not
// Skylake-SP): there the kernel list adds it where CpuHasAvx512Vnni.
#if EDGEATTN_TARGET_HAS_AVX512_VNNI || (HWY_ARCH_X86 && HWY_TARGET == HWY_AVX3)
#define EDGEATTN_I8_VNNI 1
#include <immintrin.h>

// Highway 1.0.3's AVX3_DL target string lacks avx512vnni, which every CPU of these targets has
// (and AVX3's, whose kernel runs only where the CPU has it): added here to the whole file (clang
// applies only the outermost target attribute).
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512vnni")
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The 4 activation bytes of row `row`, group g, in every 32-bit lane: a broadcast from memory,
// which is a load alone. Broadcasting a general register takes a vector port (port 5 on Intel),
// one of the two that run vpdpbusd: one such uop per 4 vpdpbusd cost a fifth of the peak.
HWY_INLINE __m512i BroadcastActivationWord(const int8_t* word) {
  return _mm512_broadcastd_epi32(_mm_loadu_si32(word));
}

// kRows rows x 64 features. The 4 x kRows int32 block accumulators and the four weight vectors
// of a group stay in registers; the float sums over blocks live in an L1 buffer, touched once per
// block (the last block's go straight to C: a single-block row, k <= the block, never stores
// them). Holding those in registers too leaves g++ no room for the weights: it re-loads each as
// a memory operand of every vpdpbusd (kRows x the loads). Four rows is the most g++ 12 keeps in
// registers: at 5 or 6 it spills.
template <size_t kRows>
HWY_NOINLINE void PanelRowsVnni(const QuantizedRowsView& a, size_t row0,
                                const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                                size_t ldc) {
  const hn::Full512<int32_t> di;
  const hn::Full512<float> df;
  const size_t N = hn::Lanes(df);
  const I8Layout L = MakeI8Layout(w);
  const int8_t* panel = w.panels + p * L.groups * kGemmI8GroupBytes;
  const size_t col = p * kGemmI8PanelWidth;
  float* c_rows = c + row0 * ldc;
  HWY_ALIGN float sums_f[kRows * kGemmI8PanelWidth];
  PrefetchTileOutput<kRows>(df, w, col, c_rows, ldc);
  for (size_t b = 0; b < L.blocks; ++b) {
    const int32_t* starts = w.block_starts + (p * L.blocks + b) * kGemmI8PanelWidth;
    __m512i acc[kRows][4];
    EDGEATTN_UNROLL_ACCUMULATORS for (size_t r = 0; r < kRows; ++r) {
      EDGEATTN_UNROLL_ACCUMULATORS for (size_t v = 0; v < 4; ++v) acc[r][v] =
          hn::LoadU(di, starts + N * v).raw;
    }
    const size_t g_end = HWY_MIN(L.groups, (b + 1) * L.group_per_block);
    for (size_t g = b * L.group_per_block; g < g_end; ++g) {
      const int8_t* bg = panel + g * kGemmI8GroupBytes;
      const __m512i b0 = _mm512_loadu_si512(bg);
      const __m512i b1 = _mm512_loadu_si512(bg + 64);
      const __m512i b2 = _mm512_loadu_si512(bg + 128);
      const __m512i b3 = _mm512_loadu_si512(bg + 192);
      EDGEATTN_UNROLL_ACCUMULATORS for (size_t r = 0; r < kRows; ++r) {
        const __m512i x = BroadcastActivationWord(a.q + (row0 + r) * L.ldq + 4 * g);
        acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], x, b0);
        acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], x, b1);
        acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], x, b2);
        acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], x, b3);
      }
      PinTileToRegisters(acc);
    }
    // A panel is 4 vectors wide: row r's sums start at sums_f + r * kGemmI8PanelWidth.
    FinishTileBlock(df, acc, a, row0, L.blocks, b, sums_f, w, col, c_rows, ldc);
  }
}

HWY_NOINLINE void PanelVnni(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                            const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                            size_t ldc) {
  size_t row = row_begin;
  for (; row + 4 <= row_end; row += 4) PanelRowsVnni<4>(a, row, w, p, c, ldc);
  if (row_end - row == 3) PanelRowsVnni<3>(a, row, w, p, c, ldc);
  if (row_end - row == 2) PanelRowsVnni<2>(a, row, w, p, c, ldc);
  if (row_end - row == 1) PanelRowsVnni<1>(a, row, w, p, c, ldc);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#else
#define EDGEATTN_I8_VNNI 0
#endif  // EDGEATTN_TARGET_HAS_AVX512_VNNI || AVX3

#endif  // EDGEATTN_SIMD_GEMM_I8_VNNI_INL_H_
