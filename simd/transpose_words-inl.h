// Per-target 4 x 4 transpose of 32-bit words (floats, or bf16 pairs as uint32_t) in 128-bit
// vectors, which every target but HWY_SCALAR has: how the K/V packs turn position-major rows into
// the key panels' columns.

#if defined(EDGEATTN_SIMD_TRANSPOSE_WORDS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_TRANSPOSE_WORDS_INL_H_
#undef EDGEATTN_SIMD_TRANSPOSE_WORDS_INL_H_
#else
#define EDGEATTN_SIMD_TRANSPOSE_WORDS_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
// Four 32-bit words loaded as bytes, which may alias anything: the bf16 pack's words are pairs
// of uint16_t, and reading a uint16_t array through uint32_t is undefined (strict aliasing).
// The same instruction as a load of T.
template <class D>
HWY_INLINE hn::VFromD<D> LoadWordsAsBytes(D d, const hn::TFromD<D>* HWY_RESTRICT p) {
  const hn::Repartition<uint8_t, D> d8;
  return hn::BitCast(d, hn::LoadU(d8, reinterpret_cast<const uint8_t*>(p)));
}

// dst[c * ld_dst + r] = src[r * ld_src + c] for r, c < 4: two rounds of interleaves.
template <typename T>
HWY_INLINE void Transpose4x4(const T* HWY_RESTRICT src, size_t ld_src, T* HWY_RESTRICT dst,
                             size_t ld_dst) {
  static_assert(sizeof(T) == 4, "32-bit words");
  const hn::CappedTag<T, 4> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  const auto r0 = LoadWordsAsBytes(d, src), r1 = LoadWordsAsBytes(d, src + ld_src);
  const auto r2 = LoadWordsAsBytes(d, src + 2 * ld_src);
  const auto r3 = LoadWordsAsBytes(d, src + 3 * ld_src);
  // Rows 0 and 1, and 2 and 3, column by column: (r0 c, r1 c, r0 c+1, r1 c+1) ...
  const auto lo01 = hn::BitCast(d64, hn::InterleaveLower(d, r0, r1));
  const auto lo23 = hn::BitCast(d64, hn::InterleaveLower(d, r2, r3));
  const auto hi01 = hn::BitCast(d64, hn::InterleaveUpper(d, r0, r1));
  const auto hi23 = hn::BitCast(d64, hn::InterleaveUpper(d, r2, r3));
  // ... then pairs of those: (r0 c, r1 c, r2 c, r3 c), one row of dst each.
  hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, lo01, lo23)), d, dst);
  hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, lo01, lo23)), d, dst + ld_dst);
  hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, hi01, hi23)), d, dst + 2 * ld_dst);
  hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, hi01, hi23)), d, dst + 3 * ld_dst);
}
#else
template <typename T>
HWY_INLINE void Transpose4x4(const T* HWY_RESTRICT src, size_t ld_src, T* HWY_RESTRICT dst,
                             size_t ld_dst) {
  // memcpy for the reason LoadWordsAsBytes gives.
  for (size_t r = 0; r < 4; ++r) {
    for (size_t c = 0; c < 4; ++c) memcpy(dst + c * ld_dst + r, src + r * ld_src + c, sizeof(T));
  }
}
#endif

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_TRANSPOSE_WORDS_INL_H_
