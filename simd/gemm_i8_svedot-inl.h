// qd8_qc8w_svedot_4x4v (SVE targets): svdot, signed by signed, on tiles of up to 4 rows x 4
// vectors driven by PanelI8Tiles (gemm_i8_panel-inl.h). Defines EDGEATTN_I8_SVE (whether this
// target has the kernel) for the kernel list (gemm_i8-inl.h, which undefines it).

#if defined(EDGEATTN_SIMD_GEMM_I8_SVEDOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_SVEDOT_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_SVEDOT_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_SVEDOT_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "simd/gemm_i8.h"
#include "simd/gemm_i8_panel-inl.h"
#include "simd/highway_compat.h"
#include "simd/quantize.h"

#define EDGEATTN_I8_SVE EDGEATTN_TARGET_IS_SVE
#if EDGEATTN_I8_SVE
HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// kRows rows x 4 vectors of N features, the scheme of DotTileNeon (gemm_i8_neondot-inl.h) with
// svdot: sums[r * 4N + j] = sum over blocks of x_scale[row][b] * (block b's int32 dot product).
// Sizeless SVE vectors cannot form arrays, hence one named accumulator per row and vector.
template <size_t kRows>
HWY_NOINLINE void DotTileSve(const int8_t* weights, const QuantizedRowsView& a, size_t row0,
                             const I8Layout& L, float* HWY_RESTRICT sums) {
  const hn::CappedTag<int32_t, 16> d32;
  const hn::Rebind<float, decltype(d32)> df;
  const hn::Repartition<int8_t, decltype(d32)> d8;
  const size_t N = hn::Lanes(d32);
  for (size_t i = 0; i < kRows * 4 * N; ++i) sums[i] = 0.0f;
  for (size_t b = 0; b < L.blocks; ++b) {
    auto acc00 = hn::Zero(d32), acc01 = acc00, acc02 = acc00, acc03 = acc00;
    auto acc10 = acc00, acc11 = acc00, acc12 = acc00, acc13 = acc00;
    auto acc20 = acc00, acc21 = acc00, acc22 = acc00, acc23 = acc00;
    auto acc30 = acc00, acc31 = acc00, acc32 = acc00, acc33 = acc00;
    const size_t g_end = HWY_MIN(L.groups, (b + 1) * L.group_per_block);
    for (size_t g = b * L.group_per_block; g < g_end; ++g) {
      const int8_t* wg = weights + g * kGemmI8GroupBytes;
      const auto w0 = hn::LoadU(d8, wg);
      const auto w1 = hn::LoadU(d8, wg + 4 * N);
      const auto w2 = hn::LoadU(d8, wg + 8 * N);
      const auto w3 = hn::LoadU(d8, wg + 12 * N);
#define EDGEATTN_SVE_DOT_ROW(r)                                                          \
  if constexpr (kRows > r) {                                                             \
    const auto x = hn::BitCast(                                                          \
        d8, hn::Set(d32, static_cast<int32_t>(LoadWord(a.q + (row0 + r) * L.ldq + 4 * g)))); \
    acc##r##0 = svdot_s32(acc##r##0, w0, x);                                             \
    acc##r##1 = svdot_s32(acc##r##1, w1, x);                                             \
    acc##r##2 = svdot_s32(acc##r##2, w2, x);                                             \
    acc##r##3 = svdot_s32(acc##r##3, w3, x);                                             \
  }
      EDGEATTN_SVE_DOT_ROW(0)
      EDGEATTN_SVE_DOT_ROW(1)
      EDGEATTN_SVE_DOT_ROW(2)
      EDGEATTN_SVE_DOT_ROW(3)
#undef EDGEATTN_SVE_DOT_ROW
    }
#define EDGEATTN_SVE_SUM_ROW(r)                                                               \
  if constexpr (kRows > r) {                                                                  \
    const auto scale = hn::Set(df, a.scales[(row0 + r) * L.blocks + b]);                      \
    float* f = sums + r * 4 * N;                                                              \
    hn::StoreU(hn::MulAdd(hn::ConvertTo(df, acc##r##0), scale, hn::LoadU(df, f)), df, f);     \
    hn::StoreU(hn::MulAdd(hn::ConvertTo(df, acc##r##1), scale, hn::LoadU(df, f + N)), df,     \
               f + N);                                                                        \
    hn::StoreU(hn::MulAdd(hn::ConvertTo(df, acc##r##2), scale, hn::LoadU(df, f + 2 * N)), df, \
               f + 2 * N);                                                                    \
    hn::StoreU(hn::MulAdd(hn::ConvertTo(df, acc##r##3), scale, hn::LoadU(df, f + 3 * N)), df, \
               f + 3 * N);                                                                    \
  }
    EDGEATTN_SVE_SUM_ROW(0)
    EDGEATTN_SVE_SUM_ROW(1)
    EDGEATTN_SVE_SUM_ROW(2)
    EDGEATTN_SVE_SUM_ROW(3)
#undef EDGEATTN_SVE_SUM_ROW
  }
}

// The SVE dot-product tiles over panel p.
HWY_NOINLINE void PanelSveDot(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                              const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                              size_t ldc) {
  const I8Layout L = MakeI8Layout(w);
  PanelI8Tiles<4>(hn::CappedTag<float, 16>(), L, row_begin, row_end, w, p, c, ldc,
                  [&](auto rows, const int8_t* weights, size_t row, float* sums) HWY_ATTR {
                    DotTileSve<decltype(rows)::value>(weights, a, row, L, sums);
                  });
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();
#endif  // EDGEATTN_I8_SVE

#endif  // EDGEATTN_SIMD_GEMM_I8_SVEDOT_INL_H_
