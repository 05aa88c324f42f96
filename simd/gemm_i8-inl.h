// Per-target int8 projection kernels, one per dot-product instruction, each a descriptor
// (projection_kernel.h) listed by ListI8Kernels when its target may run it (highway_compat.h):
// - qd8_qc8w_vnni_4x4v (AVX512-VNNI targets, and AVX3 where the CPU has VNNI; gemm_i8_vnni-inl.h):
//   vpdpbusd, unsigned by signed bytes (activations offset by +128, ActivationType::kQdu8).
// - qd8_qc8w_avxvnni_3x4v (the AVX2 target, when the CPU has AVX-VNNI; gemm_i8_avxvnni-inl.h):
//   the same on 256-bit vectors.
// - qd8_qc8w_maddubs_2x4v (the AVX2 and AVX3 targets; gemm_i8_maddubs-inl.h): vpmaddubsw on
//   the weights' magnitudes and the activations with the weights' signs, exact for |x| <= 127.
// - qd8_qc8w_svedot_4x4v (SVE targets; gemm_i8_svedot-inl.h): svdot, signed by signed.
// - qd8_qc8w_neondot_3x4v (NEON targets, when the CPU has the Armv8.2 dot product;
//   gemm_i8_neondot-inl.h): sdot by element, signed by signed.
// - qd8_qc8w_neonmlal_2x4v (NEON targets; gemm_i8_neonmlal-inl.h): smull / smlal into int16,
//   sadalp into int32, exact for |x| <= 127.
// - qd8_qc8w_i16_1x1v (every target; here): bytes promoted to int16, then
//   ReorderWidenMulAccumulate (pmaddwd on x86: exact int16 x int16 -> int32 pair sums).
// All read one panel layout (gemm_i8_panel-inl.h) and sum each block's products exactly in int32,
// then scale them into float in the same order, so every kernel gives the same bits. This file
// also holds what they all run: the outliers' float products and the run function over panels.

#if defined(EDGEATTN_SIMD_GEMM_I8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "hwy/highway.h"
#include "simd/cpu_features.h"
#include "simd/gemm_i8.h"
#include "simd/gemm_i8_avxvnni-inl.h"  // EDGEATTN_I8_AVX_VNNI
#include "simd/gemm_i8_maddubs-inl.h"  // EDGEATTN_I8_MADDUBS
#include "simd/gemm_i8_neondot-inl.h"  // EDGEATTN_I8_NEON_DOT
#include "simd/gemm_i8_neonmlal-inl.h"  // EDGEATTN_I8_NEON_MLAL
#include "simd/gemm_i8_panel-inl.h"
#include "simd/gemm_i8_svedot-inl.h"  // EDGEATTN_I8_SVE
#include "simd/gemm_i8_vnni-inl.h"    // EDGEATTN_I8_VNNI
#include "simd/highway_compat.h"
#include "simd/partial_vector-inl.h"
#include "simd/projection_kernel.h"
#include "simd/quantize.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The portable kernel's vectors: int32 sums, a feature a lane.
using I16Tag = hn::CappedTag<int32_t, 16>;

// A block's exact sums for the features [v N, (v + 1) N) of a panel: over its groups
// [g_begin, g_end), each feature's 4 weight bytes times the row's 4 activation bytes.
#if HWY_TARGET == HWY_SCALAR
// One feature a vector, and no bytes to promote in it: plain C++.
HWY_INLINE hn::Vec<I16Tag> BlockSumsI16(const int8_t* HWY_RESTRICT panel,
                                        const int8_t* HWY_RESTRICT xq, size_t v, size_t g_begin,
                                        size_t g_end) {
  int32_t sum = 0;
  for (size_t g = g_begin; g < g_end; ++g) {
    const int8_t* weights = panel + g * kGemmI8GroupBytes + 4 * v;
    for (size_t j = 0; j < 4; ++j) sum += int32_t{weights[j]} * int32_t{xq[4 * g + j]};
  }
  return hn::Set(I16Tag(), sum);
}
#else
// Four int16-product accumulators, folded at the end.
HWY_INLINE hn::Vec<I16Tag> BlockSumsI16(const int8_t* HWY_RESTRICT panel,
                                        const int8_t* HWY_RESTRICT xq, size_t v, size_t g_begin,
                                        size_t g_end) {
  const I16Tag d32;
  const hn::Repartition<int8_t, I16Tag> d8;  // 4 bytes per int32 lane
  const hn::Half<decltype(d8)> dh8;
  const hn::Repartition<int16_t, I16Tag> d16;
  const size_t N = hn::Lanes(d32);
  auto lo0 = hn::Zero(d32), lo1 = hn::Zero(d32), hi0 = hn::Zero(d32), hi1 = hn::Zero(d32);
  for (size_t g = g_begin; g < g_end; ++g) {
    const auto bytes = hn::LoadU(d8, panel + g * kGemmI8GroupBytes + v * 4 * N);
    const auto x8 = hn::BitCast(d8, hn::Set(d32, static_cast<int32_t>(LoadWord(xq + 4 * g))));
    // Both halves of x8 repeat the same 4 bytes, so one promoted half serves both.
    const auto x16 = hn::PromoteTo(d16, hn::LowerHalf(dh8, x8));
    lo0 = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::LowerHalf(dh8, bytes)), x16,
                                        lo0, lo1);
    hi0 = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::UpperHalf(dh8, bytes)), x16,
                                        hi0, hi1);
  }
  // Lane i of each sum holds feature i / 2: k-values 0-1 (even i) or 2-3 (odd i).
  const auto lo = hn::RearrangeToOddPlusEven(lo0, lo1);
  const auto hi = hn::RearrangeToOddPlusEven(hi0, hi1);
  return hn::Add(hn::ConcatEven(d32, hi, lo), hn::ConcatOdd(d32, hi, lo));
}
#endif

// The portable kernel over panel p: one row x one vector of features at a time.
HWY_NOINLINE void PanelI16(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                           const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                           size_t ldc) {
  const I8Layout L = MakeI8Layout(w);
  const hn::Rebind<float, I16Tag> df;
  const size_t N = hn::Lanes(df);
  const int8_t* panel = w.panels + p * L.groups * kGemmI8GroupBytes;
  const size_t col0 = p * kGemmI8PanelWidth;
  for (size_t row = row_begin; row < row_end; ++row) {
    const int8_t* xq = a.q + row * L.ldq;
    const float* xs = a.scales + row * L.blocks;
    for (size_t v = 0; v * N < kGemmI8PanelWidth && col0 + v * N < w.n; ++v) {
      auto f = hn::Zero(df);
      for (size_t b = 0; b < L.blocks; ++b) {
        const size_t g_begin = b * L.group_per_block;
        const size_t g_end = HWY_MIN(L.groups, g_begin + L.group_per_block);
        const auto sums = BlockSumsI16(panel, xq, v, g_begin, g_end);
        f = hn::MulAdd(hn::ConvertTo(df, sums), hn::Set(df, xs[b]), f);
      }
      const size_t col = col0 + v * N;
      StoreDequantized(df, f, w, col, w.n - col, c + row * ldc + col);
    }
  }
}

// Adds each outlier's float product with the dequantized weights of panel p:
// c[row][n] += value * (w_int8[n][channel] * w_scale[n]). The weight byte sits in byte
// channel % 4 of feature n's 32-bit lane in the group channel / 4, so a shift pair extracts it
// with its sign for a whole vector of features.
HWY_INLINE void AddOutliers(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                            const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                            size_t ldc) {
  const hn::CappedTag<int32_t, 16> d32;
  const hn::Rebind<float, decltype(d32)> df;
  const size_t N = hn::Lanes(d32);
  const size_t groups = QuantizedRowStride(w.k) / 4;
  const size_t col0 = p * kGemmI8PanelWidth;
  const size_t cols = HWY_MIN(kGemmI8PanelWidth, w.n - col0);
  for (size_t row = row_begin; row < row_end; ++row) {
    for (uint32_t i = 0; i < a.outlier_count[row]; ++i) {
      const uint32_t channel = a.outlier_channel[row * kMaxOutliersPerRow + i];
      const auto value = hn::Set(df, a.outlier_value[row * kMaxOutliersPerRow + i]);
      const int shift = static_cast<int>(24 - 8 * (channel % 4));
      const int8_t* group = w.panels + (p * groups + channel / 4) * kGemmI8PanelWidth * 4;
      float* out = c + row * ldc + col0;
      for (size_t j = 0; j < cols; j += N) {
        const auto lanes = hn::LoadU(d32, reinterpret_cast<const int32_t*>(group + 4 * j));
        const auto weight = hn::ShiftRightSame(hn::ShiftLeftSame(lanes, shift), 24);
        const auto dequantized =
            hn::Mul(hn::ConvertTo(df, weight), hn::LoadU(df, w.scales + col0 + j));
        const size_t count = HWY_MIN(N, cols - j);
        StorePartial(df, hn::MulAdd(value, dequantized, LoadPartial(df, out + j, count)), out + j,
                     count);
      }
    }
  }
}

// A kernel's work over one panel (PanelVnni, PanelAvxVnni, PanelMaddubs, PanelNeonDot,
// PanelNeonMlal, PanelSveDot, PanelI16).
using PanelI8Fn = void(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                       const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c, size_t ldc);

// A kernel's run function (ProjectionKernel::run): kPanel over panels [panel_begin, panel_end)
// of the layout kView reads (gemm_i8.h: the VNNI kernel's panels carry block starts, the others'
// do not), then the outliers' products.
template <PanelI8Fn* kPanel, GemmI8WeightsView (*kView)(const PackedProjectionView&)>
HWY_NOINLINE void RunI8(const ProjectionInput& a, size_t row_begin, size_t row_end,
                        const PackedProjectionView& packed, size_t panel_begin, size_t panel_end,
                        float* HWY_RESTRICT c, size_t ldc) {
  const GemmI8WeightsView w = kView(packed);
  for (size_t p = panel_begin; p < panel_end; ++p) {
    kPanel(a.qd8, row_begin, row_end, w, p, c, ldc);
    if (a.qd8.outlier_count != nullptr) AddOutliers(a.qd8, row_begin, row_end, w, p, c, ldc);
  }
}

// The int8 kernels compiled for this target, best first. Exported: plain inline, as a one-target
// build (EDGEATTN_TARGETS=phone) calls it directly from code without this target's attributes,
// where always_inline cannot apply.
inline std::vector<const ProjectionKernel*> ListI8Kernels() {
  std::vector<const ProjectionKernel*> kernels;
#if EDGEATTN_I8_VNNI
  static const ProjectionKernel kVnni = {
      "qd8_qc8w_vnni_4x4v",
      ActivationType::kQdu8,
      WeightType::kQc8,
      EDGEATTN_TARGET_HAS_AVX512_VNNI ? &RunsWhereItsTargetRuns : &CpuHasAvx512Vnni,
      kGemmI8PanelWidth,
      &Qc8PanelsWithStartsBytes,
      &PackQc8PanelsWithStarts,
      &UnpackQc8Panels,
      &RunI8<&PanelVnni, &Qc8PanelsWithStartsView>};
  kernels.push_back(&kVnni);
#endif
#if EDGEATTN_I8_AVX_VNNI
  static const ProjectionKernel kAvxVnni = {"qd8_qc8w_avxvnni_3x4v",
                                            ActivationType::kQdu8,
                                            WeightType::kQc8,
                                            &CpuHasAvxVnni,
                                            kGemmI8PanelWidth,
                                            &Qc8PanelsWithStartsBytes,
                                            &PackQc8PanelsWithStarts,
                                            &UnpackQc8Panels,
                                            &RunI8<&PanelAvxVnni, &Qc8PanelsWithStartsView>};
  kernels.push_back(&kAvxVnni);
#endif
#if EDGEATTN_I8_MADDUBS
  static const ProjectionKernel kMaddubs = {
      "qd8_qc8w_maddubs_2x4v", ActivationType::kQd8, WeightType::kQc8,
      &RunsWhereItsTargetRuns, kGemmI8PanelWidth,    &Qc8PanelsBytes,
      &PackQc8Panels,          &UnpackQc8Panels,     &RunI8<&PanelMaddubs, &Qc8PanelsView>};
  kernels.push_back(&kMaddubs);
#endif
#if EDGEATTN_I8_SVE
  static const ProjectionKernel kSveDot = {
      "qd8_qc8w_svedot_4x4v",  ActivationType::kQd8, WeightType::kQc8,
      &RunsWhereItsTargetRuns, kGemmI8PanelWidth,    &Qc8PanelsBytes,
      &PackQc8Panels,          &UnpackQc8Panels,     &RunI8<&PanelSveDot, &Qc8PanelsView>};
  kernels.push_back(&kSveDot);
#endif
#if EDGEATTN_I8_NEON_DOT
  static const ProjectionKernel kNeonDot = {
      "qd8_qc8w_neondot_3x4v", ActivationType::kQd8, WeightType::kQc8,
      &CpuHasNeonDotProduct,   kGemmI8PanelWidth,    &Qc8PanelsBytes,
      &PackQc8Panels,          &UnpackQc8Panels,     &RunI8<&PanelNeonDot, &Qc8PanelsView>};
  kernels.push_back(&kNeonDot);
#endif
#if EDGEATTN_I8_NEON_MLAL
  static const ProjectionKernel kNeonMlal = {
      "qd8_qc8w_neonmlal_2x4v", ActivationType::kQd8, WeightType::kQc8,
      &RunsWhereItsTargetRuns,  kGemmI8PanelWidth,    &Qc8PanelsBytes,
      &PackQc8Panels,           &UnpackQc8Panels,     &RunI8<&PanelNeonMlal, &Qc8PanelsView>};
  kernels.push_back(&kNeonMlal);
#endif
  static const ProjectionKernel kI16 = {
      "qd8_qc8w_i16_1x1v",     ActivationType::kQd8, WeightType::kQc8,
      &RunsWhereItsTargetRuns, kGemmI8PanelWidth,    &Qc8PanelsBytes,
      &PackQc8Panels,          &UnpackQc8Panels,     &RunI8<&PanelI16, &Qc8PanelsView>};
  kernels.push_back(&kI16);
  return kernels;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_I8_VNNI
#undef EDGEATTN_I8_AVX_VNNI
#undef EDGEATTN_I8_MADDUBS
#undef EDGEATTN_I8_SVE
#undef EDGEATTN_I8_NEON_DOT
#undef EDGEATTN_I8_NEON_MLAL

#endif  // EDGEATTN_SIMD_GEMM_I8_INL_H_
