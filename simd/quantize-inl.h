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

// Finds the row's outliers (see quantize.h), largest first; returns how many.
HWY_INLINE uint32_t FindOutliers(const float* HWY_RESTRICT row, size_t k,
                                 uint32_t* HWY_RESTRICT channel, float* HWY_RESTRICT value) {
  const QuantTag d;
  const size_t N = hn::Lanes(d);
  auto vsum = hn::Zero(d);
  for (size_t i = 0; i < k; i += N) vsum = hn::Add(vsum, hn::Abs(LoadBlockPart(row, i, k)));
  const float mean_abs = hn::GetLane(hn::SumOfLanes(d, vsum)) / static_cast<float>(k);
  const float threshold = kOutlierThreshold * kSigmaPerMeanAbs * mean_abs;
  if (!(threshold > 0.0f)) return 0;  // zero or non-finite row: nothing to separate
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

// Exported: plain inline, as a one-target build (EDGEATTN_TARGETS=phone) calls it directly
// from code without this target's attributes, where always_inline cannot apply.
inline void QuantizeRowsI8Impl(const float* HWY_RESTRICT x, size_t ldx, size_t rows, size_t k,
                                   size_t block, int8_t* HWY_RESTRICT q,
                                   float* HWY_RESTRICT scales, const RowOutliers& outliers) {
  const QuantTag d;
  const hn::Rebind<int8_t, QuantTag> d8;
  const size_t N = hn::Lanes(d);
  const size_t ldq = QuantizedRowStride(k);
  const size_t blocks = QuantBlockCount(k, block);
  for (size_t r = 0; r < rows; ++r) {
    const float* HWY_RESTRICT row = x + r * ldx;
    int8_t* HWY_RESTRICT qrow = q + r * ldq;
    uint32_t* channel = nullptr;
    uint32_t count = 0;
    if (outliers.count != nullptr) {
      channel = outliers.channel + r * kMaxOutliersPerRow;
      count = FindOutliers(row, k, channel, outliers.value + r * kMaxOutliersPerRow);
      outliers.count[r] = count;
    }
    for (size_t b = 0; b < blocks; ++b) {
      const size_t begin = b * block;
      const size_t n = HWY_MIN(block, k - begin);
      bool has_outlier = false;
      for (uint32_t i = 0; i < count; ++i) {
        has_outlier = has_outlier || (channel[i] >= begin && channel[i] < begin + n);
      }
      auto vmax = hn::Zero(d);
      auto bad = hn::FirstN(d, 0);  // NaN or inf seen; no MaskFalse in Highway 1.0.3
      float outlier_chunks_max = 0.0f;  // the block's scale comes from its other values
      for (size_t i = 0; i < n; i += N) {
        const auto v = LoadBlockPart(row + begin, i, n);
        bad = hn::Or(bad, hn::Or(hn::IsNaN(v), hn::IsInf(v)));
        bool chunk_has_outlier = false;
        for (uint32_t o = 0; has_outlier && o < count; ++o) {
          chunk_has_outlier = chunk_has_outlier ||
                              (channel[o] >= begin + i && channel[o] < begin + HWY_MIN(i + N, n));
        }
        if (!chunk_has_outlier) {
          vmax = hn::Max(vmax, hn::Abs(v));
          continue;
        }
        for (size_t j = begin + i; j < begin + HWY_MIN(i + N, n); ++j) {
          if (!IsOutlierChannel(j, channel, count)) {
            outlier_chunks_max = HWY_MAX(outlier_chunks_max, row[j] < 0 ? -row[j] : row[j]);
          }
        }
      }
      const float amax = HWY_MAX(hn::GetLane(hn::MaxOfLanes(d, vmax)), outlier_chunks_max);
      // Blocks below 1e-30 quantize to zeros: 127 / amax would overflow for the tiniest.
      const bool usable = amax > 1e-30f;
      // A non-finite block gets a NaN scale, so its products come out NaN, never silently finite.
      scales[r * blocks + b] = !hn::AllFalse(d, bad) ? std::numeric_limits<float>::quiet_NaN()
                               : usable               ? amax / 127.0f
                                                      : 0.0f;
      const float inv_scalar = usable ? 127.0f / amax : 0.0f;
      const auto inv = hn::Set(d, inv_scalar);
      for (size_t i = 0; i < n; i += N) {
        const auto v = hn::NearestInt(hn::Mul(LoadBlockPart(row + begin, i, n), inv));
        // |v| <= 127: the saturating demotion never saturates.
        StorePartial(d8, hn::DemoteTo(d8, v), qrow + begin + i, n - i);
      }
      if (has_outlier) {
        for (uint32_t i = 0; i < count; ++i) {
          if (channel[i] >= begin && channel[i] < begin + n) qrow[channel[i]] = 0;
        }
      }
    }
    memset(qrow + k, 0, ldq - k);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_QUANTIZE_INL_H_
