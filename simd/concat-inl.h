// Per-target head concatenation. StoreRowScaledF32 is also the attention core's epilogue.

#if defined(EDGEATTN_SIMD_CONCAT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_CONCAT_INL_H_
#undef EDGEATTN_SIMD_CONCAT_INL_H_
#else
#define EDGEATTN_SIMD_CONCAT_INL_H_
#endif

#include <stddef.h>
#include <string.h>

#include "hwy/highway.h"
#include "simd/partial_vector-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// dst[i] = src[i] * scale for i < n. Neither row needs padding: the neighbouring columns of dst
// belong to other heads, possibly written by other threads at the same time.
HWY_INLINE void StoreRowScaledF32(const float* HWY_RESTRICT src, size_t n, float scale,
                                  float* HWY_RESTRICT dst) {
  const hn::CappedTag<float, 16> d;
  const size_t N = hn::Lanes(d);
  const auto vscale = hn::Set(d, scale);
  for (size_t i = 0; i < n; i += N) {
    StorePartial(d, hn::Mul(LoadPartial(d, src + i, n - i), vscale), dst + i, n - i);
  }
}

HWY_INLINE void ConcatHeadsF32Impl(const float* HWY_RESTRICT heads, size_t num_heads, size_t rows,
                                   size_t dk, size_t head_stride, float* HWY_RESTRICT out,
                                   size_t ldo) {
  for (size_t r = 0; r < rows; ++r) {
    for (size_t h = 0; h < num_heads; ++h) {
      StoreRowScaledF32(heads + h * head_stride + r * dk, dk, 1.0f, out + r * ldo + h * dk);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_CONCAT_INL_H_
