// Per-target application of an AttentionMask to a tile of scores.

#if defined(EDGEATTN_SIMD_ATTENTION_MASK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_ATTENTION_MASK_INL_H_
#undef EDGEATTN_SIMD_ATTENTION_MASK_INL_H_
#else
#define EDGEATTN_SIMD_ATTENTION_MASK_INL_H_
#endif

#include <stddef.h>

#include <limits>

#include "hwy/highway.h"
#include "simd/attention_mask.h"
#include "simd/partial_vector-inl.h"
#include "simd/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// x[i] += add[i] * scale for i < n.
HWY_INLINE void AddScaledRowF32(float* HWY_RESTRICT x, const float* HWY_RESTRICT add, float scale,
                                size_t n) {
  const RowTag d;
  const size_t N = hn::Lanes(d);
  const auto vscale = hn::Set(d, scale);
  for (size_t i = 0; i < n; i += N) {
    const size_t count = HWY_MIN(N, n - i);
    StorePartial(d,
                 hn::MulAdd(LoadPartial(d, add + i, count), vscale, LoadPartial(d, x + i, count)),
                 x + i, count);
  }
}

// x[i] = -inf where pad[i] is -inf, for i < n.
HWY_INLINE void PadRowF32(float* HWY_RESTRICT x, const float* HWY_RESTRICT pad, size_t n) {
  const RowTag d;
  const size_t N = hn::Lanes(d);
  const auto neg_inf = hn::Set(d, -std::numeric_limits<float>::infinity());
  for (size_t i = 0; i < n; i += N) {
    const size_t count = HWY_MIN(N, n - i);
    const auto padded = hn::Eq(LoadPartial(d, pad + i, count), neg_inf);
    StorePartial(d, hn::IfThenElse(padded, neg_inf, LoadPartial(d, x + i, count)), x + i, count);
  }
}

HWY_INLINE bool AllNegInfF32(const float* HWY_RESTRICT x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!(x[i] == -std::numeric_limits<float>::infinity())) return false;
  }
  return true;
}

// True when the mask removes keys [t0, t0 + keys) for every row [i0, i0 + rows): the tile then
// costs nothing. (Keys past VisibleEnd are never offered: that limit is not checked here.)
HWY_INLINE bool TileMasked(const AttentionMask& mask, size_t i0, size_t rows, size_t t0,
                           size_t keys) {
  if (t0 + keys <= mask.VisibleBegin(i0)) return true;
  if (mask.key_padding != nullptr && AllNegInfF32(mask.key_padding + t0, keys)) return true;
  if (mask.additive == nullptr) return false;
  for (size_t r = 0; r < rows; ++r) {
    if (!AllNegInfF32(mask.additive + (i0 + r) * mask.ld_additive + t0, keys)) return false;
  }
  return true;
}

// scores[0, keys) of query row i for keys [t0, t0 + keys), in `units` per natural-log unit (the
// core's base-2 scores: log2(e)): adds the additive mask in those units, and sets padded keys and
// keys the row may not see to -inf.
HWY_INLINE void ApplyMaskRow(const AttentionMask& mask, size_t i, size_t t0, size_t keys,
                             float units, float* HWY_RESTRICT scores) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  if (mask.additive != nullptr) {
    AddScaledRowF32(scores, mask.additive + i * mask.ld_additive + t0, units, keys);
  }
  if (mask.key_padding != nullptr) PadRowF32(scores, mask.key_padding + t0, keys);
  if (mask.ring != 0) {
    // A ring's positions wrap once within the slots: a test per key (decode rows are few).
    for (size_t j = 0; j < keys; ++j) {
      if (!mask.Sees(i, t0 + j)) scores[j] = kNegInf;
    }
    return;
  }
  const size_t begin = mask.VisibleBegin(i);
  if (begin > t0) FillRowF32(scores, HWY_MIN(keys, begin - t0), kNegInf);
  const size_t visible = mask.VisibleEnd(i, t0 + keys);
  if (visible < t0 + keys) {
    const size_t from = visible > t0 ? visible - t0 : 0;
    FillRowF32(scores + from, keys - from, kNegInf);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_ATTENTION_MASK_INL_H_
