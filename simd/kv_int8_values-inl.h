// Per-target P V of the int8 K/V kernels (attention_kv.h) on the value panels, as integer dot
// products. For a row of a key tile:
//   1. p'[j] = p[j] * scale[j] (each value's scale folded into its probability, one rounding);
//   2. step = max p' / 32767 and q[j] = p'[j] * (32767 / max p') rounded to nearest even, int16
//      (the largest lands on 32767: at most half a step off per key, 1.5e-5 of the largest);
//   3. sums[c] = sum_j q[j] v[j][c] in int32, exact (256 keys x 32767 x 127 < 2^31), over pairs
//      of positions (vpmaddwd, smlal: the pair rows hold int16 operands after a sign extension);
//   4. acc[c] += float(sums[c]) * step, one multiply-add per channel and tile.
// A widened float P V did three vector operations per 16 channels and key (widen, convert, FMA)
// where this does two per 16 channels and pair of keys, and step 3's integers do not depend on
// the order of the sums, so every target and kernel gets the same bits from them. A row whose
// largest p' is NaN (a NaN value's scale) makes its accumulators NaN, as fp32 values would; one
// below 2^-100 (a tile of values within kMinI8RowMax of zero, or of probabilities below 2^-100
// of the row's largest) adds nothing.

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
#include "simd/partial_vector-inl.h"
#include "simd/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Key tiles start on value panels.
static_assert(kAttentionKeyTile % kI8ValuePanel == 0, "a key tile is whole value panels");

// Below this, a row's largest p' in a tile adds nothing: 32767 / max stays finite.
inline constexpr float kMinI16ProbabilityMax = 0x1p-100f;

// A row's int16 probabilities of one tile: whole pairs, zeros past the tile's keys.
struct I16Probabilities {
  HWY_ALIGN int16_t q[kAttentionKeyTile + kMaxFloatLanes];
  float step;  // 0: the tile adds nothing to the row; NaN: it poisons it
};

// Steps 1 and 2 for p[0, keys) of one row; the tile's scales lie in its panels.
HWY_INLINE void QuantizeTileProbabilities(float* HWY_RESTRICT p, const uint8_t* HWY_RESTRICT panels,
                                          size_t keys, size_t dk, I16Probabilities& out) {
  const RowTag d;
  const hn::Rebind<int16_t, RowTag> d16;
  const size_t N = hn::Lanes(d);
  const size_t scales_offset = kI8ValuePanel / 2 * I8ValuePairBytes(dk);
  auto vmax = hn::Zero(d), vsum = hn::Zero(d);  // the sum carries a NaN that Max may drop
  for (size_t j0 = 0; j0 < keys; j0 += kI8ValuePanel) {
    const float* scales = reinterpret_cast<const float*>(
        panels + j0 / kI8ValuePanel * I8ValuePanelBytes(dk) + scales_offset);
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
  if (sum != sum || max < kMinI16ProbabilityMax) {
    out.step = sum != sum ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    return;
  }
  out.step = max / 32767.0f;
  const auto inverse = hn::Set(d, 32767.0f / max);
  for (size_t j = 0; j < keys; j += N) {
    const auto v = hn::Mul(LoadPartial(d, p + j, keys - j), inverse);
    hn::StoreU(hn::DemoteTo(d16, hn::NearestInt(v)), d16, out.q + j);
  }
  out.q[keys] = 0;  // an odd count's pair partner under HWY_SCALAR (wider vectors zeroed it above)
}

// Step 3 and 4 for channels [c0, c0 + kVecs * N) of one row: four int32 chains of
// ReorderWidenMulAccumulate, so that no chain waits on its latency: kVecs channel vectors times
// 4 / kVecs streams of pairs (pair u to stream u % streams).
using PairTag = hn::CappedTag<int32_t, kI8ValueAlign>;  // a vector never crosses a pair row's end

template <size_t kVecs>
HWY_INLINE void AccumulatePairChannels(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t pairs,
                                       const int16_t* HWY_RESTRICT q, size_t c0, float step,
                                       float* HWY_RESTRICT acc) {
  static_assert(kVecs == 1 || kVecs == 2 || kVecs == 4, "four chains");
  constexpr size_t kStreams = 4 / kVecs;
  const PairTag d32;
  const hn::Repartition<int16_t, PairTag> d16;
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const hn::RebindToFloat<PairTag> df;
  const size_t N = hn::Lanes(d32);
  const size_t pair_bytes = I8ValuePairBytes(dk);
  auto a0 = hn::Zero(d32), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  // Chain c takes pair u + c / kVecs and channel vector c % kVecs.
#define EDGEATTN_PAIR_CHAIN(c)                                                                   \
  {                                                                                              \
    const int8_t* row = reinterpret_cast<const int8_t*>(rows + (u + (c) / kVecs) * pair_bytes) + \
                        (c) % kVecs * 2 * N;                                                     \
    int32_t word;                                                                                \
    memcpy(&word, words + 2 * (u + (c) / kVecs), sizeof(word));                                  \
    a##c = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::LoadU(d8, row)),            \
                                         hn::BitCast(d16, hn::Set(d32, word)), a##c, b##c);      \
  }
  for (size_t u0 = 0; u0 < pairs; u0 += kI8ValuePanel / 2) {
    const uint8_t* HWY_RESTRICT rows =
        panels + u0 / (kI8ValuePanel / 2) * I8ValuePanelBytes(dk) + 2 * c0;
    const int16_t* HWY_RESTRICT words = q + 2 * u0;
    const size_t n = HWY_MIN(kI8ValuePanel / 2, pairs - u0);
    size_t u = 0;
    for (; u + kStreams <= n; u += kStreams) {
      EDGEATTN_PAIR_CHAIN(0) EDGEATTN_PAIR_CHAIN(1) EDGEATTN_PAIR_CHAIN(2) EDGEATTN_PAIR_CHAIN(3)
    }
    for (; u < n; ++u) {  // stream 0's chains
      EDGEATTN_PAIR_CHAIN(0)
      if (kVecs > 1) EDGEATTN_PAIR_CHAIN(1)
    }
  }
#undef EDGEATTN_PAIR_CHAIN
  const auto s0 = hn::RearrangeToOddPlusEven(a0, b0), s1 = hn::RearrangeToOddPlusEven(a1, b1);
  const auto s2 = hn::RearrangeToOddPlusEven(a2, b2), s3 = hn::RearrangeToOddPlusEven(a3, b3);
  const auto vstep = hn::Set(df, step);
  const auto add = [&](size_t v, hn::Vec<PairTag> sums) HWY_ATTR {
    float* HWY_RESTRICT out = acc + c0 + v * N;
    hn::StoreU(hn::MulAdd(hn::ConvertTo(df, sums), vstep, hn::LoadU(df, out)), df, out);
  };
  if (kVecs == 4) {
    add(0, s0), add(1, s1), add(2, s2), add(3, s3);
  } else if (kVecs == 2) {
    add(0, hn::Add(s0, s2)), add(1, hn::Add(s1, s3));
  } else {
    add(0, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3)));
  }
}

// acc[0, RoundUp(dk, kI8ValueAlign)) += the tile's P V of one row, from its int16 probabilities
// over `keys` positions of the panels.
HWY_INLINE void AccumulateTileValuesI8(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t keys,
                                       const I16Probabilities& probabilities,
                                       float* HWY_RESTRICT acc) {
  const size_t N = hn::Lanes(PairTag());
  const size_t vecs = I8ValuePairBytes(dk) / 2 / N;
  const size_t pairs = (keys + 1) / 2;
  const float step = probabilities.step;
  size_t v = 0;
  for (; v + 4 <= vecs; v += 4) {
    AccumulatePairChannels<4>(panels, dk, pairs, probabilities.q, v * N, step, acc);
  }
  if (v + 2 <= vecs) {
    AccumulatePairChannels<2>(panels, dk, pairs, probabilities.q, v * N, step, acc);
    v += 2;
  }
  if (v < vecs) AccumulatePairChannels<1>(panels, dk, pairs, probabilities.q, v * N, step, acc);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_KV_INT8_VALUES_INL_H_
