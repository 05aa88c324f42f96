// Per-target row phases of the attention cores' online softmax, shared by the fp32 core
// (attention-inl.h) and the bf16 cores (attention_bf16dot-inl.h), which differ in their two
// products only. Each query row of a block keeps a running maximum m, its sum of exponentials l
// by lane (summed across lanes once per block) and its accumulator O; scores are in base 2.
// All HWY_INLINE: they are the bodies of the cores' row loops.

#if defined(EDGEATTN_SIMD_ONLINE_SOFTMAX_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_ONLINE_SOFTMAX_ROWS_INL_H_
#undef EDGEATTN_SIMD_ONLINE_SOFTMAX_ROWS_INL_H_
#else
#define EDGEATTN_SIMD_ONLINE_SOFTMAX_ROWS_INL_H_
#endif

#include <math.h>
#include <stddef.h>

#include <limits>

#include "hwy/highway.h"
#include "simd/attention.h"
#include "simd/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

// A row's maximum, sums and flag before its first tile, with the sink, a key of value zero that
// every row sees: it starts the running maximum and adds 2^(sink - max) to the sum (nothing with
// no sink: 2^-inf = 0). For a core whose first P V tile writes O instead of adding to it.
// args is by reference, as the sink is read where the loop body read it.
HWY_INLINE void StartSoftmaxSums(const AttentionHeadArgs& args, float* HWY_RESTRICT lane_sums,
                                 size_t lanes, float& max, bool& bad) {
  max = args.sink * kLog2e;
  FillRowF32(lane_sums, lanes, 0.0f);
  lane_sums[0] = args.sink == -std::numeric_limits<float>::infinity() ? 0.0f : 1.0f;
  bad = false;
}

// A row's state before its first tile: O = 0 (ldacc channels), and StartSoftmaxSums'.
HWY_INLINE void StartSoftmaxRow(const AttentionHeadArgs& args, float* HWY_RESTRICT acc,
                                size_t ldacc, float* HWY_RESTRICT lane_sums, size_t lanes,
                                float& max, bool& bad) {
  FillRowF32(acc, ldacc, 0.0f);
  StartSoftmaxSums(args, lane_sums, lanes, max, bad);
}

// Folds a tile of the row's scores p[0, keys) (maximum tile_max) into its state:
// m' = max(m, tile_max); p = 2^(p - m'); l = l 2^(m - m') + sum p; O = O 2^(m - m'). p becomes
// zeros instead while the row has seen nothing but -inf (all masked), or once it is poisoned
// (bad: an infinite score, or a NaN the maximum may miss, which the sum of exponentials then
// carries), so that the tile's P V adds nothing. acc_written: O holds the earlier tiles' sums
// (false: no tile before, and this tile's P V writes O, so there is nothing to rescale).
HWY_INLINE void SoftmaxTileRow(float* HWY_RESTRICT p, size_t keys, float tile_max,
                               float* HWY_RESTRICT lane_sums, float* HWY_RESTRICT acc, size_t dk,
                               float& max, bool& bad, bool acc_written = true) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const RowTag d;
  const float new_max = HWY_MAX(max, tile_max);
  if (new_max == kInf || (new_max == -kInf && RowHasNaNF32(p, keys))) bad = true;
  if (new_max == -kInf || bad) {
    FillRowF32(p, keys, 0.0f);
  } else {
    const auto tile_sums = Exp2ShiftSumF32(p, keys, new_max);
    // No exp2f for a row's first tile, nor while the maximum stands (most tiles of a long row;
    // 2^0 is 1 exactly).
    const float correction = max == -kInf ? 0.0f : max == new_max ? 1.0f : exp2f(max - new_max);
    hn::Store(hn::MulAdd(hn::Load(d, lane_sums), hn::Set(d, correction), tile_sums), d, lane_sums);
    if (correction != 1.0f && acc_written) ScaleRowF32(acc, dk, correction);
    max = new_max;
  }
}

// The row's result after its last tile: l = the lanes' sum; out = O / l, NaN for a poisoned
// row (or a NaN sum), zeros when every key is masked (l = 0).
HWY_INLINE void FinishSoftmaxRow(const float* HWY_RESTRICT lane_sums, const float* HWY_RESTRICT acc,
                                 size_t dk, float* out, float& sum, bool& bad) {
  const RowTag d;
  sum = hn::GetLane(hn::SumOfLanes(d, hn::Load(d, lane_sums)));
  if (sum != sum) bad = true;
  if (bad) {
    FillRowF32(out, dk, std::numeric_limits<float>::quiet_NaN());
  } else if (sum == 0.0f) {
    FillRowF32(out, dk, 0.0f);  // every key masked: defined as zeros
  } else {
    StoreRowScaledF32(acc, dk, 1.0f / sum, out);
  }
}

// need_weights, one row of a tile of `keys` keys in the second pass: w = 2^(s - m) / l with the
// row's final m and l for the `visible` scores p recomputed (computed: the tile was not wholly
// masked), zeros for the keys past them and for a row whose keys are all masked, NaN for a
// poisoned row. The references are read only where the first pass's values are needed.
HWY_INLINE void StoreWeightsRow(float* HWY_RESTRICT p, size_t visible, bool computed, size_t keys,
                                const float& max, const float& sum, const bool& bad,
                                float* HWY_RESTRICT w) {
  if (bad) {
    FillRowF32(w, keys, std::numeric_limits<float>::quiet_NaN());
  } else {
    size_t done = 0;
    if (computed && sum != 0.0f) {
      Exp2ShiftSumF32(p, visible, max);
      StoreRowScaledF32(p, visible, 1.0f / sum, w);
      done = visible;
    }
    FillRowF32(w + done, keys - done, 0.0f);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_ONLINE_SOFTMAX_ROWS_INL_H_
