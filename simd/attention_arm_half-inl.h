// Per-target ARM 16-bit attention cores (attention_arm_half.h): the compact-KV kernels' online
// softmax (attention_kv-inl.h) with Q K^T and P V in fp16 FMLA or bf16 BFDOT on NEON registers.

#if defined(EDGEATTN_SIMD_ATTENTION_ARM_HALF_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_ATTENTION_ARM_HALF_INL_H_
#undef EDGEATTN_SIMD_ATTENTION_ARM_HALF_INL_H_
#else
#define EDGEATTN_SIMD_ATTENTION_ARM_HALF_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "hwy/highway.h"
#include "simd/attention.h"
#include "simd/attention_arm_half.h"
#include "simd/attention_kv-inl.h"
#include "simd/highway_compat.h"
#include "simd/kv_half_rows-inl.h"

// NEON registers inside the NEON and SVE targets (every SVE core has them). g++ on Linux
// compiles the instructions per function (target attributes below) and checks the CPU with
// getauxval; other compilers only where the whole build targets the feature.
#if (EDGEATTN_TARGET_IS_NEON || EDGEATTN_TARGET_IS_SVE) && HWY_COMPILER_GCC_ACTUAL && \
    defined(__linux__)
#define EDGEATTN_ARM_HALF_ATTRIBUTES 1
#define EDGEATTN_ARM_F16 1
#define EDGEATTN_ARM_BF16 1
#elif EDGEATTN_TARGET_IS_NEON || EDGEATTN_TARGET_IS_SVE
#define EDGEATTN_ARM_HALF_ATTRIBUTES 0
#ifdef __ARM_FEATURE_FP16_VECTOR_ARITHMETIC
#define EDGEATTN_ARM_F16 1
#else
#define EDGEATTN_ARM_F16 0
#endif
#ifdef __ARM_FEATURE_BF16_VECTOR_ARITHMETIC
#define EDGEATTN_ARM_BF16 1
#else
#define EDGEATTN_ARM_BF16 0
#endif
#else
#define EDGEATTN_ARM_HALF_ATTRIBUTES 0
#define EDGEATTN_ARM_F16 0
#define EDGEATTN_ARM_BF16 0
#endif
#if EDGEATTN_ARM_F16 || EDGEATTN_ARM_BF16
#include <arm_neon.h>

namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
// A register tile's fp32 sums: R rows x 8 lanes, loaded (or zero) and stored. Outside the
// target's attributes (plain NEON of the build's baseline), so that both instruction sets'
// functions below may inline them.
template <size_t R>
inline void LoadSums(bool accumulate, const float* out, size_t ldo, float32x4_t (&f)[R][2]) {
  for (size_t r = 0; r < R; ++r) {
    for (size_t i = 0; i < 2; ++i) {
      f[r][i] = accumulate ? vld1q_f32(out + r * ldo + 4 * i) : vdupq_n_f32(0.0f);
    }
  }
}

template <size_t R>
inline void StoreSums(const float32x4_t (&f)[R][2], float* out, size_t ldo) {
  for (size_t r = 0; r < R; ++r) {
    for (size_t i = 0; i < 2; ++i) vst1q_f32(out + r * ldo + 4 * i, f[r][i]);
  }
}
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
#endif

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

#if EDGEATTN_ARM_F16 || EDGEATTN_ARM_BF16
// Query rows per register tile (a block's 6: 12 fp32 sums, 6 fp16 sums, 6 query vectors and a
// key or value vector fit in 32 registers, where 4 rows x 16 lanes spilled sums to the stack),
// and keys (Q K^T) or value channels (P V) per tile: one 8-lane 16-bit vector.
inline constexpr size_t kArmHalfRows = 6;
inline constexpr size_t kArmHalfCols = 8;
// fp16 sums run over this many channels (Q K^T) or keys (P V) before they are added to fp32.
inline constexpr size_t kF16Chunk = 8;
#endif

#if EDGEATTN_ARM_F16
#if EDGEATTN_ARM_HALF_ATTRIBUTES
HWY_PUSH_ATTRIBUTES("arch=armv8.2-a+crypto+fp16")
#endif

HWY_INLINE float16x8_t LoadF16(const uint16_t* p) { return vreinterpretq_f16_u16(vld1q_u16(p)); }

// f[r][0..1] += the fp16 sums h[r], widened exactly; h restarts from zero.
template <size_t R>
HWY_INLINE void FlushF16(float16x8_t (&h)[R], float32x4_t (&f)[R][2]) {
  for (size_t r = 0; r < R; ++r) {
    f[r][0] = vaddq_f32(f[r][0], vcvt_f32_f16(vget_low_f16(h[r])));
    f[r][1] = vaddq_f32(f[r][1], vcvt_high_f32_f16(h[r]));
    h[r] = vdupq_n_f16(0);
  }
}

// h + b * lane L of a, one fmla by element. g++ 12 broadcasts lanes other than 0 with a dup
// first (two instructions where one does): inline assembly there ("x": v0-v15, which the
// by-element form of fp16 needs).
template <int L>
HWY_INLINE float16x8_t FmaLaneF16(float16x8_t h, float16x8_t b, float16x8_t a) {
#if HWY_COMPILER_GCC_ACTUAL
  __asm__("fmla %0.8h, %1.8h, %2.h[%3]" : "+w"(h) : "w"(b), "x"(a), "i"(L));
  return h;
#else
  return vfmaq_laneq_f16(h, b, a, L);
#endif
}

// One step of a chunk: h[r] += b (8 lanes at b0) times lane L of a[r].
template <size_t R, int L>
HWY_INLINE void StepF16(const uint16_t* b0, const float16x8_t (&a)[R], float16x8_t (&h)[R]) {
  const float16x8_t b = LoadF16(b0);
  for (size_t r = 0; r < R; ++r) h[r] = FmaLaneF16<L>(h[r], b, a[r]);
}

// Q K^T and P V in fp16 fused multiply-adds, kF16Chunk steps per fp16 sum.
struct F16Fma {
  using Rounding = F16Rows;  // kv_half_rows-inl.h

  // out[r][0, 8) (stride ldo) = (accumulate ? out[r] : 0) + sum over steps s < count of
  // a[r][s] * b[s * ldb, +8). a: R rows of fp16, stride lda, readable in whole chunks (zero
  // past count); b holds no rows past count.
  template <size_t R>
  static void Tile(const uint16_t* a, size_t lda, const uint16_t* b, size_t ldb, size_t count,
                   bool accumulate, float* out, size_t ldo) {
    float32x4_t f[R][2];
    LoadSums<R>(accumulate, out, ldo, f);
    float16x8_t h[R];
    for (size_t r = 0; r < R; ++r) h[r] = vdupq_n_f16(0);
    size_t s = 0;
    for (; s + kF16Chunk <= count; s += kF16Chunk) {
      float16x8_t as[R];
      for (size_t r = 0; r < R; ++r) as[r] = LoadF16(a + r * lda + s);
      const uint16_t* bs = b + s * ldb;
      StepF16<R, 0>(bs, as, h);
      StepF16<R, 1>(bs + ldb, as, h);
      StepF16<R, 2>(bs + 2 * ldb, as, h);
      StepF16<R, 3>(bs + 3 * ldb, as, h);
      StepF16<R, 4>(bs + 4 * ldb, as, h);
      StepF16<R, 5>(bs + 5 * ldb, as, h);
      StepF16<R, 6>(bs + 6 * ldb, as, h);
      StepF16<R, 7>(bs + 7 * ldb, as, h);
      FlushF16<R>(h, f);
    }
    if (s < count) {
      for (; s < count; ++s) {
        const float16x8_t bs = LoadF16(b + s * ldb);
        for (size_t r = 0; r < R; ++r) {
          float16_t x;
          memcpy(&x, a + r * lda + s, sizeof(x));
          h[r] = vfmaq_n_f16(h[r], bs, x);
        }
      }
      FlushF16<R>(h, f);
    }
    StoreSums<R>(f, out, ldo);
  }
};

#if EDGEATTN_ARM_HALF_ATTRIBUTES
HWY_POP_ATTRIBUTES
#endif
#endif  // EDGEATTN_ARM_F16

#if EDGEATTN_ARM_BF16
#if EDGEATTN_ARM_HALF_ATTRIBUTES
HWY_PUSH_ATTRIBUTES("arch=armv8.6-a+crypto+bf16")
#endif

HWY_INLINE bfloat16x8_t AsBf16(uint16x8_t v) { return vreinterpretq_bf16_u16(v); }

// The pair vectors of 8 lanes of rows b0 and b1 (zeros for a null b1): lanes 4i..4i+3 of both
// interleaved in x[i], as BFDOT reads pairs.
HWY_INLINE void InterleaveRows(const uint16_t* b0, const uint16_t* b1, uint16x8_t (&x)[2]) {
  const uint16x8_t v0 = vld1q_u16(b0);
  const uint16x8_t v1 = b1 ? vld1q_u16(b1) : vdupq_n_u16(0);
  x[0] = vzip1q_u16(v0, v1);
  x[1] = vzip2q_u16(v0, v1);
}

// f[r] += BFDOT of the pair vectors x with pair L of a[r].
template <size_t R, int L>
HWY_INLINE void StepBfdot(const uint16x8_t (&x)[2], const bfloat16x8_t (&a)[R],
                          float32x4_t (&f)[R][2]) {
  for (size_t r = 0; r < R; ++r) {
    f[r][0] = vbfdotq_laneq_f32(f[r][0], AsBf16(x[0]), a[r], L);
    f[r][1] = vbfdotq_laneq_f32(f[r][1], AsBf16(x[1]), a[r], L);
  }
}

// Q K^T and P V in BFDOT, steps in pairs.
struct Bfdot {
  using Rounding = Bf16Rows;

  // As F16Fma::Tile, a in bf16 readable in whole vectors of 8 (zero past count); an odd last
  // step pairs with zeros.
  template <size_t R>
  static void Tile(const uint16_t* a, size_t lda, const uint16_t* b, size_t ldb, size_t count,
                   bool accumulate, float* out, size_t ldo) {
    float32x4_t f[R][2];
    LoadSums<R>(accumulate, out, ldo, f);
    uint16x8_t x[2];
    for (size_t s = 0; s < count; s += 8) {
      bfloat16x8_t as[R];
      for (size_t r = 0; r < R; ++r) as[r] = AsBf16(vld1q_u16(a + r * lda + s));
      const uint16_t* bs = b + s * ldb;
      const size_t left = count - s;
      InterleaveRows(bs, left > 1 ? bs + ldb : nullptr, x);
      StepBfdot<R, 0>(x, as, f);
      if (left <= 2) break;
      InterleaveRows(bs + 2 * ldb, left > 3 ? bs + 3 * ldb : nullptr, x);
      StepBfdot<R, 1>(x, as, f);
      if (left <= 4) break;
      InterleaveRows(bs + 4 * ldb, left > 5 ? bs + 5 * ldb : nullptr, x);
      StepBfdot<R, 2>(x, as, f);
      if (left <= 6) break;
      InterleaveRows(bs + 6 * ldb, left > 7 ? bs + 7 * ldb : nullptr, x);
      StepBfdot<R, 3>(x, as, f);
    }
    StoreSums<R>(f, out, ldo);
  }
};

#if EDGEATTN_ARM_HALF_ATTRIBUTES
HWY_POP_ATTRIBUTES
#endif
#endif  // EDGEATTN_ARM_BF16

#if EDGEATTN_ARM_F16 || EDGEATTN_ARM_BF16
// What follows is outside the instruction sets' attributes and calls Dot::Tile, never forced
// inline: g++ inlines only into functions whose attributes include the callee's (SVE's do not).

// The block's 16-bit query rows (stride RoundUp(dk, 8), zero past dk) and probabilities (stride
// kAttentionKeyTile, zero to a multiple of 8): the part of the scratch past the compact-KV
// kernels' (ArmHalfAttentionScratch), whose last part is the accumulators.
struct HalfRows {
  uint16_t* q;
  size_t ldq;
  uint16_t* p;
};

inline HalfRows HalfRowsAfter(float* accumulators, size_t ldacc, size_t dk) {
  uint16_t* base = reinterpret_cast<uint16_t*>(accumulators + kAttentionMaxBlockRows * ldacc);
  const size_t ldq = hwy::RoundUpTo(dk, 8);
  return {base, ldq, base + kAttentionMaxBlockRows * ldq};
}

// rows x n fp32 values (stride ld) rounded by Rounding into 16-bit rows (stride ld16), zero
// from n to `used`.
template <class Rounding>
void RoundRows(const float* x, size_t ld, size_t rows, size_t n, size_t used, uint16_t* x16,
               size_t ld16) {
  for (size_t r = 0; r < rows; ++r) {
    RoundRowToHalf<Rounding>(x + r * ld, n, x16 + r * ld16);
    memset(x16 + r * ld16 + n, 0, (used - n) * sizeof(uint16_t));
  }
}

// Sums of R rows of a against b (Dot::Tile) for each row group of a block.
template <class Dot>
struct ArmHalfTile {
  const uint16_t* a;
  size_t lda;
  const uint16_t* b;
  size_t ldb, count;
  bool accumulate;
  float* out;
  size_t ldo;

  template <size_t R>
  void Run(size_t r0) const {
    Dot::template Tile<R>(a + r0 * lda, lda, b, ldb, count, accumulate, out + r0 * ldo, ldo);
  }
};

// Splits `rows` into groups of at most kArmHalfRows, as even as possible (8 = 4 + 4), and runs
// the tile on each.
template <class Dot>
void ForRowGroups(size_t rows, const ArmHalfTile<Dot>& tile) {
  const size_t groups = hwy::DivCeil(rows, kArmHalfRows);
  const size_t per = hwy::DivCeil(rows, groups);
  for (size_t r0 = 0; r0 < rows; r0 += per) {
    switch (HWY_MIN(per, rows - r0)) {
      case 1: tile.template Run<1>(r0); break;
      case 2: tile.template Run<2>(r0); break;
      case 3: tile.template Run<3>(r0); break;
      case 4: tile.template Run<4>(r0); break;
      case 5: tile.template Run<5>(r0); break;
      default: tile.template Run<6>(r0); break;
    }
  }
}

// The compact-KV kernels' Kv policy (attention_kv-inl.h) on the 16-bit layouts.
template <class Dot>
struct ArmHalfKv {
  static constexpr bool kQuantizesQuery = false;

  static void Scores(const AttentionHeadArgs& args, const QueryBlock& q, size_t rows, size_t t0,
                     size_t keys, float* HWY_RESTRICT scores) {
    // The accumulators follow the queries, the int8 copy and the scores (attention_kv-inl.h).
    float* acc =
        q.q + kAttentionMaxBlockRows * (q.ldq + q.ldq8 / sizeof(float) + kAttentionKeyTile);
    const HalfRows half = HalfRowsAfter(acc, q.ldq, args.dk);
    RoundRows<typename Dot::Rounding>(q.q, q.ldq, rows, args.dk, half.ldq, half.q, half.ldq);
    // Whole panels of 64 lanes: lanes past the last key are zero (never stored).
    for (size_t p0 = 0; p0 < keys; p0 += kGemmPanelWidth) {
      const uint16_t* panel = static_cast<const uint16_t*>(args.keys) + (t0 + p0) * args.dk;
      for (size_t j = 0; j < kGemmPanelWidth; j += kArmHalfCols) {
        ForRowGroups(rows, ArmHalfTile<Dot>{half.q, half.ldq, panel + j, kGemmPanelWidth, args.dk,
                                            false, scores + p0 + j, kAttentionKeyTile});
      }
    }
  }

  static void AccumulateValues(const AttentionHeadArgs& args, const float* HWY_RESTRICT p,
                               size_t rows, size_t t0, size_t keys, float* HWY_RESTRICT acc,
                               size_t ldacc) {
    const HalfRows half = HalfRowsAfter(acc, ldacc, args.dk);
    RoundRows<typename Dot::Rounding>(p, kAttentionKeyTile, rows, keys, hwy::RoundUpTo(keys, 8),
                                      half.p, kAttentionKeyTile);
    // Channel blocks of 8 read past a row's dk into the next row, and the last row's into the
    // values' zeroed tail (to a multiple of 16); those lanes land in the accumulators' padding.
    const uint16_t* values = static_cast<const uint16_t*>(args.values) + t0 * args.dk;
    for (size_t c = 0; c < args.dk; c += kArmHalfCols) {
      ForRowGroups(rows, ArmHalfTile<Dot>{half.p, kAttentionKeyTile, values + c, args.dk, keys,
                                          true, acc + c, ldacc});
    }
  }
};
#endif  // EDGEATTN_ARM_F16 || EDGEATTN_ARM_BF16

// Exported: plain inline, as a one-target build calls it directly (see attention-inl.h).
inline std::vector<const AttentionKernel*> ListArmHalfKernels() {
  std::vector<const AttentionKernel*> kernels;
#if EDGEATTN_ARM_F16
  static const AttentionKernel kF16 = {"f16kv_f16fma_6x8",       KvType::kF16,
                                       &HalfKeysBytes,            &HalfValuesBytes,
                                       &PackF16KeysValues,        &ArmHalfAttentionScratch,
                                       &RunCompactKvAttention<ArmHalfKv<F16Fma>>};
  if (CpuHasArmFp16Arithmetic()) kernels.push_back(&kF16);
#endif
#if EDGEATTN_ARM_BF16
  static const AttentionKernel kBf16 = {"bf16kv_bf16dot_6x8",      KvType::kBf16,
                                        &HalfKeysBytes,           &HalfValuesBytes,
                                        &PackBf16KeysValues,      &ArmHalfAttentionScratch,
                                        &RunCompactKvAttention<ArmHalfKv<Bfdot>>};
  if (CpuHasArmBf16()) kernels.push_back(&kBf16);
#endif
  return kernels;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_ARM_HALF_ATTRIBUTES
#undef EDGEATTN_ARM_F16
#undef EDGEATTN_ARM_BF16
#endif  // EDGEATTN_SIMD_ATTENTION_ARM_HALF_INL_H_
