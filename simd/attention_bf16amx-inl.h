// Per-target attention core on AMX-BF16 tiles, bf16kv_amx_8x64 (attention_bf16amx.h), for the
// x86-64 AVX-512 targets on CPUs with AMX-BF16: the bf16 dot-product core's arithmetic and pair
// layouts (attention_bf16dot.h), its online softmax unchanged, with the two products on tiles:
//   S = Q_bf16 K_panel^T   8 rows x 64 keys: four 8 x 16 fp32 accumulator tiles over the
//                          channel pairs, 16 at a time (a key panel's pair row holds four
//                          16-key tile rows side by side, so the key tiles are read in place)
//   O += bf16(P) V_tile    8 rows x 64 channels: the accumulators loaded from O, 16 key pairs a
//                          step, stored back
// so the tile unit does the multiplications while the vector units run the exponentials. Blocks
// of 8 rows: the bf16 core's scratch, and a tile's multiplications take time in proportion to
// its rows, so short tiles cost only more key and value loads.
//
// Nothing past the data is read: a head width whose channel pairs are not a multiple of 16 ends
// with narrower tiles (6 and 7, configured per call); a key tile whose pairs are not a multiple
// of 16 takes its last value rows from a stack copy, zero past the tile's last key (the odd
// partner of a last key too: its probability is 0, but 0 x NaN is NaN), as its probabilities
// are zero past it.

#if defined(EDGEATTN_SIMD_ATTENTION_BF16AMX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_ATTENTION_BF16AMX_INL_H_
#undef EDGEATTN_SIMD_ATTENTION_BF16AMX_INL_H_
#else
#define EDGEATTN_SIMD_ATTENTION_BF16AMX_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <limits>
#include <vector>

#include "hwy/highway.h"
#include "simd/amx_tiles.h"
#include "simd/attention.h"
#include "simd/attention_bf16dot-inl.h"
#include "simd/attention_bf16dot.h"
#include "simd/attention_mask-inl.h"
#include "simd/cpu_features.h"
#include "simd/highway_compat.h"
#include "simd/softmax-inl.h"

// The AMX intrinsics arrived in g++ 11 and clang 12; AMX exists in 64-bit mode only.
#if EDGEATTN_TARGET_HAS_AVX512 && HWY_ARCH_X86_64 && \
    (HWY_COMPILER_GCC_ACTUAL >= 1100 || HWY_COMPILER_CLANG >= 1200)
#include <immintrin.h>
#define EDGEATTN_ATTENTION_BF16AMX 1
#else
#define EDGEATTN_ATTENTION_BF16AMX 0
#endif

#if EDGEATTN_ATTENTION_BF16AMX
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512bf16,amx-tile,amx-bf16")
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

inline constexpr size_t kAmxAttentionRows = kAttentionMaxBlockRows;
inline constexpr size_t kAmxStepPairs = 16;  // channel or key pairs per tile step
inline constexpr size_t kAmxTileFloats = 16;

// Tiles: 0-3 fp32 accumulators (rows x 16), 4 the rows' bf16 pairs (rows x 16 pairs), 5 keys or
// values (16 pairs x 16), and for a head width's last channel pairs 6 (rows x tail) and 7 (tail
// x 16); no rows there when the pairs are a multiple of 16.
HWY_INLINE void ConfigureAttentionTiles(size_t rows, size_t tail_pairs) {
  AmxTileConfig config;
  for (size_t t = 0; t <= 4; ++t) config.Tile(t, rows, 64);
  config.Tile(5, kAmxStepPairs, 64);
  config.Tile(6, tail_pairs == 0 ? 0 : rows, 4 * tail_pairs).Tile(7, tail_pairs, 64);
  _tile_loadconfig(&config);
}

// One pair row of a key panel: 64 keys x 2 channels of bf16.
inline constexpr size_t kKeyPairRowBytes = kKeyPairRow * sizeof(uint16_t);

// scores[r][p0, p0 + 64) for the block's rows = their bf16 pairs . the panel's 64 keys.
HWY_INLINE void ScorePanelAmx(const Bf16DotBlock& b, const uint8_t* panel, size_t pairs,
                              float* HWY_RESTRICT scores) {
  const size_t ldq = b.ldq * sizeof(uint32_t);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  size_t pair = 0;
  for (; pair + kAmxStepPairs <= pairs; pair += kAmxStepPairs) {
    const uint8_t* keys = panel + pair * kKeyPairRowBytes;
    _tile_loadd(4, b.q + pair, ldq);
    _tile_loadd(5, keys, kKeyPairRowBytes);
    _tile_dpbf16ps(0, 4, 5);
    _tile_loadd(5, keys + 64, kKeyPairRowBytes);
    _tile_dpbf16ps(1, 4, 5);
    _tile_loadd(5, keys + 128, kKeyPairRowBytes);
    _tile_dpbf16ps(2, 4, 5);
    _tile_loadd(5, keys + 192, kKeyPairRowBytes);
    _tile_dpbf16ps(3, 4, 5);
  }
  if (pair < pairs) {
    const uint8_t* keys = panel + pair * kKeyPairRowBytes;
    _tile_loadd(6, b.q + pair, ldq);
    _tile_loadd(7, keys, kKeyPairRowBytes);
    _tile_dpbf16ps(0, 6, 7);
    _tile_loadd(7, keys + 64, kKeyPairRowBytes);
    _tile_dpbf16ps(1, 6, 7);
    _tile_loadd(7, keys + 128, kKeyPairRowBytes);
    _tile_dpbf16ps(2, 6, 7);
    _tile_loadd(7, keys + 192, kKeyPairRowBytes);
    _tile_dpbf16ps(3, 6, 7);
  }
  const size_t lds = kAttentionKeyTile * sizeof(float);
  _tile_stored(0, scores, lds);
  _tile_stored(1, scores + kAmxTileFloats, lds);
  _tile_stored(2, scores + 2 * kAmxTileFloats, lds);
  _tile_stored(3, scores + 3 * kAmxTileFloats, lds);
}

// The bf16 core's ScoreTileBf16 with the panels on tiles.
HWY_INLINE void ScoreTileAmx(const AttentionHeadArgs& args, const Bf16DotBlock& b, size_t i0,
                             size_t rows, size_t t0, size_t keys) {
  const size_t pairs = (args.dk + 1) / 2;
  const uint16_t* panels = static_cast<const uint16_t*>(args.keys);
  for (size_t p0 = 0; p0 < keys; p0 += kBf16DotKeyPanel) {
    const uint16_t* panel = panels + (t0 + p0) / kBf16DotKeyPanel * pairs * kKeyPairRow;
    ScorePanelAmx(b, reinterpret_cast<const uint8_t*>(panel), pairs, b.scores + p0);
  }
  for (size_t r = 0; r < rows; ++r) {
    float* HWY_RESTRICT row = b.scores + r * kAttentionKeyTile;
    if (args.softcap > 0.0f) SoftcapRowF32(row, keys, args.softcap * kLog2e);
    ApplyMaskRow(args.mask, i0 + r, t0, keys, kLog2e, row);
  }
}

// Accumulators 0..groups-1 += the probabilities' key pairs [0, pairs) x the value rows from
// `values` (ldv bytes apart), 16 channels per accumulator from `values`' channel 0.
HWY_INLINE void ValueStepsAmx(const Bf16DotBlock& b, const uint8_t* values, size_t ldv,
                              size_t pair_begin, size_t pair_end, size_t groups) {
  const size_t ldp = kAttentionKeyTile * sizeof(uint16_t);
  for (size_t pair = pair_begin; pair < pair_end; pair += kAmxStepPairs) {
    const uint8_t* rows = values + (pair - pair_begin) * ldv;
    _tile_loadd(4, b.p + 2 * pair, ldp);
    _tile_loadd(5, rows, ldv);
    _tile_dpbf16ps(0, 4, 5);
    if (groups < 2) continue;
    _tile_loadd(5, rows + 64, ldv);
    _tile_dpbf16ps(1, 4, 5);
    if (groups < 3) continue;
    _tile_loadd(5, rows + 128, ldv);
    _tile_dpbf16ps(2, 4, 5);
    if (groups < 4) continue;
    _tile_loadd(5, rows + 192, ldv);
    _tile_dpbf16ps(3, 4, 5);
  }
}

HWY_INLINE void LoadAccumulators(const float* acc, size_t ldacc, size_t groups) {
  const size_t stride = ldacc * sizeof(float);
  _tile_loadd(0, acc, stride);
  if (groups > 1) _tile_loadd(1, acc + kAmxTileFloats, stride);
  if (groups > 2) _tile_loadd(2, acc + 2 * kAmxTileFloats, stride);
  if (groups > 3) _tile_loadd(3, acc + 3 * kAmxTileFloats, stride);
}

HWY_INLINE void StoreAccumulators(float* acc, size_t ldacc, size_t groups) {
  const size_t stride = ldacc * sizeof(float);
  _tile_stored(0, acc, stride);
  if (groups > 1) _tile_stored(1, acc + kAmxTileFloats, stride);
  if (groups > 2) _tile_stored(2, acc + 2 * kAmxTileFloats, stride);
  if (groups > 3) _tile_stored(3, acc + 3 * kAmxTileFloats, stride);
}

// O[rows] += bf16(P) V over the tile's keys [t0, t0 + keys), 64 channels at a time. The key
// pairs past the last whole step come from a copy of those value rows' 64 channels, zero past the
// tile's last key and past the step's end, and the probabilities are zeroed up to that end.
HWY_INLINE void AccumulateValuesAmx(const AttentionHeadArgs& args, const Bf16DotBlock& b,
                                    size_t rows, size_t t0, size_t keys) {
  const size_t ldv = 2 * b.ldacc * sizeof(uint16_t);  // bytes of a value pair row
  const uint8_t* values = static_cast<const uint8_t*>(args.values) + t0 / 2 * ldv;
  const size_t pairs = (keys + 1) / 2;
  const size_t whole = pairs / kAmxStepPairs * kAmxStepPairs;
  const size_t tail = pairs - whole;
  if (tail > 0) {
    for (size_t r = 0; r < rows; ++r) {
      uint16_t* p = b.p + r * kAttentionKeyTile;
      memset(p + keys, 0, (2 * (whole + kAmxStepPairs) - keys) * sizeof(uint16_t));
    }
  }
  constexpr size_t kChunkBytes = 4 * kAmxTileFloats * 2 * sizeof(uint16_t);  // 64 channels x 2
  HWY_ALIGN uint8_t last[kAmxStepPairs * kChunkBytes];
  for (size_t c = 0; c < b.ldacc; c += 4 * kAmxTileFloats) {
    const size_t groups = HWY_MIN(size_t{4}, (b.ldacc - c) / kAmxTileFloats);
    const uint8_t* chunk = values + c * 2 * sizeof(uint16_t);
    LoadAccumulators(b.acc + c, b.ldacc, groups);
    ValueStepsAmx(b, chunk, ldv, 0, whole, groups);
    if (tail > 0) {
      memset(last, 0, sizeof(last));
      for (size_t t = 0; t < tail; ++t) {
        memcpy(last + t * kChunkBytes, chunk + (whole + t) * ldv, groups * 64);
      }
      if (keys % 2 != 0) {  // the last key's partner: its p is 0, but 0 x NaN is NaN
        uint16_t* row = reinterpret_cast<uint16_t*>(last + (tail - 1) * kChunkBytes);
        for (size_t i = 1; i < 2 * 4 * kAmxTileFloats; i += 2) row[i] = 0;
      }
      ValueStepsAmx(b, last, kChunkBytes, whole, whole + kAmxStepPairs, groups);
    }
    StoreAccumulators(b.acc + c, b.ldacc, groups);
  }
}

// The bf16 core's RunBf16DotAttention with both products on tiles, configured for each block's
// rows.
HWY_NOINLINE void RunBf16AmxAttention(const AttentionHeadArgs& args, size_t q_begin, size_t q_end,
                                      float* HWY_RESTRICT scratch) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  const size_t dk = args.dk;
  const Bf16DotBlock b(scratch, dk);
  const RowTag d;
  const size_t tail_pairs = (dk + 1) / 2 % kAmxStepPairs;
  size_t configured_rows = 0;
  float row_max[kAmxAttentionRows];
  float row_sum[kAmxAttentionRows];
  bool row_bad[kAmxAttentionRows];

  for (size_t i0 = q_begin; i0 < q_end; i0 += kAmxAttentionRows) {
    const size_t rows = HWY_MIN(kAmxAttentionRows, q_end - i0);
    if (rows != configured_rows) {
      ConfigureAttentionTiles(rows, tail_pairs);
      configured_rows = rows;
    }
    const size_t lk_block = args.mask.VisibleEnd(i0 + rows - 1, args.lk);
    const size_t t_begin = args.mask.VisibleBegin(i0) / kAttentionKeyTile * kAttentionKeyTile;
    for (size_t r = 0; r < rows; ++r) {
      RoundRowToBf16(args.q + (i0 + r) * args.ldq, dk, args.scale * kLog2e,
                     reinterpret_cast<uint16_t*>(b.q + r * b.ldq));
      FillRowF32(b.acc + r * b.ldacc, b.ldacc, 0.0f);
      row_max[r] = args.sink * kLog2e;  // a sink is a key of value zero that every row sees
      FillRowF32(b.lane_sums + r * kBf16DotValueAlign, kBf16DotValueAlign, 0.0f);
      b.lane_sums[r * kBf16DotValueAlign] = args.sink == -kInf ? 0.0f : 1.0f;
      row_bad[r] = false;
    }
    for (size_t t0 = t_begin; t0 < lk_block; t0 += kAttentionKeyTile) {
      const size_t keys = HWY_MIN(kAttentionKeyTile, lk_block - t0);
      if (TileMasked(args.mask, i0, rows, t0, keys)) continue;
      ScoreTileAmx(args, b, i0, rows, t0, keys);
      float tile_max[kAmxAttentionRows];
      for (size_t r = 0; r < rows; ++r) {
        tile_max[r] = RowMaxF32(b.scores + r * kAttentionKeyTile, keys);
      }
      for (size_t r = 0; r < rows; ++r) {
        float* HWY_RESTRICT p = b.scores + r * kAttentionKeyTile;
        const float new_max = HWY_MAX(row_max[r], tile_max[r]);
        if (new_max == kInf || (new_max == -kInf && RowHasNaNF32(p, keys))) row_bad[r] = true;
        if (new_max == -kInf || row_bad[r]) {
          FillRowF32(p, keys, 0.0f);  // nothing visible yet, or already poisoned
        } else {
          const auto tile_sums = Exp2ShiftSumF32(p, keys, new_max);
          const float correction = row_max[r] == -kInf ? 0.0f : exp2f(row_max[r] - new_max);
          float* HWY_RESTRICT sums = b.lane_sums + r * kBf16DotValueAlign;
          hn::Store(hn::MulAdd(hn::Load(d, sums), hn::Set(d, correction), tile_sums), d, sums);
          if (correction != 1.0f) ScaleRowF32(b.acc + r * b.ldacc, dk, correction);
          row_max[r] = new_max;
        }
        RoundRowToBf16(p, keys, 1.0f, b.p + r * kAttentionKeyTile);
      }
      AccumulateValuesAmx(args, b, rows, t0, keys);
    }
    for (size_t r = 0; r < rows; ++r) {
      row_sum[r] =
          hn::GetLane(hn::SumOfLanes(d, hn::Load(d, b.lane_sums + r * kBf16DotValueAlign)));
      if (row_sum[r] != row_sum[r]) row_bad[r] = true;
      float* out = args.out + (i0 + r) * args.ldo;
      if (row_bad[r]) {
        FillRowF32(out, dk, kNaN);
      } else if (row_sum[r] == 0.0f) {
        FillRowF32(out, dk, 0.0f);  // every key masked: defined as zeros
      } else {
        StoreRowScaledF32(b.acc + r * b.ldacc, dk, 1.0f / row_sum[r], out);
      }
    }
    if (args.weights == nullptr) continue;
    // need_weights: the fp32 core's second pass, on this kernel's scores.
    for (size_t t0 = 0; t0 < args.lk; t0 += kAttentionKeyTile) {
      const size_t keys = HWY_MIN(kAttentionKeyTile, args.lk - t0);
      const size_t visible = t0 < lk_block ? HWY_MIN(keys, lk_block - t0) : 0;
      const bool computed = visible > 0 && !TileMasked(args.mask, i0, rows, t0, visible);
      if (computed) ScoreTileAmx(args, b, i0, rows, t0, visible);
      for (size_t r = 0; r < rows; ++r) {
        float* HWY_RESTRICT w = args.weights + (i0 + r) * args.ldw + t0;
        if (row_bad[r]) {
          FillRowF32(w, keys, kNaN);
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
  if (configured_rows != 0) _tile_release();
}

// Not inlined: its caller lacks the AMX attributes.
HWY_NOINLINE const AttentionKernel* Bf16AmxAttentionKernel() {
  static const AttentionKernel kKernel = {"bf16kv_amx_8x64",      KvType::kBf16,
                                          &Bf16DotKeysBytes,      &Bf16DotValuesBytes,
                                          &PackBf16DotKeysValues, &Bf16DotAttentionScratch,
                                          &RunBf16AmxAttention};
  return &kKernel;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_POP_ATTRIBUTES
#endif  // EDGEATTN_ATTENTION_BF16AMX

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

// Exported: plain inline, as a one-target build calls it directly (see attention-inl.h).
inline std::vector<const AttentionKernel*> ListBf16AmxAttentionKernels() {
#if EDGEATTN_ATTENTION_BF16AMX
  if (CpuRunsAmxBf16()) return {Bf16AmxAttentionKernel()};
#endif
  return {};
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_ATTENTION_BF16AMX
#endif  // EDGEATTN_SIMD_ATTENTION_BF16AMX_INL_H_
