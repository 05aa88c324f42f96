// Per-target transpose of 32-bit words (floats, or bf16 pairs as uint32_t): 4 columns of as
// many rows as a vector has lanes into 4 whole vectors, which is how the K/V packs turn
// position-major rows into the key panels' columns.

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

// The vectors of the wide transpose: up to four 128-bit blocks on x86 (AVX2: two, AVX-512:
// four); one block elsewhere (one lane on HWY_SCALAR), as NEON's vectors are one block and
// scalable SVE's OddEvenBlocks is not the block select LoadRowBlocks needs.
#if HWY_ARCH_X86
template <typename T>
using TransposeTag = hn::CappedTag<T, 16>;
#else
template <typename T>
using TransposeTag = hn::CappedTag<T, 4>;
#endif

#if HWY_TARGET != HWY_SCALAR
// Four 32-bit words loaded as bytes, which may alias anything: the bf16 pack's words are pairs
// of uint16_t, and reading a uint16_t array through uint32_t is undefined (strict aliasing).
// The same instruction as a load of T.
template <class D>
HWY_INLINE hn::VFromD<D> LoadWordsAsBytes(D d, const hn::TFromD<D>* HWY_RESTRICT p) {
  const hn::Repartition<uint8_t, D> d8;
  return hn::BitCast(d, hn::LoadU(d8, reinterpret_cast<const uint8_t*>(p)));
}

// Block b of the result: words [0, 4) of row 4 b from src (rows ld_src apart), for each block
// of d. On x86 the blocks come from broadcast loads (load ports only) and blends (either vector
// port), not from shuffles across blocks, which only port 5 runs.
template <class D>
HWY_INLINE hn::VFromD<D> LoadRowBlocks(D d, const hn::TFromD<D>* HWY_RESTRICT src,
                                       size_t ld_src) {
  constexpr size_t kBlocks = hn::MaxLanes(D()) / 4;
  static_assert(kBlocks == 1 || kBlocks == 2 || kBlocks == 4, "one, two or four blocks");
  if constexpr (kBlocks == 1) {
    return LoadWordsAsBytes(d, src);
  } else {
    const hn::Repartition<uint8_t, D> d8;
    const auto block = [d, d8, src, ld_src](size_t b) HWY_ATTR {
      return hn::BitCast(d, hn::LoadDup128(d8, reinterpret_cast<const uint8_t*>(
                                                   src + 4 * b * ld_src)));
    };
    const auto blocks01 = hn::OddEvenBlocks(block(1), block(0));
    if constexpr (kBlocks == 2) {
      return blocks01;
    } else {
      return hn::ConcatUpperLower(d, hn::OddEvenBlocks(block(3), block(2)), blocks01);
    }
  }
}

// dst[c * ld_dst + r] = src[r * ld_src + c] for c < 4 and r < Lanes(d): four columns of
// Lanes(d) rows into four whole vectors. Block b of vector j holds row 4 b + j; two rounds of
// interleaves within blocks then transpose each block's 4 x 4.
template <class D>
HWY_INLINE void TransposeFourColumns(D d, const hn::TFromD<D>* HWY_RESTRICT src, size_t ld_src,
                                     hn::TFromD<D>* HWY_RESTRICT dst, size_t ld_dst) {
  static_assert(sizeof(hn::TFromD<D>) == 4, "32-bit words");
  const hn::Repartition<uint64_t, D> d64;
  const auto r0 = LoadRowBlocks(d, src, ld_src), r1 = LoadRowBlocks(d, src + ld_src, ld_src);
  const auto r2 = LoadRowBlocks(d, src + 2 * ld_src, ld_src);
  const auto r3 = LoadRowBlocks(d, src + 3 * ld_src, ld_src);
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
// memcpy for the reason LoadWordsAsBytes gives.
template <class D>
HWY_INLINE void TransposeFourColumns(D d, const hn::TFromD<D>* HWY_RESTRICT src, size_t ld_src,
                                     hn::TFromD<D>* HWY_RESTRICT dst, size_t ld_dst) {
  for (size_t r = 0; r < hn::Lanes(d); ++r) {
    for (size_t c = 0; c < 4; ++c) {
      memcpy(dst + c * ld_dst + r, src + r * ld_src + c, sizeof(hn::TFromD<D>));
    }
  }
}
#endif

// dst[c * ld_dst + r] = src[r * ld_src + c] for c < n and r < Lanes(d): n columns of Lanes(d)
// rows, four at a time (a whole vector of dst each), the last n % 4 word by word.
template <class D>
HWY_INLINE void TransposeColumns(D d, const hn::TFromD<D>* HWY_RESTRICT src, size_t ld_src,
                                 size_t n, hn::TFromD<D>* HWY_RESTRICT dst, size_t ld_dst) {
  size_t c = 0;
  for (; c + 4 <= n; c += 4) TransposeFourColumns(d, src + c, ld_src, dst + c * ld_dst, ld_dst);
  for (; c < n; ++c) {
    for (size_t r = 0; r < hn::Lanes(d); ++r) dst[c * ld_dst + r] = src[r * ld_src + c];
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_TRANSPOSE_WORDS_INL_H_
