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

// Natural-log units to the attention cores' base-2 units (scores s log2(e), exponentials 2^x).
inline constexpr float kLog2e = 1.44269504088896340736f;

// The row operations work on rows of the core's scratch, whose storage extends to a whole number
// of vectors: they read and may overwrite the lanes past n up to the next multiple of Lanes, so
// that a row's tail costs one select instead of a partial load and store.

// Calls body(vector) over x[0, RoundUp(n, Lanes)). The lanes of the last vector past n hold
// `fill`, chosen so that they change no result (-inf: no maximum, and exp gives 0). body returns
// the vector to store back (kWrite), or the input unchanged for read-only passes.
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
    const auto v =
        body(hn::IfThenElse(hn::FirstN(d, n - i), hn::LoadU(d, x + i), hn::Set(d, fill)));
    if constexpr (kWrite) hn::StoreU(v, d, x + i);
  }
}

// Maximum of x[0, n), n >= 1. NaN may or may not show in the result: callers that must see NaN
// find it in the exponentials' sum (Exp2ShiftSumF32) or with RowHasNaNF32. Four independent
// maxima, so that the loop runs at the load rate instead of one maximum's latency per vector.
HWY_INLINE float RowMaxF32(const float* HWY_RESTRICT x, size_t n) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const RowTag d;
  const size_t N = hn::Lanes(d);
  auto m0 = hn::Set(d, kNegInf), m1 = m0, m2 = m0, m3 = m0;
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    m0 = hn::Max(m0, hn::LoadU(d, x + i));
    m1 = hn::Max(m1, hn::LoadU(d, x + i + N));
    m2 = hn::Max(m2, hn::LoadU(d, x + i + 2 * N));
    m3 = hn::Max(m3, hn::LoadU(d, x + i + 3 * N));
  }
  ForEachVector<false>(const_cast<float*>(x) + i, n - i, kNegInf, [&](auto v) HWY_ATTR {
    m0 = hn::Max(m0, v);
    return v;
  });
  return hn::GetLane(hn::MaxOfLanes(d, hn::Max(hn::Max(m0, m1), hn::Max(m2, m3))));
}

HWY_INLINE bool RowHasNaNF32(const float* HWY_RESTRICT x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != x[i]) return true;
  }
  return false;
}

// 2^x lane by lane for x <= 0, within 3 ulp: a degree-5 minimax polynomial on the reduced
// argument, 0 below 2^-126 (and for -inf), NaN for NaN. The attention core keeps its scores in
// base 2 (log2(e) is folded into the query scale), so this is its whole exponential: 9 vector
// operations on AVX-512 and 12 elsewhere, where a natural exp with range checks takes 28.
#if EDGEATTN_TARGET_HAS_AVX512
HWY_INLINE hn::Vec512<float> Exp2NonPositive(hn::Full512<float> d, hn::Vec512<float> x) {
  // f = x - floor(x) in [0, 1] (vreduceps; -inf gives 0), then p(f) * 2^floor(x) (vscalefps:
  // 0 for -inf, gradual underflow).
  const hn::Vec512<float> f{_mm512_reduce_ps(x.raw, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)};
  auto p = hn::MulAdd(hn::Set(d, 0x1.ec320ap-10f), f, hn::Set(d, 0x1.26900cp-7f));
  p = hn::MulAdd(p, f, hn::Set(d, 0x1.c95446p-5f));
  p = hn::MulAdd(p, f, hn::Set(d, 0x1.ebd5a8p-3f));
  p = hn::MulAdd(p, f, hn::Set(d, 0x1.62e4f6p-1f));
  p = hn::MulAdd(p, f, hn::Set(d, 0x1.fffffep-1f));
  return hn::Vec512<float>{_mm512_scalef_ps(p.raw, x.raw)};
}
#endif

template <class D>
HWY_INLINE hn::Vec<D> Exp2NonPositive(D d, hn::Vec<D> x) {
  const hn::RebindToSigned<D> di;
  // t = x + 1.5 * 2^23 + 127 rounds x to the integer n, and its low bits hold n + 127: the
  // biased exponent of 2^n. f = x - n in [-0.5, 0.5].
  const auto magic = hn::Set(d, 0x1.8p23f + 127.0f);
  const auto t = hn::Add(x, magic);
  const auto f = hn::Sub(x, hn::Sub(t, magic));
  auto p = hn::MulAdd(hn::Set(d, 0x1.5c08e6p-10f), f, hn::Set(d, 0x1.3d0c52p-7f));
  p = hn::MulAdd(p, f, hn::Set(d, 0x1.c6b6e4p-5f));
  p = hn::MulAdd(p, f, hn::Set(d, 0x1.ebf918p-3f));
  p = hn::MulAdd(p, f, hn::Set(d, 0x1.62e428p-1f));
  p = hn::MulAdd(p, f, hn::Set(d, 0x1.000002p+0f));
  const auto pow2n = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, t)));
  // Below -126, 2^n has no normal exponent; -inf went NaN on the way (f = -inf + inf).
  return hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, -126.0f)), hn::Mul(p, pow2n));
}

// x[i] = 2^(x[i] - shift) for i < n (0 past n); returns the sums of the results by lane, whose
// horizontal sum the caller takes once per row rather than once per tile. shift is finite and no
// x[i] exceeds it (the row maximum), so the results are in [0, 1]; -inf (masked scores) gives 0,
// and NaN gives NaN and a NaN sum. Two sums, so that the loop does not wait on one addition's
// latency per vector: vector j goes to sum j % 2 whatever n is, so that a row offered more keys,
// all masked (a larger block's), sums to the same bits.
HWY_INLINE hn::Vec<RowTag> Exp2ShiftSumF32(float* HWY_RESTRICT x, size_t n, float shift) {
  const RowTag d;
  const size_t N = hn::Lanes(d);
  const auto vshift = hn::Set(d, shift);
  const auto exp_at = [&](size_t at, size_t count) HWY_ATTR {
    auto v = hn::LoadU(d, x + at);
    if (count < N) {
      v = hn::IfThenElse(hn::FirstN(d, count), v,
                         hn::Set(d, -std::numeric_limits<float>::infinity()));
    }
    const auto e = Exp2NonPositive(d, hn::Sub(v, vshift));
    hn::StoreU(e, d, x + at);
    return e;
  };
  auto sum0 = hn::Zero(d), sum1 = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    sum0 = hn::Add(sum0, exp_at(i, N));
    sum1 = hn::Add(sum1, exp_at(i + N, N));
  }
  if (i + N < n) {  // a whole vector (even) and a partial one (odd) remain
    sum0 = hn::Add(sum0, exp_at(i, N));
    sum1 = hn::Add(sum1, exp_at(i + N, n - i - N));
  } else if (i < n) {
    sum0 = hn::Add(sum0, exp_at(i, n - i));
  }
  return hn::Add(sum0, sum1);
}

// x[i] = cap * tanh(x[i] / cap) for i < n (logit soft-capping); cap > 0. An overflowed score of
// -inf becomes -cap and +inf becomes cap, as in the reference (the masks come after the cap).
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
