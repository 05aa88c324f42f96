// qd8_qc8w_neondot_3x4v (NEON targets, when the CPU has the Armv8.2 dot product): sdot by
// element, signed by signed, on tiles of up to 3 rows x 4 vectors driven by PanelI8Tiles
// (gemm_i8_panel-inl.h), the float sums over blocks held in registers. Defines
// EDGEATTN_I8_NEON_DOT (whether this target has the kernel) for the kernel list (gemm_i8-inl.h,
// which undefines it).

#if defined(EDGEATTN_SIMD_GEMM_I8_NEONDOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_NEONDOT_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_NEONDOT_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_NEONDOT_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "simd/gemm_i8.h"
#include "simd/gemm_i8_panel-inl.h"
#include "simd/highway_compat.h"
#include "simd/quantize.h"

// The NEON dot product: where CpuHasNeonDotProduct can tell (Linux and Android, or a whole build
// for +dotprod).
#if EDGEATTN_TARGET_IS_NEON && \
    (defined(__linux__) || defined(__ARM_FEATURE_DOTPROD))
#include <arm_neon.h>
#include "simd/cpu_features.h"
#define EDGEATTN_I8_NEON_DOT 1
#else
#define EDGEATTN_I8_NEON_DOT 0
#endif

#if EDGEATTN_I8_NEON_DOT
// clang applies only the outermost target attribute, so there the dot product goes onto the
// whole file's attribute (the kernel still runs only where the CPU reports it). g++ takes it for
// the kernel's tile functions alone (below).
#if HWY_COMPILER_CLANG && defined(HWY_TARGET_STR)
#define EDGEATTN_I8_NEON_FILE_ATTRIBUTES HWY_TARGET_STR ",dotprod"
HWY_PUSH_ATTRIBUTES(EDGEATTN_I8_NEON_FILE_ATTRIBUTES)
#else
HWY_BEFORE_NAMESPACE();
#endif
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Armv8.2 dot product (sdot), which Highway 1.0.3's NEON target neither enables nor detects:
// compiled for +dotprod here and called only when the kernel reports it (HWCAP_ASIMDDP). clang 14
// accepts no "arch=" string with extensions here, g++'s assembler needs armv8.2-a for sdot.
#ifdef EDGEATTN_I8_NEON_FILE_ATTRIBUTES
#elif HWY_COMPILER_CLANG
HWY_PUSH_ATTRIBUTES("crypto,dotprod")
#else
HWY_PUSH_ATTRIBUTES("arch=armv8.2-a+crypto+dotprod")
#endif

// acc += the products of each 4 weight bytes of w (per 32-bit lane) with the 4 activation bytes
// in 32-bit lane kLane of x: sdot by element, so that one 16-byte load of x serves four groups
// of 4 k. Older clangs (14 here) declare the dot-product intrinsics only when the whole build
// targets the dot product (their arm_neon.h then defines vdotq_laneq_s32); there it is the
// instruction itself.
template <int kLane>
HWY_INLINE int32x4_t DotLaneNeon(int32x4_t acc, int8x16_t w, int8x16_t x) {
#if HWY_COMPILER_GCC_ACTUAL || defined(vdotq_laneq_s32)
  return vdotq_laneq_s32(acc, w, x, kLane);
#else
  asm("sdot %0.4s, %1.16b, %2.4b[%3]" : "+w"(acc) : "w"(w), "w"(x), "i"(kLane));
  return acc;
#endif
}

// Where the NEON tile wants an instruction order, an empty volatile asm: g++'s scheduler moves
// nothing across it, so it neither hoists loads into more registers than there are nor puts a
// load next to its first use, where in-order cores (A55, A510) would stall.
#define EDGEATTN_I8_ORDER() asm volatile("")

// The registers of a block's dot products: kRows x 4 int32 accumulators, kRows activation
// vectors (16 bytes: four groups), and two weight vectors (w0, w1) loaded one vector ahead of
// use. With the tile's kRows x 4 float sums over blocks, 31 of the 32 NEON registers at 3 rows.
template <size_t kRows>
struct DotTileRegsNeon {
  int32x4_t acc[kRows][4];
  int8x16_t x[kRows];
  int8x16_t w0, w1;
};

// One group of 4 k (lane kLane of x): the four weight vectors in turn for all rows, each
// loaded while the rows multiply the one before. On entry w0 holds vector 0 of the group at wg.
template <size_t kRows, int kLane>
HWY_INLINE void DotGroupNeon(DotTileRegsNeon<kRows>& t, const int8_t* HWY_RESTRICT wg) {
  t.w1 = vld1q_s8(wg + 16);
  EDGEATTN_I8_ORDER();
  for (size_t r = 0; r < kRows; ++r) t.acc[r][0] = DotLaneNeon<kLane>(t.acc[r][0], t.w0, t.x[r]);
  EDGEATTN_I8_ORDER();
  t.w0 = vld1q_s8(wg + 32);
  EDGEATTN_I8_ORDER();
  for (size_t r = 0; r < kRows; ++r) t.acc[r][1] = DotLaneNeon<kLane>(t.acc[r][1], t.w1, t.x[r]);
  EDGEATTN_I8_ORDER();
  t.w1 = vld1q_s8(wg + 48);
  EDGEATTN_I8_ORDER();
  for (size_t r = 0; r < kRows; ++r) t.acc[r][2] = DotLaneNeon<kLane>(t.acc[r][2], t.w0, t.x[r]);
  EDGEATTN_I8_ORDER();
  // Vector 0 of the next group of the chunk.
  if (kLane != 3) t.w0 = vld1q_s8(wg + kGemmI8GroupBytes);
  EDGEATTN_I8_ORDER();
  for (size_t r = 0; r < kRows; ++r) t.acc[r][3] = DotLaneNeon<kLane>(t.acc[r][3], t.w1, t.x[r]);
  EDGEATTN_I8_ORDER();
}

// Four groups (16 k) from group g: the first weight vector, then one 16-byte activation load
// per row (which covers that load's latency), then the groups.
template <size_t kRows>
HWY_INLINE void DotChunkNeon(DotTileRegsNeon<kRows>& t, const int8_t* HWY_RESTRICT wg,
                             const int8_t* const (&rows)[kRows], size_t g) {
  t.w0 = vld1q_s8(wg);
  for (size_t r = 0; r < kRows; ++r) t.x[r] = vld1q_s8(rows[r] + 4 * g);
  EDGEATTN_I8_ORDER();
  DotGroupNeon<kRows, 0>(t, wg);
  DotGroupNeon<kRows, 1>(t, wg + kGemmI8GroupBytes);
  DotGroupNeon<kRows, 2>(t, wg + 2 * kGemmI8GroupBytes);
  DotGroupNeon<kRows, 3>(t, wg + 3 * kGemmI8GroupBytes);
}

// A block's int32 dot products start at kDotBiasBits, the bits of the float 1.5 * 2^23: while
// |sum| < 2^22 the bits of bias + sum are those of the float 1.5 * 2^23 + sum, so one
// subtraction gives the exact float, where a conversion (scvtf) costs two micro-ops on the one
// pipe of A76-class cores that runs it. Blocks of at most kMaxBiasedGroups groups (4 products of
// at most 128 * 128 each) stay below 2^22; longer blocks convert.
constexpr int32_t kDotBiasBits = 0x4B400000;
constexpr float kDotBias = 12582912.0f;
constexpr size_t kMaxBiasedGroups = ((size_t{1} << 22) - 1) / (4 * 128 * 128);

// The groups [g, g_end) of one block, whole chunks of four and then single groups.
template <size_t kRows>
HWY_INLINE void DotBlockNeon(DotTileRegsNeon<kRows>& t, const int8_t* HWY_RESTRICT weights,
                             const int8_t* const (&rows)[kRows], size_t g, size_t g_end) {
  for (; g + 4 <= g_end; g += 4) {
    DotChunkNeon<kRows>(t, weights + g * kGemmI8GroupBytes, rows, g);
  }
  // Blocks that are not whole chunks (block % 16 != 0, or the last block).
  for (; HWY_UNLIKELY(g < g_end); ++g) {
    for (size_t r = 0; r < kRows; ++r) {
      t.x[r] = vreinterpretq_s8_u32(vdupq_n_u32(LoadWord(rows[r] + 4 * g)));
    }
    t.w0 = vld1q_s8(weights + g * kGemmI8GroupBytes);
    DotGroupNeon<kRows, 3>(t, weights + g * kGemmI8GroupBytes);
  }
}

// g++ keeps an array of vectors in registers only when the loops over it are unrolled before its
// scalar replacement; otherwise the array lives on the stack and each update is also stored.
#define EDGEATTN_I8_UNROLL _Pragma("GCC unroll 8")

template <size_t kRows, bool kBiased>
HWY_INLINE void StartBlockNeon(DotTileRegsNeon<kRows>& t) {
  EDGEATTN_I8_UNROLL for (size_t r = 0; r < kRows; ++r) {
    EDGEATTN_I8_UNROLL for (size_t v = 0; v < 4; ++v) {
      t.acc[r][v] = vdupq_n_s32(kBiased ? kDotBiasBits : 0);
    }
  }
}

// The exact float of a block's int32 sum (see kDotBiasBits).
template <bool kBiased>
HWY_INLINE float32x4_t BlockSumNeon(int32x4_t acc) {
  if (kBiased) return vsubq_f32(vreinterpretq_f32_s32(acc), vdupq_n_f32(kDotBias));
  return vcvtq_f32_s32(acc);
}

// kRows (<= 3) rows x 16 features (4 vectors of 4) of a panel slice: sums[r * 16 + j] = sum
// over blocks of x_scale[row][b] * (block b's int32 dot product), in block order, each step one
// fused multiply-add (as the other paths and the scalar reference); kBiased for blocks of at
// most kMaxBiasedGroups groups. Per block, each accumulator takes 16 sdot, then a subtraction,
// a multiply-add and a reset. The float sums stay in registers: on out-of-order cores the vector
// pipes are the limit, which the block epilogue shares with the sdot, and storing the sums every
// block costs a vector micro-op per register on A76-class cores; in-order cores (A55) are
// limited by the sdot and the 128-bit loads, which they do not pair, and 4 rows with the sums
// in L1 (fewer weight loads per sdot, but the sums' loads and stores) model no faster there
// (tools/arm_model.py: A55 69% of peak, against 71%).
template <size_t kRows, bool kBiased>
HWY_NOINLINE void DotTileNeon(const int8_t* weights, const QuantizedRowsView& a, size_t row0,
                              const I8Layout& L, float* HWY_RESTRICT sums) {
  static_assert(kRows >= 1 && kRows <= 3, "3 rows and their sums fill the register file");
  DotTileRegsNeon<kRows> t;
  float32x4_t sum[kRows][4];
  const int8_t* rows[kRows];
  EDGEATTN_I8_UNROLL for (size_t r = 0; r < kRows; ++r) {
    rows[r] = a.q + (row0 + r) * L.ldq;
    EDGEATTN_I8_UNROLL for (size_t v = 0; v < 4; ++v) sum[r][v] = vdupq_n_f32(0.0f);
  }
  for (size_t b = 0; b < L.blocks; ++b) {
    StartBlockNeon<kRows, kBiased>(t);
    DotBlockNeon<kRows>(t, weights, rows, b * L.group_per_block,
                        HWY_MIN(L.groups, (b + 1) * L.group_per_block));
    EDGEATTN_I8_UNROLL for (size_t r = 0; r < kRows; ++r) {
      const float scale = a.scales[(row0 + r) * L.blocks + b];
      EDGEATTN_I8_UNROLL for (size_t v = 0; v < 4; ++v) {
        sum[r][v] = vfmaq_n_f32(sum[r][v], BlockSumNeon<kBiased>(t.acc[r][v]), scale);
      }
    }
  }
  EDGEATTN_I8_UNROLL for (size_t r = 0; r < kRows; ++r) {
    EDGEATTN_I8_UNROLL for (size_t v = 0; v < 4; ++v) {
      vst1q_f32(sums + r * 16 + 4 * v, sum[r][v]);
    }
  }
}

#undef EDGEATTN_I8_UNROLL
#undef EDGEATTN_I8_ORDER
#ifndef EDGEATTN_I8_NEON_FILE_ATTRIBUTES
HWY_POP_ATTRIBUTES
#endif


// The NEON dot-product tiles over panel p.
HWY_NOINLINE void PanelNeonDot(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                               const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                               size_t ldc) {
  const I8Layout L = MakeI8Layout(w);
  const bool biased = L.group_per_block <= kMaxBiasedGroups;
  PanelI8Tiles<3>(hn::Full128<float>(), L, row_begin, row_end, w, p, c, ldc,
                  [&](auto rows, const int8_t* weights, size_t row, float* sums) HWY_ATTR {
                    constexpr size_t kRows = decltype(rows)::value;
                    if (biased) return DotTileNeon<kRows, true>(weights, a, row, L, sums);
                    DotTileNeon<kRows, false>(weights, a, row, L, sums);
                  });
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_I8_NEON_FILE_ATTRIBUTES
#endif  // EDGEATTN_I8_NEON_DOT

#endif  // EDGEATTN_SIMD_GEMM_I8_NEONDOT_INL_H_
