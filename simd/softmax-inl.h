// Per-target row operations of the attention core's online softmax: the row maximum, the
// exponentials and their sum, scaling, filling, and the scaled store of its epilogue.

#if defined(EDGEATTN_SIMD_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_SOFTMAX_INL_H_
#undef EDGEATTN_SIMD_SOFTMAX_INL_H_
#else
#define EDGEATTN_SIMD_SOFTMAX_INL_H_
#endif

#include <math.h>
#include <stddef.h>
#include <string.h>

#include <limits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "simd/highway_compat.h"
#include "simd/partial_vector-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using RowTag = hn::CappedTag<float, 16>;

// Calls body(vector) over x[0, n). The lanes of the last vector past n hold `fill`, chosen so
// that they change no result (-inf: no maximum, and exp gives 0), which spares the loop a mask.
// x need not be padded. body returns the vector to store back (kWrite), or the input unchanged
// for read-only passes.
template <bool kWrite, class Body>
HWY_INLINE void ForEachVector(float* HWY_RESTRICT x, size_t n, float fill, const Body& body) {
  const RowTag d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = body(hn::LoadU(d, x + i));
    if constexpr (kWrite) hn::StoreU(v, d, x + i);
  }
  if (i < n) {
    const auto v = body(LoadPartial(d, x + i, n - i, fill));
    if constexpr (kWrite) StorePartial(d, v, x + i, n - i);
  }
}

// Maximum of x[0, n) and whether there was a NaN (*has_nan); the maximum is unspecified when
// there was. n >= 1.
HWY_INLINE float RowMaxF32(const float* HWY_RESTRICT x, size_t n, bool* has_nan) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const RowTag d;
  auto vmax = hn::Set(d, kNegInf);
  auto nan = hn::FirstN(d, 0);  // no MaskFalse in Highway 1.0.3
  ForEachVector<false>(const_cast<float*>(x), n, kNegInf, [&](auto v) HWY_ATTR {
    nan = hn::Or(nan, hn::IsNaN(v));
    vmax = hn::Max(vmax, v);
    return v;
  });
  *has_nan = !hn::AllFalse(d, nan);
  return hn::GetLane(hn::MaxOfLanes(d, vmax));
}

// x[i] = exp(x[i] * scale - shift) for i < n; returns the sum of the results.
// Callers pass a finite shift (the scaled row maximum) and a positive scale, so finite x give
// exp(<= 0) <= 1, and -inf (masked scores, and the tail lanes) gives 0.
HWY_INLINE float ExpShiftSumF32(float* HWY_RESTRICT x, size_t n, float scale, float shift) {
  const RowTag d;
  const auto vscale = hn::Set(d, scale);
  const auto vshift = hn::Set(d, shift);
  auto sum = hn::Zero(d);
  ForEachVector<true>(x, n, -std::numeric_limits<float>::infinity(), [&](auto v) HWY_ATTR {
    auto arg = hn::MulSub(v, vscale, vshift);
#if EDGEATTN_TARGET_IS_EMULATED
    // Masked scores are -inf. Exp returns 0 below -104, but on the emulated targets its
    // float-to-int step turns -inf into NaN first: clamp to just below that threshold.
    arg = hn::Max(arg, hn::Set(d, -105.0f));
#endif
    const auto e = hn::Exp(d, arg);
    sum = hn::Add(sum, e);
    return e;
  });
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

// x[i] = cap * tanh(x[i] / cap) for i < n (logit soft-capping); cap > 0. -inf stays -inf.
HWY_INLINE void SoftcapRowF32(float* HWY_RESTRICT x, size_t n, float cap) {
  const RowTag d;
  const auto vcap = hn::Set(d, cap);
  const auto vinv = hn::Set(d, 1.0f / cap);
  ForEachVector<true>(x, n, 0.0f, [&](auto v) HWY_ATTR {
    return hn::Mul(vcap, hn::Tanh(d, hn::Mul(v, vinv)));
  });
}

// x[i] *= scale for i < n.
HWY_INLINE void ScaleRowF32(float* HWY_RESTRICT x, size_t n, float scale) {
  const RowTag d;
  const auto vscale = hn::Set(d, scale);
  ForEachVector<true>(x, n, 0.0f, [&](auto v) HWY_ATTR { return hn::Mul(v, vscale); });
}

HWY_INLINE void FillRowF32(float* HWY_RESTRICT x, size_t n, float value) {
  for (size_t i = 0; i < n; ++i) x[i] = value;
}

// dst[i] = src[i] * scale for i < n. Neither row needs padding: the neighbouring columns of dst
// belong to other heads, possibly written by other threads at the same time.
HWY_INLINE void StoreRowScaledF32(const float* HWY_RESTRICT src, size_t n, float scale,
                                  float* HWY_RESTRICT dst) {
  const RowTag d;
  const size_t N = hn::Lanes(d);
  const auto vscale = hn::Set(d, scale);
  for (size_t i = 0; i < n; i += N) {
    StorePartial(d, hn::Mul(LoadPartial(d, src + i, n - i), vscale), dst + i, n - i);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_SOFTMAX_INL_H_
