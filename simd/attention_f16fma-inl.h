// Per-target attention core in fp16 arithmetic (attention_f16fma.h), for the x86 AVX-512
// targets on CPUs with AVX512-FP16: the fp32 core's online softmax over key tiles of 256
// (attention-inl.h), with
//   S = Q_f16 K_panel^T   8 rows x 64 keys per step: two vfmadd231ph of 32 keys a row,
//                         chunks of kF16ScoreChunk channels widened into the fp32 scores
//   O += f16(P) V_tile    8 rows x 64 channels per step, chunks of kF16ValueChunk keys widened
//                         into the fp32 accumulators
// Highway 1.0.3 has no fp16 arithmetic and no target naming avx512fp16, so, as the VNNI and
// vdpbf16ps paths do, this file adds the feature to its own functions and lists the kernel only
// where CPUID reports it.

#if defined(EDGEATTN_SIMD_ATTENTION_F16FMA_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_ATTENTION_F16FMA_INL_H_
#undef EDGEATTN_SIMD_ATTENTION_F16FMA_INL_H_
#else
#define EDGEATTN_SIMD_ATTENTION_F16FMA_INL_H_
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <limits>
#include <vector>

#include "hwy/highway.h"
#include "simd/attention.h"
#include "simd/attention_f16fma.h"
#include "simd/attention_mask-inl.h"
#include "simd/cpu_features.h"
#include "simd/highway_compat.h"
#include "simd/kv_half_rows-inl.h"
#include "simd/softmax-inl.h"

namespace edgeattn {
namespace simd {
// This kernel's scratch (attention_f16fma.cc); the f16kv layout's sizes and pack are those of
// f16kv_f32 (attention_kv.h, kv_half_rows-inl.h).
size_t F16FmaAttentionScratch(size_t dk);
}  // namespace simd
}  // namespace edgeattn

#if EDGEATTN_TARGET_CAN_BUILD_AVX512_FP16
#include <immintrin.h>
#define EDGEATTN_ATTENTION_F16FMA 1
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512fp16")
#else
#define EDGEATTN_ATTENTION_F16FMA 0
#endif

#if EDGEATTN_ATTENTION_F16FMA
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
// Its own namespace: the other attention cores' per-target helpers share names (ScorePanelRows,
// AccumulateTable) in HWY_NAMESPACE, which the linker would merge.
namespace f16fma {
namespace hn = hwy::HWY_NAMESPACE;

inline constexpr size_t kF16Rows = kAttentionMaxBlockRows;
// fp16 lanes of a vector, keys of a packed panel (the f16kv layout's 64-key panels).
inline constexpr size_t kF16Lanes = 32;
inline constexpr size_t kF16Panel = 64;

// The per-thread scratch of a block (F16FmaAttentionScratch), every part on 64 bytes.
struct F16Block {
  // fp16 values twice in a 32-bit word, which a plain 32-bit broadcast (a load, where
  // vpbroadcastw also takes a shuffle port from the FMAs) spreads to all 32 fp16 lanes.
  uint32_t* q;    // the rows' fp16 query pairs, ldq a row
  size_t ldq;     // RoundUp(dk, 16)
  float* scores;  // kAttentionKeyTile a row
  uint32_t* p;    // the tile's fp16 probability pairs, kAttentionKeyTile a row
  float* acc;     // ld a row
  float* saved;   // acc as it was before a tile's P V, ld a row
  float* lane_sums;  // 16 a row
  size_t ld;         // RoundUp(dk, 32)

  F16Block(float* scratch, size_t dk) {
    ld = hwy::RoundUpTo(dk, kF16Lanes);
    ldq = hwy::RoundUpTo(dk, 16);
    q = reinterpret_cast<uint32_t*>(scratch);
    scores = scratch + kF16Rows * ldq;
    p = reinterpret_cast<uint32_t*>(scores + kF16Rows * kAttentionKeyTile);
    acc = scores + kF16Rows * 2 * kAttentionKeyTile;
    saved = acc + kF16Rows * ld;
    lane_sums = saved + kF16Rows * ld;
  }
};

// out[0, n) = pairs of fp16(x[i] * scale) (vcvtps2ph: nearest even, subnormals kept).
HWY_INLINE void RoundRowToF16Pairs(const float* HWY_RESTRICT x, size_t n, float scale,
                                   uint32_t* HWY_RESTRICT out) {
  const __m512 vscale = _mm512_set1_ps(scale);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, x + i), vscale);
    const __m512i h = _mm512_cvtepu16_epi32(
        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    _mm512_mask_storeu_epi32(out + i, lanes, _mm512_or_si512(h, _mm512_slli_epi32(h, 16)));
  }
}

HWY_INLINE __m512h BroadcastPair(const uint32_t* pair) {
  return _mm512_castsi512_ph(_mm512_set1_epi32(static_cast<int32_t>(*pair)));
}

HWY_INLINE float PairF32(uint32_t pair) {
  const uint16_t bits = static_cast<uint16_t>(pair);
  _Float16 h;
  memcpy(&h, &bits, sizeof(h));
  return float(h);
}

// out[0, 32) (+)= the 32 fp16 sums widened to fp32 (exact), added in fp32.
HWY_INLINE void AddWidened(__m512h sum, bool first, float* HWY_RESTRICT out) {
  const __m512i bits = _mm512_castph_si512(sum);
  __m512 lo = _mm512_cvtph_ps(_mm512_castsi512_si256(bits));
  __m512 hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(bits, 1));
  if (!first) {
    lo = _mm512_add_ps(_mm512_loadu_ps(out), lo);
    hi = _mm512_add_ps(_mm512_loadu_ps(out + 16), hi);
  }
  _mm512_storeu_ps(out, lo);
  _mm512_storeu_ps(out + 16, hi);
}

// scores[r][0, 64) = the chunked fp16 products of q row r and the panel's 64 keys, kRows rows.
template <size_t kRows>
HWY_NOINLINE void ScorePanelRows(const uint32_t* HWY_RESTRICT q, size_t ldq,
                                 const _Float16* HWY_RESTRICT panel, size_t dk,
                                 float* HWY_RESTRICT scores) {
  for (size_t c0 = 0; c0 < dk; c0 += kF16ScoreChunk) {
    const size_t end = HWY_MIN(dk, c0 + kF16ScoreChunk);
    __m512h acc[kRows][2];
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ph();
    for (size_t c = c0; c < end; ++c) {
      const __m512h k0 = _mm512_loadu_ph(panel + c * kF16Panel);
      const __m512h k1 = _mm512_loadu_ph(panel + c * kF16Panel + kF16Lanes);
#pragma GCC unroll 8
      for (size_t r = 0; r < kRows; ++r) {
        const __m512h qr = BroadcastPair(q + r * ldq + c);
        acc[r][0] = _mm512_fmadd_ph(qr, k0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ph(qr, k1, acc[r][1]);
      }
    }
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) {
      AddWidened(acc[r][0], c0 == 0, scores + r * kAttentionKeyTile);
      AddWidened(acc[r][1], c0 == 0, scores + r * kAttentionKeyTile + kF16Lanes);
    }
  }
}

// acc[r][0, 32 kVecs) += the chunked fp16 sums of p[r][j] value_j over the tile's keys; value
// rows of ldv channels, `channels` of them from this block's first (masked loads past them).
template <size_t kRows, size_t kVecs>
HWY_NOINLINE void AccumulateValueRows(const uint32_t* HWY_RESTRICT p,
                                      const _Float16* HWY_RESTRICT values, size_t ldv,
                                      size_t channels, size_t keys, float* HWY_RESTRICT acc,
                                      size_t ldacc) {
  __mmask32 lanes[kVecs];
  for (size_t v = 0; v < kVecs; ++v) {
    const size_t n = HWY_MIN(kF16Lanes, channels - v * kF16Lanes);
    lanes[v] = n == kF16Lanes ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
  }
  for (size_t j0 = 0; j0 < keys; j0 += kF16ValueChunk) {
    const size_t end = HWY_MIN(keys, j0 + kF16ValueChunk);
    __m512h a[kRows][kVecs];
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 2
      for (size_t v = 0; v < kVecs; ++v) a[r][v] = _mm512_setzero_ph();
    }
    for (size_t j = j0; j < end; ++j) {
      __m512h b[kVecs];
#pragma GCC unroll 2
      for (size_t v = 0; v < kVecs; ++v) {
        b[v] = _mm512_castsi512_ph(
            _mm512_maskz_loadu_epi16(lanes[v], values + j * ldv + v * kF16Lanes));
      }
#pragma GCC unroll 8
      for (size_t r = 0; r < kRows; ++r) {
        const __m512h pr = BroadcastPair(p + r * kAttentionKeyTile + j);
#pragma GCC unroll 2
        for (size_t v = 0; v < kVecs; ++v) a[r][v] = _mm512_fmadd_ph(pr, b[v], a[r][v]);
      }
    }
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 2
      for (size_t v = 0; v < kVecs; ++v) {
        AddWidened(a[r][v], false, acc + r * ldacc + v * kF16Lanes);
      }
    }
  }
}

using ScorePanelFn = void (*)(const uint32_t*, size_t, const _Float16*, size_t, float*);
using AccumulateFn = void (*)(const uint32_t*, const _Float16*, size_t, size_t, size_t, float*,
                              size_t);

template <size_t kRows>
struct AccumulateTable {
  static constexpr AccumulateFn kFns[2] = {&AccumulateValueRows<kRows, 1>,
                                           &AccumulateValueRows<kRows, 2>};
};

// The exact-product fp32 sum that replaces a non-finite chunked fp16 P V sum: sum over i < n of
// a[i] b[i * ldb], fp32 FMAs in order (the products of two fp16 values are exact in fp32).
HWY_INLINE float DotF32(const uint32_t* HWY_RESTRICT a, const _Float16* HWY_RESTRICT b,
                        size_t ldb, size_t n) {
  float sum = 0.0f;
  for (size_t i = 0; i < n; ++i) sum = fmaf(PairF32(a[i]), float(b[i * ldb]), sum);
  return sum;
}

// The fp32 score that replaces a non-finite chunked fp16 one: sum over c < dk of q[c] key[c *
// ldk], fp32 FMAs in channel order, q[c] the query's fp16 value (pairs q16), or where its
// rounding overflowed, its fp32 value (row q times scale, as it was scaled before rounding), so
// that a query past fp16's range scores as the fp32 kernels score it.
HWY_INLINE float ScoreF32(const uint32_t* HWY_RESTRICT q16, const float* HWY_RESTRICT q,
                          float scale, const _Float16* HWY_RESTRICT key, size_t ldk, size_t dk) {
  float sum = 0.0f;
  for (size_t c = 0; c < dk; ++c) {
    const float qc = PairF32(q16[c]);
    sum = fmaf(isinf(qc) ? q[c] * scale : qc, float(key[c * ldk]), sum);
  }
  return sum;
}

// Whether x[0, n) holds no inf or NaN.
HWY_INLINE bool AllFinite(const float* HWY_RESTRICT x, size_t n) {
  constexpr int kNonFinite = 0x01 | 0x08 | 0x10 | 0x80;  // QNaN, +inf, -inf, SNaN
  __mmask16 bad = 0;
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    bad |= _mm512_mask_fpclass_ps_mask(lanes, _mm512_maskz_loadu_ps(lanes, x + i), kNonFinite);
  }
  return bad == 0;
}

// scores[r][0, keys) of keys [t0, t0 + keys) in base-2 units, the masks added.
HWY_INLINE void ScoreTile(const AttentionHeadArgs& args, const F16Block& b, size_t i0, size_t rows,
                          size_t t0, size_t keys) {
  static constexpr ScorePanelFn kScorePanels[kF16Rows] = {
      &ScorePanelRows<1>, &ScorePanelRows<2>, &ScorePanelRows<3>, &ScorePanelRows<4>,
      &ScorePanelRows<5>, &ScorePanelRows<6>, &ScorePanelRows<7>, &ScorePanelRows<8>};
  const size_t dk = args.dk;
  const _Float16* panels = static_cast<const _Float16*>(args.keys);
  for (size_t p0 = 0; p0 < keys; p0 += kF16Panel) {
    kScorePanels[rows - 1](b.q, b.ldq, panels + (t0 + p0) * dk, dk, b.scores + p0);
  }
  for (size_t r = 0; r < rows; ++r) {
    float* HWY_RESTRICT row = b.scores + r * kAttentionKeyTile;
    if (HWY_UNLIKELY(!AllFinite(row, keys))) {  // an fp16 chunk overflowed, or inf / NaN data
      for (size_t j = 0; j < keys; ++j) {
        if (isfinite(row[j])) continue;
        const size_t key = t0 + j;
        const _Float16* panel = panels + key / kF16Panel * kF16Panel * dk + key % kF16Panel;
        row[j] = ScoreF32(b.q + r * b.ldq, args.q + (i0 + r) * args.ldq, args.scale * kLog2e,
                          panel, kF16Panel, dk);
      }
    }
    if (args.softcap > 0.0f) SoftcapRowF32(row, keys, args.softcap * kLog2e);
    ApplyMaskRow(args.mask, i0 + r, t0, keys, kLog2e, row);
  }
}

// Row r's accumulators as they were before the tile (b.saved) plus the tile's P V in fp32 FMAs.
HWY_NOINLINE void AccumulateRowF32(const AttentionHeadArgs& args, const F16Block& b, size_t r,
                                   size_t t0, size_t keys) {
  const size_t dk = args.dk;
  const _Float16* values = static_cast<const _Float16*>(args.values) + t0 * dk;
  const uint32_t* p = b.p + r * kAttentionKeyTile;
  for (size_t c = 0; c < dk; ++c) {
    b.acc[r * b.ld + c] = b.saved[r * b.ld + c] + DotF32(p, values + c, dk, keys);
  }
}

// O[rows] += f16(P) V over the tile's keys [t0, t0 + keys), 64 channels at a time. A row whose
// accumulators leave the finite range (an fp16 chunk overflowed, or inf / NaN data) takes the
// tile's P V as one fp32 sum added to the accumulators of before the tile instead.
HWY_INLINE void AccumulateValues(const AttentionHeadArgs& args, const F16Block& b, size_t rows,
                                 size_t t0, size_t keys) {
  static constexpr const AccumulateFn* kTables[kF16Rows] = {
      AccumulateTable<1>::kFns, AccumulateTable<2>::kFns, AccumulateTable<3>::kFns,
      AccumulateTable<4>::kFns, AccumulateTable<5>::kFns, AccumulateTable<6>::kFns,
      AccumulateTable<7>::kFns, AccumulateTable<8>::kFns};
  const size_t dk = args.dk;
  const _Float16* values = static_cast<const _Float16*>(args.values) + t0 * dk;
  memcpy(b.saved, b.acc, rows * b.ld * sizeof(float));
  for (size_t c = 0; c < dk; c += 2 * kF16Lanes) {
    const size_t channels = HWY_MIN(dk - c, 2 * kF16Lanes);
    kTables[rows - 1][channels > kF16Lanes](b.p, values + c, dk, channels, keys, b.acc + c, b.ld);
  }
  for (size_t r = 0; r < rows; ++r) {
    if (HWY_UNLIKELY(!AllFinite(b.acc + r * b.ld, dk))) AccumulateRowF32(args, b, r, t0, keys);
  }
}

// Block rows' starting state: fp16 queries, zero accumulators, the sink as a key of value zero.
HWY_INLINE void StartRows(const AttentionHeadArgs& args, const F16Block& b, size_t i0, size_t rows,
                          float* row_max, bool* row_bad) {
  const RowTag d;
  for (size_t r = 0; r < rows; ++r) {
    RoundRowToF16Pairs(args.q + (i0 + r) * args.ldq, args.dk, args.scale * kLog2e,
                       b.q + r * b.ldq);
    FillRowF32(b.acc + r * b.ld, b.ld, 0.0f);
    row_max[r] = args.sink * kLog2e;
    float* sums = b.lane_sums + r * hn::Lanes(d);
    FillRowF32(sums, hn::Lanes(d), 0.0f);
    sums[0] = args.sink == -HUGE_VALF ? 0.0f : 1.0f;
    row_bad[r] = false;
  }
}

// The online softmax step of row r over a scored tile: new maximum, rescaled sums and
// accumulators, the tile's probabilities in fp32 (in place) and fp16 (b.p).
HWY_INLINE void SoftmaxTileRow(const F16Block& b, size_t r, size_t keys, float* row_max,
                               bool* row_bad) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const RowTag d;
  float* HWY_RESTRICT p = b.scores + r * kAttentionKeyTile;
  const float new_max = HWY_MAX(row_max[r], RowMaxF32(p, keys));
  if (new_max == kInf || (new_max == -kInf && RowHasNaNF32(p, keys))) row_bad[r] = true;
  if (new_max == -kInf || row_bad[r]) {
    FillRowF32(p, keys, 0.0f);  // nothing visible yet, or already poisoned
  } else {
    const auto tile_sums = Exp2ShiftSumF32(p, keys, new_max);
    const float correction = row_max[r] == -kInf ? 0.0f : exp2f(row_max[r] - new_max);
    float* HWY_RESTRICT sums = b.lane_sums + r * hn::Lanes(d);
    hn::Store(hn::MulAdd(hn::Load(d, sums), hn::Set(d, correction), tile_sums), d, sums);
    if (correction != 1.0f) ScaleRowF32(b.acc + r * b.ld, b.ld, correction);
    row_max[r] = new_max;
  }
  RoundRowToF16Pairs(p, keys, 1.0f, b.p + r * kAttentionKeyTile);
}

// out rows = acc / sum (NaN for a poisoned row, zeros for a row that sees no key); returns the
// sums in row_sum.
HWY_INLINE void FinishRows(const AttentionHeadArgs& args, const F16Block& b, size_t i0,
                           size_t rows, float* row_sum, bool* row_bad) {
  const RowTag d;
  for (size_t r = 0; r < rows; ++r) {
    row_sum[r] = hn::GetLane(hn::SumOfLanes(d, hn::Load(d, b.lane_sums + r * hn::Lanes(d))));
    if (row_sum[r] != row_sum[r]) row_bad[r] = true;
    float* out = args.out + (i0 + r) * args.ldo;
    if (row_bad[r]) {
      FillRowF32(out, args.dk, std::numeric_limits<float>::quiet_NaN());
    } else if (row_sum[r] == 0.0f) {
      FillRowF32(out, args.dk, 0.0f);
    } else {
      StoreRowScaledF32(b.acc + r * b.ld, args.dk, 1.0f / row_sum[r], out);
    }
  }
}

// need_weights: the fp32 core's second pass over the key tiles, on this kernel's scores.
HWY_INLINE void WriteWeights(const AttentionHeadArgs& args, const F16Block& b, size_t i0,
                             size_t rows, size_t lk_block, const float* row_max,
                             const float* row_sum, const bool* row_bad) {
  for (size_t t0 = 0; t0 < args.lk; t0 += kAttentionKeyTile) {
    const size_t keys = HWY_MIN(kAttentionKeyTile, args.lk - t0);
    const size_t visible = t0 < lk_block ? HWY_MIN(keys, lk_block - t0) : 0;
    const bool computed = visible > 0 && !TileMasked(args.mask, i0, rows, t0, visible);
    if (computed) ScoreTile(args, b, i0, rows, t0, visible);
    for (size_t r = 0; r < rows; ++r) {
      float* HWY_RESTRICT w = args.weights + (i0 + r) * args.ldw + t0;
      if (row_bad[r]) {
        FillRowF32(w, keys, std::numeric_limits<float>::quiet_NaN());
        continue;
      }
      size_t done = 0;
      if (computed && row_sum[r] != 0.0f) {
        float* HWY_RESTRICT p = b.scores + r * kAttentionKeyTile;
        Exp2ShiftSumF32(p, visible, row_max[r]);
        StoreRowScaledF32(p, visible, 1.0f / row_sum[r], w);
        done = visible;
      }
      FillRowF32(w + done, keys - done, 0.0f);
    }
  }
}

HWY_NOINLINE void RunF16FmaAttention(const AttentionHeadArgs& args, size_t q_begin, size_t q_end,
                                     float* HWY_RESTRICT scratch) {
  const F16Block b(scratch, args.dk);
  float row_max[kF16Rows], row_sum[kF16Rows];
  bool row_bad[kF16Rows];
  for (size_t i0 = q_begin; i0 < q_end; i0 += kF16Rows) {
    const size_t rows = HWY_MIN(kF16Rows, q_end - i0);
    const size_t lk_block = args.mask.VisibleEnd(i0 + rows - 1, args.lk);
    const size_t t_begin = args.mask.VisibleBegin(i0) / kAttentionKeyTile * kAttentionKeyTile;
    StartRows(args, b, i0, rows, row_max, row_bad);
    for (size_t t0 = t_begin; t0 < lk_block; t0 += kAttentionKeyTile) {
      const size_t keys = HWY_MIN(kAttentionKeyTile, lk_block - t0);
      if (TileMasked(args.mask, i0, rows, t0, keys)) continue;
      ScoreTile(args, b, i0, rows, t0, keys);
      for (size_t r = 0; r < rows; ++r) SoftmaxTileRow(b, r, keys, row_max, row_bad);
      AccumulateValues(args, b, rows, t0, keys);
    }
    FinishRows(args, b, i0, rows, row_sum, row_bad);
    if (args.weights != nullptr) {
      WriteWeights(args, b, i0, rows, lk_block, row_max, row_sum, row_bad);
    }
  }
}

// Not inlined: its caller lacks the avx512fp16 attribute.
HWY_NOINLINE const AttentionKernel* F16FmaAttentionKernel() {
  static const AttentionKernel kKernel = {"f16kv_f16fma_8x64", KvType::kF16,
                                          &HalfKeysBytes,      &HalfValuesBytes,
                                          &PackF16KeysValues,  &F16FmaAttentionScratch,
                                          &RunF16FmaAttention};
  return &kKernel;
}

}  // namespace f16fma
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_POP_ATTRIBUTES
#endif  // EDGEATTN_ATTENTION_F16FMA

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

// Exported: plain inline, as a one-target build calls it directly (see attention-inl.h).
inline std::vector<const AttentionKernel*> ListF16FmaAttentionKernels() {
#if EDGEATTN_ATTENTION_F16FMA
  if (CpuHasAvx512Fp16()) return {f16fma::F16FmaAttentionKernel()};
#endif
  return {};
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_ATTENTION_F16FMA
#endif  // EDGEATTN_SIMD_ATTENTION_F16FMA_INL_H_
