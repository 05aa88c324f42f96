// Per-target attention cores in bf16 dot products (attention_bf16dot.h), for the x86 AVX-512
// targets: the fp32 core's online softmax over key tiles of 256 (attention-inl.h), with
//   S = Q_bf16 K_tile^T      bf16kv_bf16dot_6x4v: 6 rows x 64 keys per vdpbf16ps step;
//                            bf16kv_bf16amx_16x64: 16 rows x 64 keys per AMX tile step
//   O += bf16(P) V_tile      two keys per lane (vdpbf16ps) or 32 keys per tile step (AMX)
// Highway 1.0.3 neither emits vdpbf16ps nor names avx512bf16 or AMX in a target string, so, as
// the bf16 projection kernel (gemm_bf16_dot-inl.h), this file adds the features to its own
// functions and lists each kernel only where the CPU runs it.

#if defined(EDGEATTN_SIMD_ATTENTION_BF16DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_ATTENTION_BF16DOT_INL_H_
#undef EDGEATTN_SIMD_ATTENTION_BF16DOT_INL_H_
#else
#define EDGEATTN_SIMD_ATTENTION_BF16DOT_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "hwy/highway.h"
#include "simd/amx_tiles.h"
#include "simd/attention.h"
#include "simd/attention_bf16dot.h"
#include "simd/attention_mask-inl.h"
#include "simd/cpu_features.h"
#include "simd/highway_compat.h"
#include "simd/kv_half_rows-inl.h"
#include "simd/online_softmax_rows-inl.h"
#include "simd/softmax-inl.h"

namespace edgeattn {
namespace simd {
// The target-independent parts of the kernel's contract (attention_bf16dot.cc).
size_t Bf16DotAttentionScratch(size_t dk);
size_t Bf16AmxAttentionScratch(size_t dk);
}  // namespace simd
}  // namespace edgeattn

#if EDGEATTN_TARGET_HAS_AVX512
#include <immintrin.h>
#define EDGEATTN_ATTENTION_BF16DOT 1
#else
#define EDGEATTN_ATTENTION_BF16DOT 0
#endif

// The AMX intrinsics arrived in g++ 11 and clang 12; AMX exists in 64-bit mode only.
#if EDGEATTN_ATTENTION_BF16DOT && HWY_ARCH_X86_64 && \
    (HWY_COMPILER_GCC_ACTUAL >= 1100 || HWY_COMPILER_CLANG >= 1200)
#define EDGEATTN_ATTENTION_BF16AMX 1
#else
#define EDGEATTN_ATTENTION_BF16AMX 0
#endif

#if EDGEATTN_ATTENTION_BF16AMX
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512bf16,amx-tile,amx-bf16")
#elif EDGEATTN_ATTENTION_BF16DOT
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512bf16")
#endif
#if EDGEATTN_ATTENTION_BF16DOT
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

// Query rows per block: the 6 x 4 accumulators of both products fit 32 registers with the
// operands.
inline constexpr size_t kBf16DotRows = 6;
static_assert(kBf16DotRows <= kAttentionMaxBlockRows, "scratch holds kAttentionMaxBlockRows");
static_assert(kAttentionMaxBlockRows <= kBf16AmxRows, "AMX scratch holds a vdpbf16ps block");
// bf16 elements of one key panel's pair row and of one whole vector.
inline constexpr size_t kKeyPairRow = 2 * kBf16DotKeyPanel;
inline constexpr size_t kBf16PerVector = 32;

// The per-thread scratch of a block of up to `capacity` rows (ScratchFloats in
// attention_bf16dot.cc), every part on 64 bytes.
struct Bf16DotBlock {
  uint32_t* q;  // the rows' bf16 channel pairs, ldq words a row
  size_t ldq;
  float* scores;  // kAttentionKeyTile a row
  uint16_t* p;    // the tile's bf16 probabilities, kAttentionKeyTile a row
  float* acc;     // ldacc a row
  size_t ldacc;
  float* lane_sums;       // kBf16DotValueAlign a row
  uint16_t* values_tail;  // kBf16AmxRows value pair rows (2 ldacc elements each)

  Bf16DotBlock(float* scratch, size_t dk, size_t capacity) {
    ldq = hwy::RoundUpTo((dk + 1) / 2, kBf16DotValueAlign);
    ldacc = hwy::RoundUpTo(dk, kBf16DotValueAlign);
    q = reinterpret_cast<uint32_t*>(scratch);
    scores = scratch + capacity * ldq;
    p = reinterpret_cast<uint16_t*>(scores + capacity * kAttentionKeyTile);
    acc = scores + capacity * (kAttentionKeyTile + kAttentionKeyTile / 2);
    lane_sums = acc + capacity * ldacc;
    values_tail = reinterpret_cast<uint16_t*>(lane_sums + capacity * kBf16DotValueAlign);
  }
};

HWY_INLINE __mmask16 FirstLanes16(size_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
}

// out[0, padded) = bf16(x[i] * scale) for i < n, zero past n (vcvtneps2bf16: nearest even,
// subnormals to zero); padded >= n, a multiple of 16. Reads nothing past x[n].
HWY_INLINE void RoundRowToBf16(const float* HWY_RESTRICT x, size_t n, size_t padded, float scale,
                               uint16_t* HWY_RESTRICT out) {
  const __m512 vscale = _mm512_set1_ps(scale);
  for (size_t i = 0; i < padded; i += 16) {
    const __mmask16 lanes = i < n ? FirstLanes16(n - i) : __mmask16(0);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, x + i), vscale);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)));
  }
}

HWY_INLINE __m512bh BroadcastPair(const void* pair) {
  uint32_t word;
  memcpy(&word, pair, sizeof(word));
  return reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int32_t>(word)));
}

HWY_INLINE __m512bh LoadBf16(const uint16_t* from) {
  return reinterpret_cast<__m512bh>(_mm512_loadu_si512(from));
}

// scores[r][0, 64) = q row r . the panel's 64 keys, for kRows rows; `pairs` channel pairs.
template <size_t kRows>
HWY_NOINLINE void ScorePanelRows(const uint32_t* HWY_RESTRICT q, size_t ldq,
                                 const uint16_t* HWY_RESTRICT panel, size_t pairs,
                                 float* HWY_RESTRICT scores) {
  __m512 acc[kRows][4];
#pragma GCC unroll 6
  for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (size_t v = 0; v < 4; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (size_t pair = 0; pair < pairs; ++pair, panel += kKeyPairRow) {
    const __m512bh k0 = LoadBf16(panel);
    const __m512bh k1 = LoadBf16(panel + kBf16PerVector);
    const __m512bh k2 = LoadBf16(panel + 2 * kBf16PerVector);
    const __m512bh k3 = LoadBf16(panel + 3 * kBf16PerVector);
#pragma GCC unroll 6
    for (size_t r = 0; r < kRows; ++r) {
      const __m512bh qr = BroadcastPair(q + r * ldq + pair);
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], qr, k0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], qr, k1);
      acc[r][2] = _mm512_dpbf16_ps(acc[r][2], qr, k2);
      acc[r][3] = _mm512_dpbf16_ps(acc[r][3], qr, k3);
    }
  }
#pragma GCC unroll 6
  for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (size_t v = 0; v < 4; ++v)
      _mm512_storeu_ps(scores + r * kAttentionKeyTile + 16 * v, acc[r][v]);
  }
}

// acc[r][0, 16 kVecs) += sum over the tile's keys j of p[r][j] value_j, two keys a step; an
// odd last key's partner is masked out of the values (its p is 0, but 0 * NaN is NaN).
template <size_t kRows, size_t kVecs>
HWY_NOINLINE void AccumulateValueRows(const uint16_t* HWY_RESTRICT p,
                                      const uint16_t* HWY_RESTRICT values, size_t ldv, size_t keys,
                                      float* HWY_RESTRICT acc, size_t ldacc) {
  __m512 a[kRows][kVecs];
#pragma GCC unroll 6
  for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (size_t v = 0; v < kVecs; ++v) a[r][v] = _mm512_loadu_ps(acc + r * ldacc + 16 * v);
  }
  const __m512i both = _mm512_set1_epi32(-1), even = _mm512_set1_epi32(0xFFFF);
  for (size_t t = 0; t < (keys + 1) / 2; ++t) {
    const uint16_t* row = values + t * ldv;
    const __m512i keep = 2 * t + 1 < keys ? both : even;
    __m512bh b[kVecs];
#pragma GCC unroll 4
    for (size_t v = 0; v < kVecs; ++v) {
      b[v] = reinterpret_cast<__m512bh>(
          _mm512_and_si512(_mm512_loadu_si512(row + v * kBf16PerVector), keep));
    }
#pragma GCC unroll 6
    for (size_t r = 0; r < kRows; ++r) {
      const __m512bh pr = BroadcastPair(p + r * kAttentionKeyTile + 2 * t);
#pragma GCC unroll 4
      for (size_t v = 0; v < kVecs; ++v) a[r][v] = _mm512_dpbf16_ps(a[r][v], pr, b[v]);
    }
  }
#pragma GCC unroll 6
  for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (size_t v = 0; v < kVecs; ++v) _mm512_storeu_ps(acc + r * ldacc + 16 * v, a[r][v]);
  }
}

using ScorePanelFn = void (*)(const uint32_t*, size_t, const uint16_t*, size_t, float*);
using AccumulateFn = void (*)(const uint16_t*, const uint16_t*, size_t, size_t, float*, size_t);

template <size_t kRows>
struct AccumulateTable {
  static constexpr AccumulateFn kFns[4] = {
      &AccumulateValueRows<kRows, 1>, &AccumulateValueRows<kRows, 2>,
      &AccumulateValueRows<kRows, 3>, &AccumulateValueRows<kRows, 4>};
};

// The vdpbf16ps products: blocks of 6 rows, 64 keys or 64 channels in registers.
struct VdpEngine {
  static constexpr size_t kRows = kBf16DotRows;

  // scores[r][0, RoundUp(keys, 64)) = (bf16 q row r) . key (t0 + j).
  static void Scores(const AttentionHeadArgs& args, const Bf16DotBlock& b, size_t rows, size_t t0,
                     size_t keys) {
    static constexpr ScorePanelFn kScorePanels[kBf16DotRows] = {
        &ScorePanelRows<1>, &ScorePanelRows<2>, &ScorePanelRows<3>,
        &ScorePanelRows<4>, &ScorePanelRows<5>, &ScorePanelRows<6>};
    const size_t pairs = (args.dk + 1) / 2;
    const uint16_t* panels = static_cast<const uint16_t*>(args.keys);
    for (size_t p0 = 0; p0 < keys; p0 += kBf16DotKeyPanel) {
      const uint16_t* panel = panels + (t0 + p0) / kBf16DotKeyPanel * pairs * kKeyPairRow;
      kScorePanels[rows - 1](b.q, b.ldq, panel, pairs, b.scores + p0);
    }
  }

  // O[rows] += bf16(P) V over the tile's keys [t0, t0 + keys), 64 channels at a time.
  static void AccumulateValues(const AttentionHeadArgs& args, const Bf16DotBlock& b, size_t rows,
                               size_t t0, size_t keys) {
    static constexpr const AccumulateFn* kTables[kBf16DotRows] = {
        AccumulateTable<1>::kFns, AccumulateTable<2>::kFns, AccumulateTable<3>::kFns,
        AccumulateTable<4>::kFns, AccumulateTable<5>::kFns, AccumulateTable<6>::kFns};
    const size_t ldv = 2 * b.ldacc;  // bf16 elements of a pair row
    const uint16_t* values = static_cast<const uint16_t*>(args.values) + t0 / 2 * ldv;
    for (size_t c = 0; c < b.ldacc; c += 64) {
      const size_t vecs = HWY_MIN(size_t{4}, (b.ldacc - c) / 16);
      kTables[rows - 1][vecs - 1](b.p, values + 2 * c, ldv, keys, b.acc + c, b.ldacc);
    }
  }
};

#if EDGEATTN_ATTENTION_BF16AMX
// The AMX tile products: blocks of 16 rows (rows past the block's compute on stale scratch,
// never read). Tiles 0-3 accumulate 16 rows x 16 keys (scores) or 16 channels (P V); tile 4
// holds 16 rows of 16 query pairs or 32 probabilities; tiles 5 and 6 16 pair rows of 16 keys or
// channels, alternating so that a load overlaps the last product. Keys are read straight from
// the 64-key panels (a 16-key slice, stride one pair row) and values from their pair rows (a
// 16-channel slice). dk is a multiple of 32 (whole tile steps).
struct AmxEngine {
  static constexpr size_t kRows = kBf16AmxRows;

  static void Configure() {
    AmxTileConfig config;
    for (size_t t = 0; t <= 6; ++t) config.Tile(t, 16, 64);
    LoadTileConfig(config);
  }

  static void Scores(const AttentionHeadArgs& args, const Bf16DotBlock& b, size_t /*rows*/,
                     size_t t0, size_t keys) {
    const size_t pairs = args.dk / 2;
    const uint16_t* panels = static_cast<const uint16_t*>(args.keys);
    constexpr size_t kKeyStride = kKeyPairRow * sizeof(uint16_t);
    constexpr size_t kScoreStride = kAttentionKeyTile * sizeof(float);
    for (size_t p0 = 0; p0 < keys; p0 += kBf16DotKeyPanel) {
      const uint16_t* panel = panels + (t0 + p0) / kBf16DotKeyPanel * pairs * kKeyPairRow;
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (size_t k = 0; k < pairs; k += 16) {
        const uint16_t* slice = panel + k * kKeyPairRow;
        EDGEATTN_TILE_LOADD(4, b.q + k, b.ldq * sizeof(uint32_t));
        EDGEATTN_TILE_LOADD(5, slice, kKeyStride);
        _tile_dpbf16ps(0, 4, 5);
        EDGEATTN_TILE_LOADD(6, slice + kBf16PerVector, kKeyStride);
        _tile_dpbf16ps(1, 4, 6);
        EDGEATTN_TILE_LOADD(5, slice + 2 * kBf16PerVector, kKeyStride);
        _tile_dpbf16ps(2, 4, 5);
        EDGEATTN_TILE_LOADD(6, slice + 3 * kBf16PerVector, kKeyStride);
        _tile_dpbf16ps(3, 4, 6);
      }
      float* s = b.scores + p0;
      _tile_stored(0, s, kScoreStride);
      _tile_stored(1, s + 16, kScoreStride);
      _tile_stored(2, s + 32, kScoreStride);
      _tile_stored(3, s + 48, kScoreStride);
    }
  }

  // The value pair rows of the tile's last step when its keys end before a multiple of 32,
  // copied with zeros past the last key: every step is then a whole tile step, and no value
  // past the block's keys is read (0 * NaN would poison the rows).
  static const uint16_t* ValuesTail(const Bf16DotBlock& b, const uint16_t* values, size_t ldv,
                                    size_t keys) {
    const size_t first = keys / 32 * 16, pairs = (keys + 1) / 2;
    for (size_t t = 0; t < 16; ++t) {
      uint16_t* row = b.values_tail + t * ldv;
      if (first + t < pairs) {
        memcpy(row, values + (first + t) * ldv, ldv * sizeof(uint16_t));
      } else {
        memset(row, 0, ldv * sizeof(uint16_t));
      }
      if (2 * (first + t) + 1 == keys) {
        for (size_t i = 1; i < ldv; i += 2) row[i] = 0;  // the odd last key's partner
      }
    }
    return b.values_tail;
  }

  static void AccumulateValues(const AttentionHeadArgs& args, const Bf16DotBlock& b,
                               size_t /*rows*/, size_t t0, size_t keys) {
    const size_t ldv = 2 * b.ldacc;  // bf16 elements of a pair row
    const uint16_t* values = static_cast<const uint16_t*>(args.values) + t0 / 2 * ldv;
    const size_t whole = keys / 32 * 32;
    const uint16_t* tail = whole < keys ? ValuesTail(b, values, ldv, keys) : nullptr;
    const size_t acc_stride = b.ldacc * sizeof(float), v_stride = ldv * sizeof(uint16_t);
    constexpr size_t kPStride = kAttentionKeyTile * sizeof(uint16_t);
    for (size_t c = 0; c < b.ldacc; c += 64) {
      const bool four = b.ldacc - c >= 64;  // else two tiles: dk is a multiple of 32
      float* acc = b.acc + c;
      EDGEATTN_TILE_LOADD(0, acc, acc_stride);
      EDGEATTN_TILE_LOADD(1, acc + 16, acc_stride);
      if (four) {
        EDGEATTN_TILE_LOADD(2, acc + 32, acc_stride);
        EDGEATTN_TILE_LOADD(3, acc + 48, acc_stride);
      }
      for (size_t j = 0; j < keys; j += 32) {
        const uint16_t* v = (j < whole ? values + j / 2 * ldv : tail) + 2 * c;
        EDGEATTN_TILE_LOADD(4, b.p + j, kPStride);
        EDGEATTN_TILE_LOADD(5, v, v_stride);
        _tile_dpbf16ps(0, 4, 5);
        EDGEATTN_TILE_LOADD(6, v + kBf16PerVector, v_stride);
        _tile_dpbf16ps(1, 4, 6);
        if (four) {
          EDGEATTN_TILE_LOADD(5, v + 2 * kBf16PerVector, v_stride);
          _tile_dpbf16ps(2, 4, 5);
          EDGEATTN_TILE_LOADD(6, v + 3 * kBf16PerVector, v_stride);
          _tile_dpbf16ps(3, 4, 6);
        }
      }
      _tile_stored(0, acc, acc_stride);
      _tile_stored(1, acc + 16, acc_stride);
      if (four) {
        _tile_stored(2, acc + 32, acc_stride);
        _tile_stored(3, acc + 48, acc_stride);
      }
    }
  }
};
#endif  // EDGEATTN_ATTENTION_BF16AMX

// scores[r][0, keys) = (bf16 q row r) . key (t0 + j) + the masks, in base-2 units, for the
// block's rows (attention-inl.h's ScoreTile with bf16 products).
template <class Engine>
HWY_INLINE void ScoreTileBf16(const AttentionHeadArgs& args, const Bf16DotBlock& b, size_t i0,
                              size_t rows, size_t t0, size_t keys) {
  Engine::Scores(args, b, rows, t0, keys);
  for (size_t r = 0; r < rows; ++r) {
    float* HWY_RESTRICT row = b.scores + r * kAttentionKeyTile;
    if (args.softcap > 0.0f) SoftcapRowF32(row, keys, args.softcap * kLog2e);
    ApplyMaskRow(args.mask, i0 + r, t0, keys, kLog2e, row);
  }
}

// The phases of RunOnlineSoftmax, the fp32 core's (attention-inl.h) with this file's products.
// As there, each phase derives its block's row count and tile's key count rather than taking
// them: GCC estimates a callee's branch probabilities before inlining it, and only so does it
// bound the phases' loops as it did in one body. The rows' state arrays are passed by reference,
// their size also bounding the row loops.
template <class Engine>
HWY_INLINE size_t Bf16BlockRows(size_t i0, size_t q_end) {
  return HWY_MIN(Engine::kRows, q_end - i0);
}
template <class Engine>
using Bf16RowFloats = float[Engine::kRows];
template <class Engine>
using Bf16RowFlags = bool[Engine::kRows];

// The block's Q rows in bf16 scaled to base 2, and every row's starting state.
template <class Engine>
HWY_INLINE void StartBf16Block(const AttentionHeadArgs& args, size_t dk, const Bf16DotBlock& b,
                               size_t i0, size_t q_end, Bf16RowFloats<Engine>& row_max,
                               Bf16RowFlags<Engine>& row_bad) {
  const size_t rows = Bf16BlockRows<Engine>(i0, q_end);
  for (size_t r = 0; r < rows; ++r) {
    RoundRowToBf16(args.q + (i0 + r) * args.ldq, dk, hwy::RoundUpTo(dk, 16), args.scale * kLog2e,
                   reinterpret_cast<uint16_t*>(b.q + r * b.ldq));
    StartSoftmaxRow(args, b.acc + r * b.ldacc, b.ldacc, b.lane_sums + r * kBf16DotValueAlign,
                    kBf16DotValueAlign, row_max[r], row_bad[r]);
  }
}

// The tile of keys from t0 on (at most lk_block) for the block's rows: scores, each row's online
// softmax step with its probabilities rounded to bf16, then O += P V; nothing for a tile no row
// sees.
template <class Engine>
HWY_INLINE void Bf16SoftmaxTile(const AttentionHeadArgs& args, size_t dk, const Bf16DotBlock& b,
                                size_t i0, size_t q_end, size_t t0, size_t lk_block,
                                Bf16RowFloats<Engine>& row_max, Bf16RowFlags<Engine>& row_bad) {
  const size_t rows = Bf16BlockRows<Engine>(i0, q_end);
  const size_t keys = HWY_MIN(kAttentionKeyTile, lk_block - t0);
  float tile_max[Engine::kRows];
  if (TileMasked(args.mask, i0, rows, t0, keys)) return;
  ScoreTileBf16<Engine>(args, b, i0, rows, t0, keys);
  for (size_t r = 0; r < rows; ++r) {
    tile_max[r] = RowMaxF32(b.scores + r * kAttentionKeyTile, keys);
  }
  for (size_t r = 0; r < rows; ++r) {
    float* HWY_RESTRICT p = b.scores + r * kAttentionKeyTile;
    SoftmaxTileRow(p, keys, tile_max[r], b.lane_sums + r * kBf16DotValueAlign, b.acc + r * b.ldacc,
                   dk, row_max[r], row_bad[r]);
    // Zeros to a whole AMX step of 32 keys.
    RoundRowToBf16(p, keys, hwy::RoundUpTo(keys, 32), 1.0f, b.p + r * kAttentionKeyTile);
  }
  Engine::AccumulateValues(args, b, rows, t0, keys);
}

// The block's rows of the head's output: O / l into the head's columns.
template <class Engine>
HWY_INLINE void FinishBf16Block(const AttentionHeadArgs& args, size_t dk, const Bf16DotBlock& b,
                                size_t i0, size_t q_end, Bf16RowFloats<Engine>& row_sum,
                                Bf16RowFlags<Engine>& row_bad) {
  const size_t rows = Bf16BlockRows<Engine>(i0, q_end);
  for (size_t r = 0; r < rows; ++r) {
    FinishSoftmaxRow(b.lane_sums + r * kBf16DotValueAlign, b.acc + r * b.ldacc, dk,
                     args.out + (i0 + r) * args.ldo, row_sum[r], row_bad[r]);
  }
}

// need_weights: the fp32 core's second pass, on this kernel's scores.
template <class Engine>
HWY_INLINE void StoreBf16Weights(const AttentionHeadArgs& args, const Bf16DotBlock& b, size_t i0,
                                 size_t q_end, size_t lk_block,
                                 const Bf16RowFloats<Engine>& row_max,
                                 const Bf16RowFloats<Engine>& row_sum,
                                 const Bf16RowFlags<Engine>& row_bad) {
  const size_t rows = Bf16BlockRows<Engine>(i0, q_end);
  for (size_t t0 = 0; t0 < args.lk; t0 += kAttentionKeyTile) {
    const size_t keys = HWY_MIN(kAttentionKeyTile, args.lk - t0);
    const size_t visible = t0 < lk_block ? HWY_MIN(keys, lk_block - t0) : 0;
    const bool computed = visible > 0 && !TileMasked(args.mask, i0, rows, t0, visible);
    if (computed) ScoreTileBf16<Engine>(args, b, i0, rows, t0, visible);
    for (size_t r = 0; r < rows; ++r) {
      StoreWeightsRow(b.scores + r * kAttentionKeyTile, visible, computed, keys, row_max[r],
                      row_sum[r], row_bad[r], args.weights + (i0 + r) * args.ldw + t0);
    }
  }
}

// Query rows [q_begin, q_end) of one head, a block of Engine::kRows rows at a time: its Q rows
// and states, the tiles of keys any of its rows sees, its output rows, and the weights if asked.
template <class Engine>
HWY_INLINE void RunOnlineSoftmax(const AttentionHeadArgs& args, size_t q_begin, size_t q_end,
                                 float* HWY_RESTRICT scratch) {
  const size_t dk = args.dk;
  const Bf16DotBlock b(scratch, dk, Engine::kRows);
  Bf16RowFloats<Engine> row_max;
  Bf16RowFloats<Engine> row_sum;
  Bf16RowFlags<Engine> row_bad;
  for (size_t i0 = q_begin; i0 < q_end; i0 += Engine::kRows) {
    const size_t rows = Bf16BlockRows<Engine>(i0, q_end);
    const size_t lk_block = args.mask.VisibleEnd(i0 + rows - 1, args.lk);
    const size_t t_begin = args.mask.VisibleBegin(i0) / kAttentionKeyTile * kAttentionKeyTile;
    StartBf16Block<Engine>(args, dk, b, i0, q_end, row_max, row_bad);
    for (size_t t0 = t_begin; t0 < lk_block; t0 += kAttentionKeyTile) {
      Bf16SoftmaxTile<Engine>(args, dk, b, i0, q_end, t0, lk_block, row_max, row_bad);
    }
    FinishBf16Block<Engine>(args, dk, b, i0, q_end, row_sum, row_bad);
    if (args.weights != nullptr) {
      StoreBf16Weights<Engine>(args, b, i0, q_end, lk_block, row_max, row_sum, row_bad);
    }
  }
}

HWY_NOINLINE void RunBf16DotAttention(const AttentionHeadArgs& args, size_t q_begin, size_t q_end,
                                      float* HWY_RESTRICT scratch) {
  RunOnlineSoftmax<VdpEngine>(args, q_begin, q_end, scratch);
}

// Not inlined: its caller lacks the avx512bf16 attribute.
HWY_NOINLINE const AttentionKernel* Bf16DotAttentionKernel() {
  static const AttentionKernel kKernel = {"bf16kv_bf16dot_6x4v",  KvType::kBf16,
                                          &Bf16DotKeysBytes,      &Bf16DotValuesBytes,
                                          &PackBf16DotKeysValues, &Bf16DotAttentionScratch,
                                          &RunBf16DotAttention};
  return &kKernel;
}

#if EDGEATTN_ATTENTION_BF16AMX
// dk a multiple of 32 on tiles (held only inside the call, so that a thread carries no tile
// state between calls), any other dk with vdpbf16ps on the same layout.
HWY_NOINLINE void RunBf16AmxAttention(const AttentionHeadArgs& args, size_t q_begin, size_t q_end,
                                      float* HWY_RESTRICT scratch) {
  if (args.dk % 32 != 0) return RunOnlineSoftmax<VdpEngine>(args, q_begin, q_end, scratch);
  AmxEngine::Configure();
  RunOnlineSoftmax<AmxEngine>(args, q_begin, q_end, scratch);
  _tile_release();
}

HWY_NOINLINE const AttentionKernel* Bf16AmxAttentionKernel() {
  static const AttentionKernel kKernel = {"bf16kv_bf16amx_16x64", KvType::kBf16,
                                          &Bf16DotKeysBytes,      &Bf16DotValuesBytes,
                                          &PackBf16DotKeysValues, &Bf16AmxAttentionScratch,
                                          &RunBf16AmxAttention};
  return &kKernel;
}
#endif  // EDGEATTN_ATTENTION_BF16AMX

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_POP_ATTRIBUTES
#endif  // EDGEATTN_ATTENTION_BF16DOT

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

inline std::vector<const AttentionKernel*> ListBf16DotAttentionKernels() {
#if EDGEATTN_ATTENTION_BF16DOT
  if (CpuHasAvx512Bf16()) return {Bf16DotAttentionKernel()};
#endif
  return {};
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_ATTENTION_BF16DOT
#undef EDGEATTN_ATTENTION_BF16AMX
#endif  // EDGEATTN_SIMD_ATTENTION_BF16DOT_INL_H_
