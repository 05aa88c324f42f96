// Per-target attention core (flash-style online softmax over key tiles).
//
// For a block of R query rows (R = the tile kernel's row count) and each tile of up to 256 keys:
//   S = (Q * scale * log2(e)) K_tile^T   tile kernel, B = key panels (GEMM weight layout)
//   m' = max(m, rowmax S); P = 2^(S - m'); l = l 2^(m - m') + rowsum P; O = O 2^(m - m')
//   O += P V_tile                         tile kernel, B = values
// and finally out = O / l, stored straight into the head's columns of the concat buffer.
// Scores are in base 2 (softmax is the same in any base once the scores are scaled to it): the
// exponential is then a polynomial and an exponent, about a third of a natural exp's work, which
// matters because it runs on the FMA units between the two matrix products.

#if defined(EDGEATTN_SIMD_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_ATTENTION_INL_H_
#undef EDGEATTN_SIMD_ATTENTION_INL_H_
#else
#define EDGEATTN_SIMD_ATTENTION_INL_H_
#endif

#include <math.h>
#include <stddef.h>

#include <limits>
#include <string>
#include <vector>

#include "simd/attention.h"
#include "simd/attention_mask-inl.h"
#include "simd/gemm_f32.h"
#include "simd/softmax-inl.h"
#include "simd/tile_f32-inl.h"
#include "simd/vector_width.h"

namespace edgeattn {
namespace simd {
// The target-independent parts of the fp32 kernel's contract (attention.cc).
size_t F32KeysBytes(size_t lk, size_t dk);
size_t F32ValuesBytes(size_t lk, size_t dk);
void PackF32KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                       size_t count, size_t stored, size_t dk, void* keys, void* values);
size_t F32AttentionScratch(size_t dk);
}  // namespace simd
}  // namespace edgeattn

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

// scores[r][0, keys) = (scaled q row r) . key (t0 + j) + the masks, in base-2 units, for the
// block's rows.
HWY_INLINE void ScoreTile(const AttentionHeadArgs& args, const float* HWY_RESTRICT q_block,
                          size_t ldq_block, size_t i0, size_t rows, size_t t0, size_t keys,
                          float* HWY_RESTRICT scores) {
  const size_t dk = args.dk;
  // Whole vectors of scores: the lanes past the last key land in the rows' padding, where the
  // row operations mask them, and spare the tile a partial store.
  const size_t N = hn::Lanes(TileTag());
  for (size_t p0 = 0; p0 < keys; p0 += kGemmPanelWidth) {
    // Panel (t0 + p0) / 64 of 64 x dk.
    const float* panel = static_cast<const float*>(args.keys) + (t0 + p0) * dk;
    MatMulTiles(q_block, ldq_block, rows, panel, kGemmPanelWidth, dk,
                HWY_MIN(kGemmPanelWidth, hwy::RoundUpTo(keys - p0, N)), TileInit::kZero, nullptr,
                scores + p0, kAttentionKeyTile);
  }
  for (size_t r = 0; r < rows; ++r) {
    float* HWY_RESTRICT row = scores + r * kAttentionKeyTile;
    // cap' tanh(s' / cap') with s' = s log2(e) and cap' = cap log2(e) is cap tanh(s / cap) in
    // base-2 units.
    if (args.softcap > 0.0f) SoftcapRowF32(row, keys, args.softcap * kLog2e);
    ApplyMaskRow(args.mask, i0 + r, t0, keys, kLog2e, row);
  }
}

HWY_NOINLINE void RunF32Attention(const AttentionHeadArgs& args, size_t q_begin, size_t q_end,
                                     float* HWY_RESTRICT scratch) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  constexpr size_t kMaxRows = kAttentionMaxBlockRows;
  const size_t dk = args.dk;
  const size_t rows_per_block = HWY_MIN(MaxTileShape().rows, kMaxRows);

  // Scratch layout; every part starts on a 64-byte boundary (F32AttentionScratch).
  const size_t ldq_block = hwy::RoundUpTo(dk, kMaxFloatLanes);
  const size_t ldacc = ldq_block;
  float* HWY_RESTRICT q_block = scratch;                            // kMaxRows x ldq_block
  float* HWY_RESTRICT scores = q_block + kMaxRows * ldq_block;      // kMaxRows x key tile
  float* HWY_RESTRICT acc = scores + kMaxRows * kAttentionKeyTile;  // kMaxRows x ldacc
  // The rows' sums of exponentials by lane, summed across lanes once per block.
  float* HWY_RESTRICT lane_sums = acc + kMaxRows * ldacc;  // kMaxRows x kMaxFloatLanes
  const RowTag d;
  float row_max[kMaxRows];
  float row_sum[kMaxRows];
  bool row_bad[kMaxRows];

  for (size_t i0 = q_begin; i0 < q_end; i0 += rows_per_block) {
    const size_t rows = HWY_MIN(rows_per_block, q_end - i0);
    // No row of this block sees a key past its last row's limit.
    const size_t lk_block = args.mask.VisibleEnd(i0 + rows - 1, args.lk);
    // The first tile holding a key the block's first row sees (a window's start); the tile grid
    // stays on multiples of the tile, so that tiles start on key panels.
    const size_t t_begin = args.mask.VisibleBegin(i0) / kAttentionKeyTile * kAttentionKeyTile;
    for (size_t r = 0; r < rows; ++r) {
      // Folding the scale into Q costs dk multiplies per row instead of lk.
      StoreRowScaledF32(args.q + (i0 + r) * args.ldq, dk, args.scale * kLog2e,
                        q_block + r * ldq_block);
      FillRowF32(acc + r * ldacc, ldacc, 0.0f);
      // The sink is a key of value zero that every row sees: it starts the running maximum
      // and adds 2^(sink - max) to the sum (nothing with no sink: 2^-inf = 0).
      row_max[r] = args.sink * kLog2e;
      FillRowF32(lane_sums + r * kMaxFloatLanes, kMaxFloatLanes, 0.0f);
      lane_sums[r * kMaxFloatLanes] = args.sink == -kInf ? 0.0f : 1.0f;
      row_bad[r] = false;
    }
    for (size_t t0 = t_begin; t0 < lk_block; t0 += kAttentionKeyTile) {
      const size_t keys = HWY_MIN(kAttentionKeyTile, lk_block - t0);
      if (TileMasked(args.mask, i0, rows, t0, keys)) continue;
      ScoreTile(args, q_block, ldq_block, i0, rows, t0, keys, scores);
      // Every row's maximum first: the rows' reductions then overlap, where one row's exponentials
      // would wait on its maximum's horizontal reduction.
      float tile_max[kMaxRows];
      for (size_t r = 0; r < rows; ++r) {
        tile_max[r] = RowMaxF32(scores + r * kAttentionKeyTile, keys);
      }
      for (size_t r = 0; r < rows; ++r) {
        float* HWY_RESTRICT p = scores + r * kAttentionKeyTile;
        // The maximum may miss a NaN score; then the row's sum of exponentials is NaN.
        const float new_max = HWY_MAX(row_max[r], tile_max[r]);
        if (new_max == kInf || (new_max == -kInf && RowHasNaNF32(p, keys))) row_bad[r] = true;
        if (new_max == -kInf || row_bad[r]) {
          // Nothing but -inf so far (all masked), or already poisoned: contribute nothing.
          FillRowF32(p, keys, 0.0f);
          continue;
        }
        const auto tile_sums = Exp2ShiftSumF32(p, keys, new_max);
        const float correction = row_max[r] == -kInf ? 0.0f : exp2f(row_max[r] - new_max);
        float* HWY_RESTRICT sums = lane_sums + r * kMaxFloatLanes;
        hn::Store(hn::MulAdd(hn::Load(d, sums), hn::Set(d, correction), tile_sums), d, sums);
        if (correction != 1.0f) ScaleRowF32(acc + r * ldacc, dk, correction);
        row_max[r] = new_max;
      }
      MatMulTiles(scores, kAttentionKeyTile, rows, static_cast<const float*>(args.values) + t0 * dk,
                  dk, keys, dk, TileInit::kAccumulate, nullptr, acc, ldacc);
    }
    for (size_t r = 0; r < rows; ++r) {
      row_sum[r] = hn::GetLane(hn::SumOfLanes(d, hn::Load(d, lane_sums + r * kMaxFloatLanes)));
      if (row_sum[r] != row_sum[r]) row_bad[r] = true;
      float* out = args.out + (i0 + r) * args.ldo;
      if (row_bad[r]) {
        FillRowF32(out, dk, kNaN);
      } else if (row_sum[r] == 0.0f) {
        FillRowF32(out, dk, 0.0f);  // every key masked: defined as zeros
      } else {
        StoreRowScaledF32(acc + r * ldacc, dk, 1.0f / row_sum[r], out);
      }
    }
    if (args.weights == nullptr) continue;
    // need_weights: a second pass recomputes each tile's scores (the same arithmetic) and
    // stores 2^(s - max) / sum with the row's final max and sum.
    for (size_t t0 = 0; t0 < args.lk; t0 += kAttentionKeyTile) {
      const size_t keys = HWY_MIN(kAttentionKeyTile, args.lk - t0);
      const size_t visible = t0 < lk_block ? HWY_MIN(keys, lk_block - t0) : 0;
      const bool computed = visible > 0 && !TileMasked(args.mask, i0, rows, t0, visible);
      if (computed) ScoreTile(args, q_block, ldq_block, i0, rows, t0, visible, scores);
      for (size_t r = 0; r < rows; ++r) {
        float* HWY_RESTRICT w = args.weights + (i0 + r) * args.ldw + t0;
        if (row_bad[r]) {
          FillRowF32(w, keys, kNaN);
          continue;
        }
        size_t done = 0;
        if (computed && row_sum[r] != 0.0f) {
          float* HWY_RESTRICT p = scores + r * kAttentionKeyTile;
          Exp2ShiftSumF32(p, visible, row_max[r]);
          StoreRowScaledF32(p, visible, 1.0f / row_sum[r], w);
          done = visible;
        }
        FillRowF32(w + done, keys - done, 0.0f);
      }
    }
  }
}

// Exported: plain inline, as a one-target build (EDGEATTN_TARGETS=phone) calls it directly
// from code without this target's attributes, where always_inline cannot apply.
inline std::vector<const AttentionKernel*> ListAttentionKernels() {
  // "f32kv_" and the fp32 tile: keys and values stored as f32, scores and P V in f32.
  static const std::string name = std::string("f32kv_") + F32KernelName();
  static const AttentionKernel kF32 = {name.c_str(),    KvType::kF32,       &F32KeysBytes,
                                       &F32ValuesBytes, &PackF32KeysValues, &F32AttentionScratch,
                                       &RunF32Attention};
  return {&kF32};
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_ATTENTION_INL_H_
