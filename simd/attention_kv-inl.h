// Per-target attention core on compact keys and values (attention_kv.h): the online softmax of
// the fp32 core, over key tiles of 256, with each format's scores and P V.

#if defined(EDGEATTN_SIMD_ATTENTION_KV_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_ATTENTION_KV_INL_H_
#undef EDGEATTN_SIMD_ATTENTION_KV_INL_H_
#else
#define EDGEATTN_SIMD_ATTENTION_KV_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "hwy/highway.h"
#include "simd/attention.h"
#include "simd/attention_kv.h"
#include "simd/attention_mask-inl.h"
#include "simd/cpu_features.h"
#include "simd/gemm_f32.h"
#include "simd/highway_compat.h"
#include "simd/kv_half_rows-inl.h"
#include "simd/kv_int8_pack-inl.h"
#include "simd/kv_int8_rows-inl.h"
#include "simd/kv_int8_scores-inl.h"  // EDGEATTN_KV_*: the score kernels
#include "simd/kv_int8_values-inl.h"
#include "simd/kv_int8_values_sdot-inl.h"
#include "simd/online_softmax_rows-inl.h"
#include "simd/softmax-inl.h"
#include "simd/tile_f32-inl.h"
#include "simd/vector_width.h"

namespace edgeattn {
namespace simd {
// The target-independent parts of the kernels' contracts (attention_kv.cc).
size_t CompactKvScratch(size_t dk);
}  // namespace simd
}  // namespace edgeattn

#if EDGEATTN_TARGET_HAS_AVX512_VNNI
// Highway 1.0.3's AVX3_DL attribute string lacks avx512vnni (as in gemm_i8_vnni-inl.h), which
// the int8 values' vpdpwssd (kv_int8_values-inl.h), inlined here, needs.
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512vnni")
#else
HWY_BEFORE_NAMESPACE();
#endif

namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The query rows of a block as each format scores them: scaled by args.scale (fp32), and for
// int8 keys also quantized per row (q8, with the row's scale and the sum of its int8 values).
struct QueryBlock {
  float* q;
  size_t ldq;
  int8_t* q8;
  size_t ldq8;
  float q8_scale[kAttentionMaxBlockRows];
  int32_t q8_sum[kAttentionMaxBlockRows];
  // Keys below this position are worth asking into L2 ahead of their reads
  // (kPrefetchKv): the visible ones in a call of one block, as a decode step's, which reads them
  // once from L3; 0 in longer calls, whose later blocks find the head's keys and values in L2.
  size_t prefetch_end;
};

// bf16 / fp16 keys and values: the fp32 tile kernel with 16-bit B, widened in registers.
template <class T>
struct HalfKv {
  static constexpr bool kQuantizesQuery = false;

  static void Scores(const AttentionHeadArgs& args, const QueryBlock& q, size_t rows, size_t t0,
                     size_t keys, float* HWY_RESTRICT scores) {
    const size_t dk = args.dk;
    for (size_t p0 = 0; p0 < keys; p0 += kGemmPanelWidth) {
      const T* panel = static_cast<const T*>(args.keys) + (t0 + p0) * dk;
      MatMulTiles<T>(q.q, q.ldq, rows, panel, kGemmPanelWidth, dk,
                     HWY_MIN(kGemmPanelWidth, keys - p0), TileInit::kZero, nullptr, scores + p0,
                     kAttentionKeyTile);
    }
  }

  static void AccumulateValues(const AttentionHeadArgs& args, const float* HWY_RESTRICT p,
                               size_t rows, size_t t0, size_t keys, float* HWY_RESTRICT acc,
                               size_t ldacc) {
    const T* values = static_cast<const T*>(args.values) + t0 * args.dk;
    MatMulTiles<T>(p, kAttentionKeyTile, rows, values, args.dk, keys, args.dk,
                   TileInit::kAccumulate, nullptr, acc, ldacc);
  }
};

// int8 keys and values, scored by Dot (one of kv_int8_scores-inl.h's kernels), P V by Values
// (I16PairValues, or SdotPairValues with the Arm dot product).
template <class Dot, class Values = I16PairValues>
struct I8Kv {
  static constexpr bool kQuantizesQuery = true;
  static constexpr size_t kI8PanelsAhead = 2;

  static void Scores(const AttentionHeadArgs& args, const QueryBlock& q, size_t rows, size_t t0,
                     size_t keys, float* HWY_RESTRICT scores) {
    const uint8_t* base = static_cast<const uint8_t*>(args.keys);
    const size_t panel_bytes = I8PanelBytes(args.dk);
    const size_t size = I8KeysBytes(q.prefetch_end, args.dk);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t p0 = 0; p0 < keys; p0 += kI8KeyPanel) {
        const size_t panel = (t0 + p0) / kI8KeyPanel;
        // Two panels on (8.5 KiB at dk 64), with the block's first row: a step's latency from
        // L3 is covered.
        const size_t ahead = (panel + kI8PanelsAhead) * panel_bytes;
        Dot::Panel(q.q8 + r * q.ldq8, q.q8_sum[r], q.q8_scale[r], base + panel * panel_bytes,
                   args.dk, scores + r * kAttentionKeyTile + p0,
                   r == 0 ? KvAhead(base, ahead, ahead + panel_bytes, size) : nullptr);
      }
    }
  }

  // P V in integers (kv_int8_values-inl.h). The next tile's values are not asked ahead: a
  // decode step's core measured the same with them asked into L2 as its pairs are read.
  static void AccumulateValues(const AttentionHeadArgs& args, float* HWY_RESTRICT p, size_t rows,
                               size_t t0, size_t keys, float* HWY_RESTRICT acc, size_t ldacc) {
    const uint8_t* panels = static_cast<const uint8_t*>(args.values) +
                            t0 / kI8ValuePanel * I8ValuePanelBytes(args.dk);
    I16Probabilities probabilities[kAttentionMaxBlockRows];
    for (size_t r = 0; r < rows; ++r) {
      QuantizeTileProbabilities(p + r * kAttentionKeyTile, panels, keys, args.dk,
                                probabilities[r]);
    }
    Values::AccumulateTile(panels, args.dk, keys, probabilities, rows, acc, ldacc);
  }
};

// Query row i0 + r of the block, scaled, in q.q (and for int8 keys rotated and quantized per
// row), so that scores come out in the base-2 units of the softmax (log2(e) folded into the
// scale; for int8 into the row's scale after quantizing, so that the bytes are those of the
// scaled row, with the rotation's factor 1 / block).
template <class Kv>
HWY_INLINE void PrepareQueryRow(const AttentionHeadArgs& args, size_t row, size_t r,
                                QueryBlock& q) {
  float* scaled = q.q + r * q.ldq;
  if (!Kv::kQuantizesQuery) {
    StoreRowScaledF32(args.q + row * args.ldq, args.dk, args.scale * kLog2e, scaled);
    return;
  }
  StoreRowScaledF32(args.q + row * args.ldq, args.dk, args.scale, scaled);
  int8_t* q8 = q.q8 + r * q.ldq8;
  memset(q8 + args.dk, 0, q.ldq8 - args.dk);
  // Rotated as the keys were: scores come out times the block.
  q.q8_scale[r] = RotateAndQuantizeRow(scaled, args.dk, q8) * kLog2e / I8RotationBlock(args.dk);
  int32_t sum = 0;
  for (size_t c = 0; c < args.dk; ++c) sum += q8[c];
  q.q8_sum[r] = sum;
}

// scores[r][0, keys) of the block's rows against keys [t0, t0 + keys), with the cap and the
// masks, in base-2 units (the cap and the masks' additions scaled as the scores are).
template <class Kv>
HWY_INLINE void ScoreKvTile(const AttentionHeadArgs& args, const QueryBlock& q, size_t i0,
                            size_t rows, size_t t0, size_t keys, float* HWY_RESTRICT scores) {
  Kv::Scores(args, q, rows, t0, keys, scores);
  for (size_t r = 0; r < rows; ++r) {
    float* HWY_RESTRICT p = scores + r * kAttentionKeyTile;
    if (args.softcap > 0.0f) SoftcapRowF32(p, keys, args.softcap * kLog2e);
    ApplyMaskRow(args.mask, i0 + r, t0, keys, kLog2e, p);
  }
}

// need_weights, as the fp32 core (attention-inl.h): a second pass recomputes each tile's scores
// with the same arithmetic and stores 2^(s - max) / sum with the row's final max and sum; NaN
// for a poisoned row, zeros for masked keys and for a row with every key masked.
template <class Kv>
HWY_NOINLINE void StoreKvWeights(const AttentionHeadArgs& args, const QueryBlock& q, size_t i0,
                                 size_t rows, size_t lk_block, const float* row_max,
                                 const float* row_sum, const bool* row_bad,
                                 float* HWY_RESTRICT scores) {
  for (size_t t0 = 0; t0 < args.lk; t0 += kAttentionKeyTile) {
    const size_t keys = HWY_MIN(kAttentionKeyTile, args.lk - t0);
    const size_t visible = t0 < lk_block ? HWY_MIN(keys, lk_block - t0) : 0;
    const bool computed = visible > 0 && !TileMasked(args.mask, i0, rows, t0, visible);
    if (computed) ScoreKvTile<Kv>(args, q, i0, rows, t0, visible, scores);
    for (size_t r = 0; r < rows; ++r) {
      StoreWeightsRow(scores + r * kAttentionKeyTile, visible, computed, keys, row_max[r],
                      row_sum[r], row_bad[r], args.weights + (i0 + r) * args.ldw + t0);
    }
  }
}

template <class Kv>
HWY_NOINLINE void RunCompactKvAttention(const AttentionHeadArgs& args, size_t q_begin, size_t q_end,
                                        float* HWY_RESTRICT scratch) {
  constexpr size_t kMaxRows = kAttentionMaxBlockRows;
  const size_t dk = args.dk;
  const size_t rows_per_block = HWY_MIN(MaxTileShape().rows, kMaxRows);

  // Scratch layout (CompactKvScratch); every part starts on a 64-byte boundary.
  QueryBlock q;
  q.ldq = hwy::RoundUpTo(dk, kMaxFloatLanes);
  q.ldq8 = hwy::RoundUpTo(dk, 64);
  const size_t ldacc = q.ldq;
  q.q = scratch;
  q.q8 = reinterpret_cast<int8_t*>(q.q + kMaxRows * q.ldq);
  float* HWY_RESTRICT scores = q.q + kMaxRows * (q.ldq + q.ldq8 / sizeof(float));
  float* HWY_RESTRICT acc = scores + kMaxRows * kAttentionKeyTile;
  // Each row's online-softmax state (online_softmax_rows-inl.h), its sums by lane.
  HWY_ALIGN float lane_sums[kMaxRows * kMaxFloatLanes];
  float row_max[kMaxRows];
  float row_sum[kMaxRows];
  bool row_bad[kMaxRows];

  for (size_t i0 = q_begin; i0 < q_end; i0 += rows_per_block) {
    const size_t rows = HWY_MIN(rows_per_block, q_end - i0);
    const size_t lk_block = args.mask.VisibleEnd(i0 + rows - 1, args.lk);
    q.prefetch_end = q_end - q_begin <= rows_per_block ? lk_block : 0;
    const size_t t_begin = args.mask.VisibleBegin(i0) / kAttentionKeyTile * kAttentionKeyTile;
    for (size_t r = 0; r < rows; ++r) {
      PrepareQueryRow<Kv>(args, i0 + r, r, q);
      StartSoftmaxRow(args, acc + r * ldacc, ldacc, lane_sums + r * kMaxFloatLanes,
                      kMaxFloatLanes, row_max[r], row_bad[r]);
    }
    for (size_t t0 = t_begin; t0 < lk_block; t0 += kAttentionKeyTile) {
      const size_t keys = HWY_MIN(kAttentionKeyTile, lk_block - t0);
      if (TileMasked(args.mask, i0, rows, t0, keys)) continue;
      ScoreKvTile<Kv>(args, q, i0, rows, t0, keys, scores);
      for (size_t r = 0; r < rows; ++r) {
        float* HWY_RESTRICT p = scores + r * kAttentionKeyTile;
        SoftmaxTileRow(p, keys, RowMaxF32(p, keys), lane_sums + r * kMaxFloatLanes,
                       acc + r * ldacc, dk, row_max[r], row_bad[r]);
      }
      Kv::AccumulateValues(args, scores, rows, t0, keys, acc, ldacc);
    }
    for (size_t r = 0; r < rows; ++r) {
      FinishSoftmaxRow(lane_sums + r * kMaxFloatLanes, acc + r * ldacc, dk,
                       args.out + (i0 + r) * args.ldo, row_sum[r], row_bad[r]);
    }
    if (args.weights != nullptr) {
      StoreKvWeights<Kv>(args, q, i0, rows, lk_block, row_max, row_sum, row_bad, scores);
    }
  }
}

// Exported: plain inline, as a one-target build calls it directly (see attention-inl.h).
inline std::vector<const AttentionKernel*> ListCompactKvKernels() {
  static const std::string bf16_name = TileKernelName("bf16kv_f32_");
  static const std::string f16_name = TileKernelName("f16kv_f32_");
  static const AttentionKernel kBf16 = {bf16_name.c_str(),
                                        KvType::kBf16,
                                        &HalfKeysBytes,
                                        &HalfValuesBytes,
                                        &PackBf16KeysValues,
                                        &CompactKvScratch,
                                        &RunCompactKvAttention<HalfKv<hwy::bfloat16_t>>};
  static const AttentionKernel kF16 = {f16_name.c_str(),
                                       KvType::kF16,
                                       &HalfKeysBytes,
                                       &HalfValuesBytes,
                                       &PackF16KeysValues,
                                       &CompactKvScratch,
                                       &RunCompactKvAttention<HalfKv<hwy::float16_t>>};
  static const AttentionKernel kI8 = {"i8kv_i8dot_i32",
                                      KvType::kI8,
                                      &I8KeysBytes,
                                      &I8ValuesBytes,
                                      &PackI8KeysValues,
                                      &CompactKvScratch,
                                      &RunCompactKvAttention<I8Kv<I8DotI32>>};
  std::vector<const AttentionKernel*> kernels = {&kBf16, &kF16};
#if EDGEATTN_KV_VNNI
  static const AttentionKernel kVnni = {"i8kv_i8dot_vnni",
                                        KvType::kI8,
                                        &I8KeysBytes,
                                        &I8ValuesBytes,
                                        &PackI8KeysValues,
                                        &CompactKvScratch,
                                        &RunCompactKvAttention<I8Kv<I8DotVnni>>};
  kernels.push_back(&kVnni);
#endif
#if EDGEATTN_KV_AVX_VNNI
  static const AttentionKernel kAvxVnni = {"i8kv_i8dot_avxvnni",
                                           KvType::kI8,
                                           &I8KeysBytes,
                                           &I8ValuesBytes,
                                           &PackI8KeysValues,
                                           &CompactKvScratch,
                                           &RunCompactKvAttention<I8Kv<I8DotAvxVnni>>};
  if (CpuHasAvxVnni()) kernels.push_back(&kAvxVnni);  // cpu_features.h
#endif
#if EDGEATTN_KV_MADDUBS
  static const AttentionKernel kMaddubs = {"i8kv_i8dot_maddubs",
                                           KvType::kI8,
                                           &I8KeysBytes,
                                           &I8ValuesBytes,
                                           &PackI8KeysValues,
                                           &CompactKvScratch,
                                           &RunCompactKvAttention<I8Kv<I8DotMaddubs>>};
  kernels.push_back(&kMaddubs);
#endif
#if EDGEATTN_KV_NEON_DOT
  static const AttentionKernel kNeonDot = {"i8kv_i8dot_neondot",
                                           KvType::kI8,
                                           &I8KeysBytes,
                                           &I8ValuesBytes,
                                           &PackI8KeysValues,
                                           &CompactKvScratch,
                                           &RunCompactKvAttention<I8Kv<I8DotNeon, SdotPairValues>>};
  if (CpuHasNeonDotProduct()) kernels.push_back(&kNeonDot);  // cpu_features.h
#endif
#if EDGEATTN_KV_NEON_MLAL
  static const AttentionKernel kNeonMlal = {"i8kv_i8dot_neonmlal",
                                            KvType::kI8,
                                            &I8KeysBytes,
                                            &I8ValuesBytes,
                                            &PackI8KeysValues,
                                            &CompactKvScratch,
                                            &RunCompactKvAttention<I8Kv<I8DotNeonMlal>>};
  kernels.push_back(&kNeonMlal);
#endif
  kernels.push_back(&kI8);
  return kernels;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

// The score kernels' macros (kv_int8_scores-inl.h).
#undef EDGEATTN_KV_VNNI
#undef EDGEATTN_KV_AVX_VNNI
#undef EDGEATTN_KV_MADDUBS
#undef EDGEATTN_KV_NEON_DOT
#undef EDGEATTN_KV_NEON_MLAL
#endif  // EDGEATTN_SIMD_ATTENTION_KV_INL_H_
