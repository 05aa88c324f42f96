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

#include <stddef.h>

#include <string>
#include <vector>

#include "simd/attention.h"
#include "simd/attention_mask-inl.h"
#include "simd/gemm_f32.h"
#include "simd/kv_f32_rows-inl.h"
#include "simd/online_softmax_rows-inl.h"
#include "simd/prefetch.h"
#include "simd/softmax-inl.h"
#include "simd/tile_f32-inl.h"
#include "simd/vector_width.h"

namespace edgeattn {
namespace simd {
// The target-independent parts of the fp32 kernel's contract (attention.cc).
size_t F32KeysBytes(size_t lk, size_t dk);
size_t F32ValuesBytes(size_t lk, size_t dk);
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

// The fp32 core's per-thread scratch for a block of up to kAttentionMaxBlockRows rows; every
// part starts on a 64-byte boundary (F32AttentionScratch).
struct F32Block {
  size_t dk;
  float* q;  // the rows scaled to base 2, ldq a row
  size_t ldq;
  float* scores;  // kAttentionKeyTile a row
  float* acc;     // ldacc a row
  size_t ldacc;
  float* lane_sums;  // kMaxFloatLanes a row

  explicit F32Block(float* scratch, size_t dk) : dk(dk) {
    constexpr size_t kMaxRows = kAttentionMaxBlockRows;
    ldq = hwy::RoundUpTo(dk, kMaxFloatLanes);
    ldacc = ldq;
    q = scratch;
    scores = q + kMaxRows * ldq;
    acc = scores + kMaxRows * kAttentionKeyTile;
    lane_sums = acc + kMaxRows * ldacc;
  }
};

// The rows of the block starting at row i0: the tile kernel's row count, at most the scratch's,
// or the rows left. Each phase derives it (and a tile's key count) rather than taking it: GCC
// estimates a callee's branch probabilities before inlining it, and a count bounded there gives
// the phases' loops the weights they had in one body (a parameter's would differ).
HWY_INLINE size_t F32RowsPerBlock() { return HWY_MIN(MaxTileShape().rows, kAttentionMaxBlockRows); }
HWY_INLINE size_t F32BlockRows(size_t i0, size_t q_end) {
  return HWY_MIN(F32RowsPerBlock(), q_end - i0);
}

// A block's rows' running maxima, sums and poisoned flags, passed to the phases as references to
// the arrays, whose size also bounds the row loops.
using RowFloats = float[kAttentionMaxBlockRows];
using RowFlags = bool[kAttentionMaxBlockRows];

// The block's Q rows scaled to base 2 into the scratch, and every row's starting maximum and
// sums; O is written by the block's first tile that any row sees (F32SoftmaxTile).
HWY_INLINE void StartF32Block(const AttentionHeadArgs& args, const F32Block& b, size_t i0,
                              size_t q_end, RowFloats& row_max, RowFlags& row_bad) {
  const size_t rows = F32BlockRows(i0, q_end);
  for (size_t r = 0; r < rows; ++r) {
    // Folding the scale into Q costs dk multiplies per row instead of lk.
    StoreRowScaledF32(args.q + (i0 + r) * args.ldq, b.dk, args.scale * kLog2e, b.q + r * b.ldq);
    StartSoftmaxSums(args, b.lane_sums + r * kMaxFloatLanes, kMaxFloatLanes, row_max[r],
                     row_bad[r]);
  }
}

// The next block's Q rows into L2 while this block runs: a long sequence's projected rows lie
// beyond L2, one row of a head per cache-line run, which the block would otherwise wait for.
// L2, not L1: they are read after this block's whole pass over the keys, whose panels stream
// through L1 meanwhile.
HWY_INLINE void PrefetchNextBlockQ(const AttentionHeadArgs& args, size_t next_i0, size_t q_end) {
  const size_t end = HWY_MIN(next_i0 + F32RowsPerBlock(), q_end);
  for (size_t i = next_i0; i < end; ++i) PrefetchF32Row<2>(args.q + i * args.ldq, args.dk);
}

// The tile of keys from t0 on (at most lk_block) for the block's rows: scores, each row's online
// softmax step, then O += P V, or O = P V for the block's first tile (acc_written false; it is
// then set): no zero-filling of O before it nor reading it back in the tile kernel. Nothing for
// a tile no row sees.
HWY_INLINE void F32SoftmaxTile(const AttentionHeadArgs& args, const F32Block& b, size_t i0,
                               size_t q_end, size_t t0, size_t lk_block, RowFloats& row_max,
                               RowFlags& row_bad, bool& acc_written) {
  const size_t rows = F32BlockRows(i0, q_end);
  const size_t keys = HWY_MIN(kAttentionKeyTile, lk_block - t0);
  const size_t dk = b.dk;
  float tile_max[kAttentionMaxBlockRows];
  if (TileMasked(args.mask, i0, rows, t0, keys)) return;
  ScoreTile(args, b.q, b.ldq, i0, rows, t0, keys, b.scores);
  // Every row's maximum first: the rows' reductions then overlap, where one row's exponentials
  // would wait on its maximum's horizontal reduction.
  for (size_t r = 0; r < rows; ++r) {
    tile_max[r] = RowMaxF32(b.scores + r * kAttentionKeyTile, keys);
  }
  for (size_t r = 0; r < rows; ++r) {
    SoftmaxTileRow(b.scores + r * kAttentionKeyTile, keys, tile_max[r],
                   b.lane_sums + r * kMaxFloatLanes, b.acc + r * b.ldacc, dk, row_max[r],
                   row_bad[r], acc_written);
  }
  // kZero gives the bits kAccumulate would from zeros: each sum starts at 0 either way. Values
  // packed or in place (ldv): rows either way.
  const size_t ldv = args.ldv != 0 ? args.ldv : dk;
  MatMulTiles(b.scores, kAttentionKeyTile, rows, static_cast<const float*>(args.values) + t0 * ldv,
              ldv, keys, dk, acc_written ? TileInit::kAccumulate : TileInit::kZero, nullptr, b.acc,
              b.ldacc);
  acc_written = true;
}

// The block's rows of the head's output: O / l into the head's columns (O = 0 where no tile
// was computed: every key masked, with only a sink, if any, in the sum).
HWY_INLINE void FinishF32Block(const AttentionHeadArgs& args, const F32Block& b, size_t i0,
                               size_t q_end, bool acc_written, RowFloats& row_sum,
                               RowFlags& row_bad) {
  const size_t rows = F32BlockRows(i0, q_end);
  for (size_t r = 0; r < rows; ++r) {
    if (!acc_written) FillRowF32(b.acc + r * b.ldacc, b.dk, 0.0f);
    FinishSoftmaxRow(b.lane_sums + r * kMaxFloatLanes, b.acc + r * b.ldacc, b.dk,
                     args.out + (i0 + r) * args.ldo, row_sum[r], row_bad[r]);
  }
}

// need_weights: a second pass recomputes each tile's scores (the same arithmetic) and stores
// 2^(s - max) / sum with the rows' final max and sum, over all lk keys (zeros past lk_block).
HWY_INLINE void StoreF32Weights(const AttentionHeadArgs& args, const F32Block& b, size_t i0,
                                size_t q_end, size_t lk_block, const RowFloats& row_max,
                                const RowFloats& row_sum, const RowFlags& row_bad) {
  const size_t rows = F32BlockRows(i0, q_end);
  for (size_t t0 = 0; t0 < args.lk; t0 += kAttentionKeyTile) {
    const size_t keys = HWY_MIN(kAttentionKeyTile, args.lk - t0);
    const size_t visible = t0 < lk_block ? HWY_MIN(keys, lk_block - t0) : 0;
    const bool computed = visible > 0 && !TileMasked(args.mask, i0, rows, t0, visible);
    if (computed) ScoreTile(args, b.q, b.ldq, i0, rows, t0, visible, b.scores);
    for (size_t r = 0; r < rows; ++r) {
      StoreWeightsRow(b.scores + r * kAttentionKeyTile, visible, computed, keys, row_max[r],
                      row_sum[r], row_bad[r], args.weights + (i0 + r) * args.ldw + t0);
    }
  }
}

// Query rows [q_begin, q_end) of one head, a block of rows at a time: its Q rows and states,
// the tiles of keys any of its rows sees, its output rows, and the weights if asked for.
HWY_NOINLINE void RunF32Attention(const AttentionHeadArgs& args, size_t q_begin, size_t q_end,
                                  float* HWY_RESTRICT scratch) {
  const F32Block b(scratch, args.dk);
  RowFloats row_max;
  RowFloats row_sum;
  RowFlags row_bad;
  for (size_t i0 = q_begin; i0 < q_end; i0 += F32RowsPerBlock()) {
    const size_t rows = F32BlockRows(i0, q_end);
    // No row of this block sees a key past its last row's limit.
    const size_t lk_block = args.mask.VisibleEnd(i0 + rows - 1, args.lk);
    // The first tile holding a key the block's first row sees (a window's start); the tile grid
    // stays on multiples of the tile, so that tiles start on key panels.
    const size_t t_begin = args.mask.VisibleBegin(i0) / kAttentionKeyTile * kAttentionKeyTile;
    StartF32Block(args, b, i0, q_end, row_max, row_bad);
    PrefetchNextBlockQ(args, i0 + rows, q_end);
    bool acc_written = false;
    for (size_t t0 = t_begin; t0 < lk_block; t0 += kAttentionKeyTile) {
      F32SoftmaxTile(args, b, i0, q_end, t0, lk_block, row_max, row_bad, acc_written);
    }
    FinishF32Block(args, b, i0, q_end, acc_written, row_sum, row_bad);
    if (args.weights != nullptr) {
      StoreF32Weights(args, b, i0, q_end, lk_block, row_max, row_sum, row_bad);
    }
  }
}

// Exported: plain inline, as a one-target build (EDGEATTN_TARGETS=phone) calls it directly
// from code without this target's attributes, where always_inline cannot apply.
inline std::vector<const AttentionKernel*> ListAttentionKernels() {
  // "f32kv_" and the fp32 tile: keys and values stored as f32, scores and P V in f32.
  static const std::string name = std::string("f32kv_") + F32KernelName();
  static const AttentionKernel kF32 = {
      name.c_str(),       KvType::kF32,         &F32KeysBytes,    &F32ValuesBytes,
      &PackF32KeysValues, &F32AttentionScratch, &RunF32Attention, /*values_as_rows=*/true};
  return {&kF32};
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_ATTENTION_INL_H_
