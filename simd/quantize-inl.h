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
#include "simd/quantize.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using QuantTag = hn::CappedTag<float, 16>;

// Loads x[i, i + lanes) or, at the end of a block, its remaining n - i values and zeros.
HWY_INLINE hn::Vec<QuantTag> LoadBlockPart(const float* HWY_RESTRICT x, size_t i, size_t n) {
  const QuantTag d;
  if (i + hn::Lanes(d) <= n) return hn::LoadU(d, x + i);
  HWY_ALIGN float buf[hn::MaxLanes(QuantTag())] = {};
  memcpy(buf, x + i, (n - i) * sizeof(float));
  return hn::Load(d, buf);
}

HWY_INLINE void QuantizeRowsI8Impl(const float* HWY_RESTRICT x, size_t ldx, size_t rows, size_t k,
                                   size_t block, int8_t* HWY_RESTRICT q,
                                   float* HWY_RESTRICT scales) {
  const QuantTag d;
  const hn::Rebind<int8_t, QuantTag> d8;
  const size_t N = hn::Lanes(d);
  const size_t ldq = QuantizedRowStride(k);
  const size_t blocks = QuantBlockCount(k, block);
  for (size_t r = 0; r < rows; ++r) {
    const float* HWY_RESTRICT row = x + r * ldx;
    int8_t* HWY_RESTRICT qrow = q + r * ldq;
    for (size_t b = 0; b < blocks; ++b) {
      const size_t begin = b * block;
      const size_t n = HWY_MIN(block, k - begin);
      auto vmax = hn::Zero(d);
      auto bad = hn::FirstN(d, 0);  // NaN or inf seen; no MaskFalse in Highway 1.0.3
      for (size_t i = 0; i < n; i += N) {
        const auto v = LoadBlockPart(row + begin, i, n);
        vmax = hn::Max(vmax, hn::Abs(v));
        bad = hn::Or(bad, hn::Or(hn::IsNaN(v), hn::IsInf(v)));
      }
      // Blocks below 1e-30 quantize to zeros: 127 / amax would overflow for the tiniest.
      const float amax = hn::GetLane(hn::MaxOfLanes(d, vmax));
      const bool usable = amax > 1e-30f;
      // A non-finite block gets a NaN scale, so its products come out NaN, never silently finite.
      scales[r * blocks + b] = !hn::AllFalse(d, bad) ? std::numeric_limits<float>::quiet_NaN()
                               : usable               ? amax / 127.0f
                                                      : 0.0f;
      const auto inv = hn::Set(d, usable ? 127.0f / amax : 0.0f);
      for (size_t i = 0; i < n; i += N) {
        const auto v = hn::NearestInt(hn::Mul(LoadBlockPart(row + begin, i, n), inv));
        const auto q8 = hn::DemoteTo(d8, v);  // |v| <= 127: no saturation happens
        if (i + N <= n) {
          hn::StoreU(q8, d8, qrow + begin + i);
        } else {
          HWY_ALIGN int8_t buf[hn::MaxLanes(QuantTag())];
          hn::Store(q8, d8, buf);
          memcpy(qrow + begin + i, buf, n - i);
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
