// Per-target RMS norm and rotary embedding of one head (simd/qk_transforms.h).

#if defined(EDGEATTN_SIMD_QK_TRANSFORMS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_QK_TRANSFORMS_INL_H_
#undef EDGEATTN_SIMD_QK_TRANSFORMS_INL_H_
#else
#define EDGEATTN_SIMD_QK_TRANSFORMS_INL_H_
#endif

#include <math.h>
#include <stddef.h>

#include "hwy/highway.h"
#include "simd/partial_vector-inl.h"
#include "simd/qk_transforms.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using HeadTag = hn::CappedTag<float, 16>;

// x[0, n) = x / sqrt(mean(x^2) + eps) * weight, as PyTorch's RMSNorm: the scale first, then the
// weight.
HWY_INLINE void RmsNormHead(float* HWY_RESTRICT x, size_t n, const float* HWY_RESTRICT weight,
                            float eps) {
  const HeadTag d;
  const size_t N = hn::Lanes(d);
  auto sum = hn::Zero(d);
  for (size_t i = 0; i < n; i += N) {
    const auto v = LoadPartial(d, x + i, n - i);
    sum = hn::MulAdd(v, v, sum);
  }
  const float mean = hn::GetLane(hn::SumOfLanes(d, sum)) / static_cast<float>(n);
  const auto scale = hn::Set(d, 1.0f / sqrtf(mean + eps));
  for (size_t i = 0; i < n; i += N) {
    const auto v = hn::Mul(LoadPartial(d, x + i, n - i), scale);
    StorePartial(d, hn::Mul(v, LoadPartial(d, weight + i, n - i)), x + i, n - i);
  }
}

// Halves: pair i is (x[i], x[i + h]), h = rotary_dim / 2.
HWY_INLINE void RotateHalves(float* HWY_RESTRICT x, size_t rotary_dim,
                             const float* HWY_RESTRICT cos, const float* HWY_RESTRICT sin) {
  const HeadTag d;
  const size_t N = hn::Lanes(d);
  const size_t h = rotary_dim / 2;
  for (size_t i = 0; i < h; i += N) {
    const size_t count = h - i;
    const auto x1 = LoadPartial(d, x + i, count);
    const auto x2 = LoadPartial(d, x + h + i, count);
    const auto c = LoadPartial(d, cos + i, count);
    const auto s = LoadPartial(d, sin + i, count);
    StorePartial(d, hn::NegMulAdd(x2, s, hn::Mul(x1, c)), x + i, count);
    StorePartial(d, hn::MulAdd(x1, s, hn::Mul(x2, c)), x + h + i, count);
  }
}

// Interleaved: pair i is (x[2i], x[2i + 1]); the tables hold signed, duplicated entries.
HWY_INLINE void RotateInterleaved(float* HWY_RESTRICT x, size_t rotary_dim,
                                  const float* HWY_RESTRICT cos, const float* HWY_RESTRICT sin) {
#if HWY_TARGET == HWY_SCALAR
  // One lane: no pairs within a vector.
  for (size_t i = 0; i < rotary_dim; i += 2) {
    const float x0 = x[i], x1 = x[i + 1];
    x[i] = x0 * cos[i] + x1 * sin[i];
    x[i + 1] = x1 * cos[i + 1] + x0 * sin[i + 1];
  }
#else
  const HeadTag d;
  const size_t N = hn::Lanes(d);  // even: pairs never straddle two vectors
  for (size_t i = 0; i < rotary_dim; i += N) {
    const size_t count = rotary_dim - i;
    const auto v = LoadPartial(d, x + i, count);
    const auto c = LoadPartial(d, cos + i, count);
    const auto s = LoadPartial(d, sin + i, count);
    StorePartial(d, hn::MulAdd(hn::Reverse2(d, v), s, hn::Mul(v, c)), x + i, count);
  }
#endif
}

HWY_NOINLINE void TransformHeadsF32(float* HWY_RESTRICT x, size_t heads, size_t dk,
                                    const HeadTransform& t) {
  for (size_t h = 0; h < heads; ++h) {
    float* head = x + h * dk;
    if (t.norm_weight != nullptr) RmsNormHead(head, dk, t.norm_weight, t.norm_eps);
    if (t.rotary_dim == 0) continue;
    if (t.interleaved) {
      RotateInterleaved(head, t.rotary_dim, t.cos, t.sin);
    } else {
      RotateHalves(head, t.rotary_dim, t.cos, t.sin);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_QK_TRANSFORMS_INL_H_
