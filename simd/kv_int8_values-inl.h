// Per-target P V of the int8 K/V kernels (attention_kv.h) on the value panels, as integer dot
// products. For a row of a key tile:
//   1. p'[j] = p[j] * scale[j] (each value's scale folded into its probability, one rounding);
//   2. step = max p' / P and q[j] = p'[j] * (P / max p') rounded to nearest even, int16, for P =
//      kI8ProbabilityMax (the largest lands on P: at most half a step off per key, 1.5e-5 of the
//      largest for 32767, 3.1e-5 for 16383 in builds with the sdot P V);
//   3. sums[c] = sum_j q[j] v[j][c] in int32, exact (256 keys x 32767 x 127 < 2^31), over pairs
//      of positions (vpdpwssd with AVX512-VNNI, vpmaddwd on other x86, smlal on ARM: a pair row
//      holds the int16 operands after one sign extension; sdot in the Arm dot-product kernel,
//      kv_int8_values_sdot-inl.h);
//   4. acc[c] += float(sums[c]) * step, one multiply-add per channel and tile.
// A float P V widened and converted each value before its FMA; here one widening serves a pair
// of keys and up to four rows, and a VNNI instruction multiplies the pair. Step 3's integers do
// not depend on the order of the sums, so every int8 kernel of one target gets the same bits
// (step 4's multiply-add is fused on some targets only). A row whose largest p' is NaN (a NaN
// value's scale) makes its accumulators NaN, as fp32 values would; one whose largest p' is tiny
// rounds p' * 2^64 (exact), so that the step stays a normal float down to the smallest values
// the format stores (kMinI8RowMax).

#if defined(EDGEATTN_SIMD_KV_INT8_VALUES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_KV_INT8_VALUES_INL_H_
#undef EDGEATTN_SIMD_KV_INT8_VALUES_INL_H_
#else
#define EDGEATTN_SIMD_KV_INT8_VALUES_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <limits>

#include "hwy/highway.h"
#include "simd/attention.h"
#include "simd/attention_kv.h"
#include "simd/gemm_i8_x86_tile-inl.h"  // x86: PinToRegister
#include "simd/highway_compat.h"
#include "simd/partial_vector-inl.h"
#include "simd/softmax-inl.h"

// vpdpwssd on AVX512-VNNI targets: Highway 1.0.3's ReorderWidenMulAccumulate takes vpmaddwd and
// an add; its AVX3_DL attribute string lacks avx512vnni (as in gemm_i8_vnni-inl.h).
#if EDGEATTN_TARGET_HAS_AVX512_VNNI
#include <immintrin.h>
#define EDGEATTN_I8_VALUES_VNNI 1
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512vnni")
#else
#define EDGEATTN_I8_VALUES_VNNI 0
HWY_BEFORE_NAMESPACE();
#endif
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Key tiles start on value panels.
static_assert(kAttentionKeyTile % kI8ValuePanel == 0, "a key tile is whole value panels");

// A tile whose largest p' is below kI16PrescaleBelow rounds p' * kI16Prescale: P / max then
// stays finite and the step normal (max >= 2^-149 becomes >= 2^-85).
inline constexpr float kI16PrescaleBelow = 0x1p-64f;
inline constexpr float kI16Prescale = 0x1p64f;

// A row's int16 probabilities of one tile: whole pairs, zeros past the tile's keys.
struct I16Probabilities {
  HWY_ALIGN int16_t q[kAttentionKeyTile + kMaxFloatLanes];
  // A sum's unit is step * unscale (unscale: 1, or 1 / kI16Prescale). step 0 (q all zero): the
  // tile adds nothing to the row; NaN (q zero): it poisons it.
  float step;
  float unscale;
};

// Steps 1 and 2 for p[0, keys) of one row, whose p it leaves as p'; the tile's scales lie in
// its panels.
HWY_INLINE void QuantizeTileProbabilities(float* HWY_RESTRICT p, const uint8_t* HWY_RESTRICT panels,
                                          size_t keys, size_t dk, I16Probabilities& out) {
  const RowTag d;
  const hn::Rebind<int16_t, RowTag> d16;
  const size_t N = hn::Lanes(d);
  auto vmax = hn::Zero(d), vsum = hn::Zero(d);  // the sum carries a NaN that Max may drop
  for (size_t j0 = 0; j0 < keys; j0 += kI8ValuePanel) {
    const float* scales = reinterpret_cast<const float*>(
        panels + j0 / kI8ValuePanel * I8ValuePanelBytes(dk) + I8ValueScalesOffset(dk));
    const size_t n = HWY_MIN(kI8ValuePanel, keys - j0);
    for (size_t j = 0; j < n; j += N) {
      const auto v = hn::Mul(LoadPartial(d, p + j0 + j, n - j), LoadPartial(d, scales + j, n - j));
      StorePartial(d, v, p + j0 + j, n - j);
      vmax = hn::Max(vmax, v);
      vsum = hn::Add(vsum, v);
    }
  }
  const float max = hn::GetLane(hn::MaxOfLanes(d, vmax));
  const float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  out.unscale = 1.0f;
  if (sum != sum || max == 0.0f) {
    // Zeros: the row's sums stay 0, and 0 times a NaN step still poisons its accumulators.
    out.step = sum != sum ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    memset(out.q, 0, (keys + 1) * sizeof(int16_t));
    return;
  }
  const float prescale = max < kI16PrescaleBelow ? kI16Prescale : 1.0f;
  out.unscale = 1.0f / prescale;
  out.step = max * prescale / kI8ProbabilityMax;
  const auto vprescale = hn::Set(d, prescale);
  const auto inverse = hn::Set(d, kI8ProbabilityMax / (max * prescale));
  for (size_t j = 0; j < keys; j += N) {
    const auto v = hn::Mul(hn::Mul(LoadPartial(d, p + j, keys - j), vprescale), inverse);
    hn::StoreU(hn::DemoteTo(d16, hn::NearestInt(v)), d16, out.q + j);
  }
  out.q[keys] = 0;  // an odd count's pair partner under HWY_SCALAR (wider vectors zeroed it above)
}

using PairTag = hn::CappedTag<int32_t, kI8ValueAlign>;  // a vector never crosses a pair row's end

// Independent int32 accumulators a target's registers hold beside the values: 16 of 32 on
// AVX-512; 8 elsewhere (16 registers on AVX2, and NEON's and SVE's multiply-adds keep two
// accumulators per chain, ReorderWidenMulAccumulate's sum0 and sum1).
#if EDGEATTN_TARGET_HAS_AVX512
inline constexpr size_t kPairChains = 16;
#else
inline constexpr size_t kPairChains = 8;
#endif

// Chains a loop step keeps in flight, so that none waits on its latency: vpdpwssd's sum waits
// about 5 cycles and two issue a cycle; the other targets' chains carry only an add.
inline constexpr size_t kMinPairChains = EDGEATTN_I8_VALUES_VNNI ? 8 : 4;

// Widened value vectors a loop step holds: 8 with AVX-512's 32 registers (a decode row's chains
// then reach kMinPairChains), else 4.
inline constexpr size_t kMaxPairValues = EDGEATTN_TARGET_HAS_AVX512 ? 8 : 4;

// sum0 += the int16 pairs' products w q, summed per int32 lane (step 3's multiply-add).
template <class V16, class V32>
HWY_INLINE V32 MulAddPairsI16(PairTag d32, V16 w, V16 q, V32 sum0, V32& sum1) {
#if EDGEATTN_I8_VALUES_VNNI
  (void)d32, (void)sum1;
  auto sum = _mm512_dpwssd_epi32(sum0.raw, w.raw, q.raw);
  PinToRegister(sum);
  return V32{sum};
#else
  return hn::ReorderWidenMulAccumulate(d32, w, q, sum0, sum1);
#endif
}

// Value vector kIndex of a loop step's eight (SVE's sizeless vectors cannot form an array).
template <size_t kIndex, class V>
HWY_INLINE V PickValues(V w0, V w1, V w2, V w3, V w4, V w5, V w6, V w7) {
  static_assert(kIndex < 8, "eight value vectors");
  if constexpr (kIndex < 4) {
    return kIndex == 0 ? w0 : kIndex == 1 ? w1 : kIndex == 2 ? w2 : w3;
  } else {
    return kIndex == 4 ? w4 : kIndex == 5 ? w5 : kIndex == 6 ? w6 : w7;
  }
}

// Step 4 for kRows rows and channels [c0, c0 + kVecs * N): per row and channel vector, the sum of
// its chains' int32 sums (chain (row r, stream s, vector v) at sums[(r * kStreams * kVecs + s *
// kVecs + v) * N]), times the row's step (and unscale), into its accumulators.
template <size_t kRows, size_t kVecs, size_t kStreams>
HWY_INLINE void AddPairSums(const int32_t* HWY_RESTRICT sums, const I16Probabilities* probabilities,
                            size_t c0, float* HWY_RESTRICT acc, size_t ldacc) {
  const PairTag d32;
  const hn::RebindToFloat<PairTag> df;
  const size_t N = hn::Lanes(d32);
  constexpr size_t kValues = kStreams * kVecs;
  for (size_t r = 0; r < kRows; ++r) {
    const auto step = hn::Set(df, probabilities[r].step);
    const float unscale = probabilities[r].unscale;
    for (size_t v = 0; v < kVecs; ++v) {
      auto total = hn::LoadU(d32, sums + (r * kValues + v) * N);
      for (size_t s = 1; s < kStreams; ++s) {
        total = hn::Add(total, hn::LoadU(d32, sums + (r * kValues + s * kVecs + v) * N));
      }
      float* HWY_RESTRICT out = acc + r * ldacc + c0 + v * N;
      const auto products = hn::ConvertTo(df, total);
      const auto sum = unscale == 1.0f ? hn::MulAdd(products, step, hn::LoadU(df, out))
                                       : hn::MulAdd(hn::Mul(products, step), hn::Set(df, unscale),
                                                    hn::LoadU(df, out));
      hn::StoreU(sum, df, out);
    }
  }
}

#if HWY_TARGET == HWY_SCALAR
// Steps 3 and 4 for kRows rows and channels [c0, c0 + kVecs): one channel a vector, and no int16
// pairs in it, so plain C++ over the pair rows (channel c's two keys at bytes 2c and 2c + 1).
template <size_t kRows, size_t kVecs>
HWY_INLINE void AccumulatePairChannels(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t pairs,
                                       const I16Probabilities* probabilities, size_t c0,
                                       float* HWY_RESTRICT acc, size_t ldacc) {
  constexpr size_t kPanelPairs = kI8ValuePanel / 2;
  const size_t pair_bytes = I8ValuePairBytes(dk);
  int32_t sums[kRows * kVecs] = {};
  for (size_t u = 0; u < pairs; ++u) {
    const int8_t* values = reinterpret_cast<const int8_t*>(
        panels + u / kPanelPairs * I8ValuePanelBytes(dk) + u % kPanelPairs * pair_bytes + 2 * c0);
    for (size_t r = 0; r < kRows; ++r) {
      const int32_t q0 = probabilities[r].q[2 * u], q1 = probabilities[r].q[2 * u + 1];
      for (size_t v = 0; v < kVecs; ++v) {
        sums[r * kVecs + v] += int32_t{values[2 * v]} * q0 + int32_t{values[2 * v + 1]} * q1;
      }
    }
  }
  AddPairSums<kRows, kVecs, 1>(sums, probabilities, c0, acc, ldacc);
}
#else
// Steps 3 and 4 for kRows rows and channels [c0, c0 + kVecs * N): each step of the loop widens
// kValues vectors of pair rows once for every row (kVecs channel vectors of kStreams pairs; more
// than one stream where rows and vectors alone give fewer than four chains, so that no chain
// waits on its latency), and each row's chain multiplies them by its pair's int16 word.
// Chain c = (r * kStreams + s) * kVecs + v accumulates row r's products with channel vector v of
// pair u + s (stream s), for example:
//   kRows x kVecs   kStreams  chains
//   1 x 1           4         0-3: pairs u..u+3 of the one vector (AddPairSums adds the streams)
//   2 x 1           2         0-1: row 0, pairs u, u+1; 2-3: row 1
//   4 x 2           1         0-7: row c / 2, vector c % 2
//   4 x 4           1         0-15: row c / 4, vector c % 4
template <size_t kRows, size_t kVecs>
HWY_INLINE void AccumulatePairChannels(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t pairs,
                                       const I16Probabilities* probabilities, size_t c0,
                                       float* HWY_RESTRICT acc, size_t ldacc) {
  constexpr size_t kStreams =
      kRows * kVecs >= kMinPairChains ? 1 : kMinPairChains / (kRows * kVecs);
  constexpr size_t kValues = kStreams * kVecs;
  constexpr size_t kChains = kRows * kValues;
  static_assert(kValues <= kMaxPairValues && kChains <= kPairChains,
                "values and chains fit the registers");
  const PairTag d32;
  const hn::Repartition<int16_t, PairTag> d16;
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const size_t N = hn::Lanes(d32);
  const size_t pair_bytes = I8ValuePairBytes(dk);
  auto a0 = hn::Zero(d32), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  auto a8 = a0, a9 = a0, a10 = a0, a11 = a0, a12 = a0, a13 = a0, a14 = a0, a15 = a0;
  auto b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
  auto b8 = a0, b9 = a0, b10 = a0, b11 = a0, b12 = a0, b13 = a0, b14 = a0, b15 = a0;
  auto w0 = hn::Zero(d16), w1 = w0, w2 = w0, w3 = w0, w4 = w0, w5 = w0, w6 = w0, w7 = w0;
  // Value vector i: pair u + i / kVecs, channel vector i % kVecs.
#define EDGEATTN_PAIR_VALUES(i)                                                                \
  if constexpr ((i) < kValues) {                                                               \
    w##i = hn::PromoteTo(                                                                      \
        d16,                                                                                   \
        hn::LoadU(d8, reinterpret_cast<const int8_t*>(rows + (u + (i) / kVecs) * pair_bytes) + \
                          (i) % kVecs * 2 * N));                                               \
  }
  // Chain c: row c / kValues, value vector c % kValues.
#define EDGEATTN_PAIR_CHAIN(c)                                                                   \
  if constexpr ((c) < kChains) {                                                                 \
    constexpr size_t kValue = (c) % kValues;                                                     \
    int32_t word;                                                                                \
    memcpy(&word, probabilities[(c) / kValues].q + 2 * (u0 + u + kValue / kVecs), sizeof(word)); \
    a##c = MulAddPairsI16(d32, PickValues<kValue>(w0, w1, w2, w3, w4, w5, w6, w7),               \
                          hn::BitCast(d16, hn::Set(d32, word)), a##c, b##c);                     \
  }
#define EDGEATTN_PAIR_ALL(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define EDGEATTN_PAIR_EIGHT(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define EDGEATTN_PAIR_FIRST_VALUES(i) \
  if constexpr ((i) < kVecs) EDGEATTN_PAIR_VALUES(i)
  for (size_t u0 = 0; u0 < pairs; u0 += kI8ValuePanel / 2) {
    const uint8_t* HWY_RESTRICT rows =
        panels + u0 / (kI8ValuePanel / 2) * I8ValuePanelBytes(dk) + 2 * c0;
    const size_t n = HWY_MIN(kI8ValuePanel / 2, pairs - u0);
    size_t u = 0;
    for (; u + kStreams <= n; u += kStreams) {
      EDGEATTN_PAIR_EIGHT(EDGEATTN_PAIR_VALUES)
      EDGEATTN_PAIR_ALL(EDGEATTN_PAIR_CHAIN)
    }
    // The first stream's values and chains for the pairs left (none with one stream).
    for (; kStreams > 1 && u < n; ++u) {
      EDGEATTN_PAIR_EIGHT(EDGEATTN_PAIR_FIRST_VALUES)
#define EDGEATTN_PAIR_FIRST_STREAM(c) \
  if constexpr ((c) % kValues < kVecs) EDGEATTN_PAIR_CHAIN(c)
      EDGEATTN_PAIR_ALL(EDGEATTN_PAIR_FIRST_STREAM)
    }
  }
  // Each chain's sums in channel order, for AddPairSums.
  HWY_ALIGN int32_t sums[kChains * kI8ValueAlign];
#define EDGEATTN_PAIR_STORE(c)                                             \
  if constexpr ((c) < kChains) {                                           \
    hn::StoreU(hn::RearrangeToOddPlusEven(a##c, b##c), d32, sums + (c)*N); \
  }
  EDGEATTN_PAIR_ALL(EDGEATTN_PAIR_STORE)
#undef EDGEATTN_PAIR_STORE
#undef EDGEATTN_PAIR_FIRST_STREAM
#undef EDGEATTN_PAIR_FIRST_VALUES
#undef EDGEATTN_PAIR_EIGHT
#undef EDGEATTN_PAIR_ALL
#undef EDGEATTN_PAIR_CHAIN
#undef EDGEATTN_PAIR_VALUES
  AddPairSums<kRows, kVecs, kStreams>(sums, probabilities, c0, acc, ldacc);
}
#endif  // HWY_TARGET == HWY_SCALAR

// Channels of kRows rows in blocks of up to four vectors (pair rows are whole vectors).
template <size_t kRows>
HWY_INLINE void AccumulatePairRows(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t pairs,
                                   const I16Probabilities* probabilities, float* HWY_RESTRICT acc,
                                   size_t ldacc) {
  const size_t N = hn::Lanes(PairTag());
  const size_t vecs = I8ValuePairBytes(dk) / 2 / N;
  size_t v = 0;
  for (; v + 4 <= vecs; v += 4) {
    AccumulatePairChannels<kRows, 4>(panels, dk, pairs, probabilities, v * N, acc, ldacc);
  }
  if (v + 2 <= vecs) {
    AccumulatePairChannels<kRows, 2>(panels, dk, pairs, probabilities, v * N, acc, ldacc);
    v += 2;
  }
  if (v < vecs) {
    AccumulatePairChannels<kRows, 1>(panels, dk, pairs, probabilities, v * N, acc, ldacc);
  }
}

// Rows of acc (ldacc apart; RoundUp(dk, kI8ValueAlign) columns) += the tile's P V over `keys`
// positions of the panels, from each row's int16 probabilities: rows in groups that share each
// widened value vector.
HWY_INLINE void AccumulateTileValuesI8(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t keys,
                                       const I16Probabilities* probabilities, size_t rows,
                                       float* HWY_RESTRICT acc, size_t ldacc) {
  constexpr size_t kMaxRows = kPairChains / 4;
  const size_t pairs = (keys + 1) / 2;
  size_t r = 0;
  for (; r + kMaxRows <= rows; r += kMaxRows) {
    AccumulatePairRows<kMaxRows>(panels, dk, pairs, probabilities + r, acc + r * ldacc, ldacc);
  }
  if (kMaxRows > 2 && r + 2 <= rows) {
    AccumulatePairRows<2>(panels, dk, pairs, probabilities + r, acc + r * ldacc, ldacc);
    r += 2;
  }
  if (r < rows) AccumulatePairRows<1>(panels, dk, pairs, probabilities + r, acc + r * ldacc, ldacc);
}

// The P V above as I8Kv takes it (kv_int8_values_sdot-inl.h has the other).
struct I16PairValues {
  static HWY_INLINE void AccumulateTile(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t keys,
                                        const I16Probabilities* probabilities, size_t rows,
                                        float* HWY_RESTRICT acc, size_t ldacc) {
    AccumulateTileValuesI8(panels, dk, keys, probabilities, rows, acc, ldacc);
  }
};

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_I8_VALUES_VNNI
#endif  // EDGEATTN_SIMD_KV_INT8_VALUES_INL_H_
