// Per-target dynamic quantization of activation rows.

#if defined(EDGEATTN_SIMD_QUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_QUANTIZE_INL_H_
#undef EDGEATTN_SIMD_QUANTIZE_INL_H_
#else
#define EDGEATTN_SIMD_QUANTIZE_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <limits>

#include "hwy/highway.h"
#include "simd/highway_compat.h"
#include "simd/partial_vector-inl.h"
#include "simd/quantize.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using QuantTag = hn::CappedTag<float, 16>;

// Loads x[i, i + lanes) or, at the end of a block, its remaining n - i values and zeros.
HWY_INLINE hn::Vec<QuantTag> LoadBlockPart(const float* HWY_RESTRICT x, size_t i, size_t n) {
  return LoadPartial(QuantTag(), x + i, n - i);
}

// The sum of |x| over x[0, k), in vectors of N from x[0] (the order every caller relies on).
HWY_INLINE hn::Vec<QuantTag> SumAbs(const float* HWY_RESTRICT x, size_t k, hn::Vec<QuantTag> vsum) {
  const size_t N = hn::Lanes(QuantTag());
  for (size_t i = 0; i < k; i += N) vsum = hn::Add(vsum, hn::Abs(LoadBlockPart(x, i, k)));
  return vsum;
}

// The outlier threshold of a row whose |x| sum to sum_abs (see quantize.h).
HWY_INLINE float OutlierThreshold(hn::Vec<QuantTag> sum_abs, size_t k) {
  const float mean_abs = hn::GetLane(hn::SumOfLanes(QuantTag(), sum_abs)) / static_cast<float>(k);
  return kOutlierThreshold * kSigmaPerMeanAbs * mean_abs;
}

// Finds the row's values beyond `threshold` (finite, positive), the kMaxOutliersPerRow largest,
// largest first; returns how many.
HWY_INLINE uint32_t FindOutliers(const float* HWY_RESTRICT row, size_t k, float threshold,
                                 uint32_t* HWY_RESTRICT channel, float* HWY_RESTRICT value) {
  const QuantTag d;
  const size_t N = hn::Lanes(d);
  const auto vthreshold = hn::Set(d, threshold);
  uint32_t count = 0;
  for (size_t i = 0; i < k; i += N) {
    const auto big = hn::Gt(hn::Abs(LoadBlockPart(row, i, k)), vthreshold);
    if (hn::AllFalse(d, big)) continue;
    for (size_t j = i; j < HWY_MIN(i + N, k); ++j) {
      const float a = row[j] < 0 ? -row[j] : row[j];
      if (!(a > threshold)) continue;
      // Keep the kMaxOutliersPerRow largest, sorted by decreasing magnitude.
      size_t at = count < kMaxOutliersPerRow ? count++ : kMaxOutliersPerRow;
      while (at > 0 && (value[at - 1] < 0 ? -value[at - 1] : value[at - 1]) < a) {
        if (at < kMaxOutliersPerRow) {
          value[at] = value[at - 1];
          channel[at] = channel[at - 1];
        }
        --at;
      }
      if (at < kMaxOutliersPerRow) {
        value[at] = row[j];
        channel[at] = static_cast<uint32_t>(j);
      }
    }
  }
  return count;
}

HWY_INLINE bool IsOutlierChannel(size_t c, const uint32_t* channel, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    if (channel[i] == c) return true;
  }
  return false;
}

// The largest |x| of a block's n values, or NaN if one of them is NaN or infinite. Adds their
// |x| to *vsum when vsum is given.
HWY_INLINE float BlockAbsMax(const float* HWY_RESTRICT x, size_t n, hn::Vec<QuantTag>* vsum) {
  const QuantTag d;
  const size_t N = hn::Lanes(d);
  const auto inf = hn::Set(d, std::numeric_limits<float>::infinity());
  auto vmax = hn::Zero(d);
  auto finite = hn::FirstN(d, N);
  // Summed in a local: through the pointer, g++ kept the sum in memory, a store-to-load round
  // trip per vector (half the quantization's time).
  auto sum = vsum != nullptr ? *vsum : hn::Zero(d);
  for (size_t i = 0; i < n; i += N) {
    const auto a = hn::Abs(LoadBlockPart(x, i, n));
    finite = hn::And(finite, hn::Lt(a, inf));  // false for NaN too
    vmax = hn::Max(vmax, a);
    sum = hn::Add(sum, a);
  }
  if (vsum != nullptr) *vsum = sum;
  if (!hn::AllTrue(d, finite)) return std::numeric_limits<float>::quiet_NaN();
  return hn::GetLane(hn::MaxOfLanes(d, vmax));
}

// The largest |x| of a block's n values (channels [begin, begin + n) of the row) other than the
// row's outliers.
HWY_INLINE float BlockAbsMaxWithoutOutliers(const float* HWY_RESTRICT row, size_t begin, size_t n,
                                            const uint32_t* channel, uint32_t count) {
  float amax = 0.0f;
  for (size_t j = begin; j < begin + n; ++j) {
    if (!IsOutlierChannel(j, channel, count)) amax = HWY_MAX(amax, row[j] < 0 ? -row[j] : row[j]);
  }
  return amax;
}

HWY_INLINE bool BlockHasOutlier(size_t begin, size_t n, const uint32_t* channel, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    if (channel[i] >= begin && channel[i] < begin + n) return true;
  }
  return false;
}

#if EDGEATTN_TARGET_HAS_AVX512
// x[0, 64) * inv rounded as 64 bytes in order, each xor-ed with to_stored: two packs to int16,
// one to int8 and one permute for all four vectors, where DemoteTo spends two packs and a
// permute on each. A minimum keeps products of 2^31 and more from vcvtps2dq's out-of-range
// result (INT_MIN): one operation where NearestInt's fix-up of the sign takes four, and the
// same saturated bytes as the portable loop (NaN gives INT_MIN: a byte of a NaN-scale block).
HWY_INLINE void QuantizeFourVectors(const float* HWY_RESTRICT x, hn::Vec<QuantTag> inv,
                                    __m512i to_stored, int8_t* HWY_RESTRICT q) {
  const QuantTag d;
  static_assert(hn::MaxLanes(QuantTag()) == 16, "four vectors are 64 values");
  const __m512 below_int_overflow = _mm512_set1_ps(2147483520.0f);  // the float below 2^31
  const auto rounded = [&](size_t v) HWY_ATTR {
    const __m512 product = hn::Mul(hn::LoadU(d, x + 16 * v), inv).raw;
    // vminps returns its second operand where either is NaN: the product.
    return _mm512_cvtps_epi32(_mm512_min_ps(below_int_overflow, product));
  };
  // Per 128-bit lane j: int16 words 4j..4j+3 of the first vector, then of the second.
  const __m512i ab = _mm512_packs_epi32(rounded(0), rounded(1));
  const __m512i cd = _mm512_packs_epi32(rounded(2), rounded(3));
  // Per lane j: dwords 4j..4j+3 hold bytes 4j..4j+3 of vectors 0, 1, 2 and 3.
  const __m512i bytes = _mm512_packs_epi16(ab, cd);
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  _mm512_storeu_si512(q, _mm512_xor_si512(_mm512_permutexvar_epi32(order, bytes), to_stored));
}
#endif

// q[i] = round(x[i] * inv) for the block's n values, each byte xor-ed with to_stored.
HWY_INLINE void QuantizeBlock(const float* HWY_RESTRICT x, size_t n, float inv_scalar,
                              int8_t to_stored, int8_t* HWY_RESTRICT q) {
  const QuantTag d;
  const hn::Rebind<int8_t, QuantTag> d8;
  const size_t N = hn::Lanes(d);
  const auto inv = hn::Set(d, inv_scalar);
  size_t i = 0;
#if EDGEATTN_TARGET_HAS_AVX512
  const __m512i stored64 = _mm512_set1_epi8(to_stored);
  for (; i + 4 * N <= n; i += 4 * N) QuantizeFourVectors(x + i, inv, stored64, q + i);
#endif
  const auto stored = hn::Set(d8, to_stored);
  for (; i < n; i += N) {
    const auto v = hn::NearestInt(hn::Mul(LoadBlockPart(x, i, n), inv));
    // |v| <= 127, but for an outlier channel (its block's scale comes from the other values):
    // the demotion saturates it, and the caller then zeroes it.
    StorePartial(d8, hn::Xor(hn::DemoteTo(d8, v), stored), q + i, n - i);
  }
}

// What every row of a call shares: its sizes, and the stored form of 0 (what each value's byte
// is xor-ed with to get its stored form).
struct QuantizeRowsPlan {
  size_t k, block, blocks, ldq;
  int8_t zero;
  bool sum_in_blocks;  // blocks of whole vectors sum |x| in the same vectors as the whole row
};

HWY_INLINE QuantizeRowsPlan MakeQuantizeRowsPlan(size_t k, size_t block, QuantizedBytes bytes) {
  QuantizeRowsPlan plan;
  plan.k = k;
  plan.block = block;
  plan.blocks = QuantBlockCount(k, block);
  plan.ldq = QuantizedRowStride(k);
  plan.zero = bytes == QuantizedBytes::kOffsetUnsigned ? int8_t{-128} : int8_t{0};
  plan.sum_in_blocks = block % hn::Lanes(QuantTag()) == 0;
  return plan;
}

// First pass: each block's largest |x| (NaN: not finite) into its scale's slot, and the sum of
// the row's |x| into *vsum when given; returns the row's largest |x|.
HWY_INLINE float MeasureRowBlocks(const QuantizeRowsPlan& plan, const float* HWY_RESTRICT row,
                                  hn::Vec<QuantTag>* vsum, float* HWY_RESTRICT row_scales) {
  float row_amax = 0.0f;
  for (size_t b = 0; b < plan.blocks; ++b) {
    const size_t n = HWY_MIN(plan.block, plan.k - b * plan.block);
    row_scales[b] = BlockAbsMax(row + b * plan.block, n, plan.sum_in_blocks ? vsum : nullptr);
    row_amax = HWY_MAX(row_amax, row_scales[b]);  // NaN blocks leave no outliers anyway
  }
  if (vsum != nullptr && !plan.sum_in_blocks) *vsum = SumAbs(row, plan.k, *vsum);
  return row_amax;
}

// The row's outliers (at most kMaxOutliersPerRow, into channel and value), given its sum of |x|
// and its largest |x|; returns how many.
HWY_INLINE uint32_t FindRowOutliers(const QuantizeRowsPlan& plan, const float* HWY_RESTRICT row,
                                    hn::Vec<QuantTag> vsum, float row_amax,
                                    uint32_t* HWY_RESTRICT channel, float* HWY_RESTRICT value) {
  const float threshold = OutlierThreshold(vsum, plan.k);
  // Zero or non-finite rows have nothing to separate.
  if (!(threshold > 0.0f && row_amax > threshold)) return 0;
  return FindOutliers(row, plan.k, threshold, channel, value);
}

// Second pass: each block's scale from its largest |x| (other than the row's outliers, which
// are stored as zeros) and its quantized values, then the row's padding as zeros.
HWY_INLINE void QuantizeRowBlocks(const QuantizeRowsPlan& plan, const float* HWY_RESTRICT row,
                                  const uint32_t* channel, uint32_t count,
                                  float* HWY_RESTRICT row_scales, int8_t* HWY_RESTRICT qrow) {
  for (size_t b = 0; b < plan.blocks; ++b) {
    const size_t begin = b * plan.block;
    const size_t n = HWY_MIN(plan.block, plan.k - begin);
    const bool has_outlier = BlockHasOutlier(begin, n, channel, count);
    const float amax =
        has_outlier ? BlockAbsMaxWithoutOutliers(row, begin, n, channel, count) : row_scales[b];
    // Blocks below 1e-30 quantize to zeros: 127 / amax would overflow for the tiniest. A
    // non-finite block keeps its NaN scale, so its products come out NaN, never silently finite.
    const bool usable = amax > 1e-30f;
    if (amax == amax) row_scales[b] = usable ? amax / 127.0f : 0.0f;
    QuantizeBlock(row + begin, n, usable ? 127.0f / amax : 0.0f, plan.zero, qrow + begin);
    for (uint32_t i = 0; has_outlier && i < count; ++i) {
      if (channel[i] >= begin && channel[i] < begin + n) qrow[channel[i]] = plan.zero;
    }
  }
  memset(qrow + plan.k, plan.zero, plan.ldq - plan.k);
}

// Exported: plain inline, as a one-target build (EDGEATTN_TARGETS=phone) calls it directly
// from code without this target's attributes, where always_inline cannot apply.
// Two passes over each row: every block's largest |x| (with the row's sum of |x|, for the
// outlier threshold), then the quantization; rows with outliers take a third, to find them.
inline void QuantizeRowsI8Impl(const float* HWY_RESTRICT x, size_t ldx, size_t rows, size_t k,
                               size_t block, int8_t* HWY_RESTRICT q, float* HWY_RESTRICT scales,
                               const RowOutliers& outliers, QuantizedBytes bytes) {
  const QuantizeRowsPlan plan = MakeQuantizeRowsPlan(k, block, bytes);
  const bool with_outliers = outliers.count != nullptr;
  for (size_t r = 0; r < rows; ++r) {
    const float* HWY_RESTRICT row = x + r * ldx;
    float* HWY_RESTRICT row_scales = scales + r * plan.blocks;
    auto vsum = hn::Zero(QuantTag());
    const float row_amax = MeasureRowBlocks(plan, row, with_outliers ? &vsum : nullptr, row_scales);
    const uint32_t* channel = nullptr;
    uint32_t count = 0;
    if (with_outliers) {
      uint32_t* row_channels = outliers.channel + r * kMaxOutliersPerRow;
      count = FindRowOutliers(plan, row, vsum, row_amax, row_channels,
                              outliers.value + r * kMaxOutliersPerRow);
      outliers.count[r] = count;
      channel = row_channels;
    }
    QuantizeRowBlocks(plan, row, channel, count, row_scales, q + r * plan.ldq);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_QUANTIZE_INL_H_
