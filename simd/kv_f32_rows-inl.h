// Per-target packing of float keys and values into the fp32 core's layout (attention.h): key
// panels of 64 positions x dk rows (the GEMM weight layout, the scores' B operand), value rows of
// dk and a zeroed tail. The keys are a transpose: it runs on a vector of positions x 4 channels
// at a time (transpose_words-inl.h) instead of one scattered store per value.

#if defined(EDGEATTN_SIMD_KV_F32_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_KV_F32_ROWS_INL_H_
#undef EDGEATTN_SIMD_KV_F32_ROWS_INL_H_
#else
#define EDGEATTN_SIMD_KV_F32_ROWS_INL_H_
#endif

#include <stddef.h>
#include <string.h>

#include "hwy/highway.h"
#include "simd/gemm_f32.h"
#include "simd/panel_tails-inl.h"
#include "simd/partial_vector-inl.h"
#include "simd/prefetch.h"
#include "simd/transpose_words-inl.h"

namespace edgeattn {
namespace simd {
// Floats zeroed past the last value row (attention.cc).
size_t F32ValuesTail(size_t dk);
}  // namespace simd
}  // namespace edgeattn

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A long sequence's keys and values come from projections beyond L2, one row of a head at a
// time: asking for the rows a few positions ahead keeps several misses in flight.
inline constexpr size_t kPackRowsAhead = 8;

// dst[0, n) = src[0, n), inline: a value row is too short for a library call to pay.
HWY_INLINE void CopyF32Row(const float* HWY_RESTRICT src, size_t n, float* HWY_RESTRICT dst) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  for (size_t i = 0; i < n; i += N) StorePartial(d, LoadPartial(d, src + i, n - i), dst + i, n - i);
}

// panel[c * 64] = key[c] for the key's channels from c0 on: its column of a key panel.
HWY_INLINE void ScatterKeyChannels(const float* HWY_RESTRICT key, size_t c0, size_t dk,
                                   float* HWY_RESTRICT panel) {
  for (size_t c = c0; c < dk; ++c) panel[c * kGemmPanelWidth] = key[c];
}

// A call's key and value rows: position t's at k + t ldk and v + t ldv, t < count (v null: keys
// only).
struct F32PackSource {
  const float* k;
  size_t ldk;
  const float* v;
  size_t ldv;
  size_t count;
  size_t dk;
};

// Asks for position t's key and value rows into L1, if the call has it.
HWY_INLINE void PrefetchPosition(const F32PackSource& s, size_t t) {
  if (t >= s.count) return;
  PrefetchF32Row<3>(s.k + t * s.ldk, s.dk);
  if (s.v != nullptr) PrefetchF32Row<3>(s.v + t * s.ldv, s.dk);
}

// Position t's value row to row r of `values`, if the call packs values (s.v and values null
// if not).
HWY_INLINE void CopyValueRow(const F32PackSource& s, size_t t, float* HWY_RESTRICT values,
                             size_t r) {
  if (s.v != nullptr) CopyF32Row(s.v + t * s.ldv, s.dk, values + r * s.dk);
}

// Positions [t + j, t + j + Lanes(d)) of the call: values copied (if any), each asking for the
// rows kPackRowsAhead positions on, then keys transposed into the panel's lanes from
// panel_lane + j.
template <class D>
HWY_INLINE void PackF32Group(D d, const F32PackSource& s, size_t t, size_t j,
                             float* HWY_RESTRICT panel_lane, float* HWY_RESTRICT values) {
  for (size_t r = j; r < j + hn::Lanes(d); ++r) {
    PrefetchPosition(s, t + r + kPackRowsAhead);
    CopyValueRow(s, t + r, values, r);
  }
  // Each channel is a row of the panel: the keys' columns.
  TransposeColumns(d, s.k + (t + j) * s.ldk, s.ldk, s.dk, panel_lane + j, kGemmPanelWidth);
}

// Positions [t, t + n) of the call, all in one key panel from the lane at panel_lane on, their
// values to the rows from `values` on: a vector of positions at a time, then four (the target's
// widest transpose, then the 4 x 4), then one by one.
HWY_INLINE void PackF32Run(const F32PackSource& s, size_t t, size_t n,
                           float* HWY_RESTRICT panel_lane, float* HWY_RESTRICT values) {
  const TransposeTag<float> d_wide;
  const hn::CappedTag<float, 4> d4;
  size_t j = 0;
  for (; j + hn::Lanes(d_wide) <= n; j += hn::Lanes(d_wide)) {
    PackF32Group(d_wide, s, t, j, panel_lane, values);
  }
  for (; j + hn::Lanes(d4) <= n; j += hn::Lanes(d4)) PackF32Group(d4, s, t, j, panel_lane, values);
  for (; j < n; ++j) {
    PrefetchPosition(s, t + j + kPackRowsAhead);
    CopyValueRow(s, t + j, values, j);
    ScatterKeyChannels(s.k + (t + j) * s.ldk, 0, s.dk, panel_lane + j);
  }
}

// Zeros in the key lanes past the last stored position (the tile kernel computes them, never
// stores them) and in the values' tail, so that no stale or uninitialised value is ever read
// from the layout (values read in place are the caller's: attention.h).
HWY_INLINE void ZeroF32Tails(size_t stored, size_t dk, float* HWY_RESTRICT keys,
                             float* HWY_RESTRICT values) {
  if (stored % kGemmPanelWidth != 0) {
    const size_t row_bytes = kGemmPanelWidth * sizeof(float);
    float* panel = keys + (stored / kGemmPanelWidth) * dk * kGemmPanelWidth;
    FillRowTails(reinterpret_cast<uint8_t*>(panel), dk, row_bytes,
                 stored % kGemmPanelWidth * sizeof(float), row_bytes, 0);
  }
  if (values != nullptr) memset(values + stored * dk, 0, F32ValuesTail(dk) * sizeof(float));
}

// The fp32 core's AttentionKernel::pack (plain inline: a one-target build takes its address from
// code without this target's attributes, as attention-inl.h explains). Keys first + t for t <
// count go to lane (first + t) % 64 of panel (first + t) / 64, values to row first + t (none with
// values null, as the core can read value rows in place): a run of positions per panel.
inline void PackF32KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                              size_t count, size_t stored, size_t dk, void* keys_bytes,
                              void* values_bytes) {
  float* keys = static_cast<float*>(keys_bytes);
  float* values = static_cast<float*>(values_bytes);
  const F32PackSource source{k, ldk, values != nullptr ? v : nullptr, ldv, count, dk};
  for (size_t t = 0; t < count;) {
    const size_t key = first + t;
    const size_t lane = key % kGemmPanelWidth;
    const size_t n = HWY_MIN(count - t, kGemmPanelWidth - lane);
    float* panel = keys + (key / kGemmPanelWidth) * dk * kGemmPanelWidth;
    PackF32Run(source, t, n, panel + lane, values != nullptr ? values + key * dk : nullptr);
    t += n;
  }
  ZeroF32Tails(stored, dk, keys, values);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_KV_F32_ROWS_INL_H_
