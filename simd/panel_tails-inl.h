// Per-target filling of the lanes past the last position in the K/V panel layouts: each pack
// keeps them at the value that scores zero, in every row of the position's panel. A decode step
// appends one position and so fills almost a whole panel's worth of short row tails per head;
// memset there compiles to `rep stos`, whose start-up cost per row was most of the step's pack.

#if defined(EDGEATTN_SIMD_PANEL_TAILS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_PANEL_TAILS_INL_H_
#undef EDGEATTN_SIMD_PANEL_TAILS_INL_H_
#else
#define EDGEATTN_SIMD_PANEL_TAILS_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "simd/partial_vector-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Bytes [from, row_bytes) of `rows` rows, `stride` bytes apart from `base`, become the 16-bit
// pattern `fill`: the vector holding `from` read, blended and written back (the rows are the
// caller's alone), the rest stored; a partial vector at a row's end. from, row_bytes and stride
// are even.
HWY_INLINE void FillRowTails(uint8_t* base, size_t rows, size_t stride, size_t from,
                             size_t row_bytes, uint16_t fill) {
  const hn::ScalableTag<uint16_t> d;
  const size_t N = hn::Lanes(d);
  const size_t first = from / 2, end = row_bytes / 2;
  const auto fills = hn::Set(d, fill);
  for (size_t r = 0; r < rows; ++r) {
    uint16_t* row = reinterpret_cast<uint16_t*>(base + r * stride);
    size_t j = first / N * N;
    if (j < first) {
      const auto kept = LoadPartial(d, row + j, end - j);
      StorePartial(d, hn::IfThenElse(hn::FirstN(d, first - j), kept, fills), row + j, end - j);
      j += N;
    }
    for (; j < end; j += N) StorePartial(d, fills, row + j, end - j);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_PANEL_TAILS_INL_H_
