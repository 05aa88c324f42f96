// Per-target int8 projection kernels, one per dot-product instruction, each a descriptor
// (projection_kernel.h) listed by ListI8Kernels when its target may run it (highway_compat.h):
// - qd8_qc8w_vnni_4x4v (AVX512-VNNI targets): vpdpbusd multiplies unsigned by signed bytes, so
//   it reads activations quantized offset by +128 (ActivationType::kQdu8) and each block's
//   accumulator starts at -128 * sum(weights), which its layout stores after the panels.
//   Highway 1.0.3's AVX3_DL target string lacks avx512vnni: this file adds it to the kernel's
//   own functions.
// - qd8_qc8w_svedot_4x4v (SVE targets): svdot, signed by signed.
// - qd8_qc8w_neondot_3x4v (NEON targets, when the CPU has the Armv8.2 dot product): sdot by
//   element, signed by signed.
// - qd8_qc8w_i16_1x1v (every target): bytes promoted to int16, then ReorderWidenMulAccumulate
//   (pmaddwd on x86: exact int16 x int16 -> int32 pair sums).
// All read one panel layout (64 features x 4 k-values = 256 bytes per group of 4 k) and sum each
// block's products exactly in int32, then scale them into float in the same order, so every
// kernel gives the same bits. The dot-product kernels run tiles of up to 4 rows x 4 vectors
// (NEON: 3 rows): each group's weight vectors are loaded once for all rows of the tile, the int32
// accumulators stay in registers, and the float sums over blocks go to an L1 buffer once per
// block (NEON: they stay in registers).

#if defined(EDGEATTN_SIMD_GEMM_I8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>
#include <vector>

#include "hwy/highway.h"
#include "simd/gemm_i8.h"
#include "simd/highway_compat.h"
#include "simd/partial_vector-inl.h"
#include "simd/projection_kernel.h"
#include "simd/quantize.h"

#if EDGEATTN_TARGET_HAS_AVX512_VNNI
#include <immintrin.h>
#define EDGEATTN_I8_VNNI 1
#else
#define EDGEATTN_I8_VNNI 0
#endif
#define EDGEATTN_I8_SVE EDGEATTN_TARGET_IS_SVE

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

// clang applies only the outermost target attribute, so the instructions a kernel adds to its
// target go onto the whole file's attribute there: on the VNNI targets AVX512-VNNI (every CPU of
// those targets has it; Highway 1.0.3's AVX3_DL string lacks it) with g++ too, and under clang
// the NEON targets' dot product (the kernel still runs only where the CPU reports it). g++
// takes the dot product for the NEON kernel's functions alone (below).
#if EDGEATTN_I8_VNNI
#define EDGEATTN_I8_FILE_ATTRIBUTES HWY_TARGET_STR ",avx512vnni"
#elif EDGEATTN_I8_NEON_DOT && HWY_COMPILER_CLANG && defined(HWY_TARGET_STR)
#define EDGEATTN_I8_FILE_ATTRIBUTES HWY_TARGET_STR ",dotprod"
#endif
#ifdef EDGEATTN_I8_FILE_ATTRIBUTES
HWY_PUSH_ATTRIBUTES(EDGEATTN_I8_FILE_ATTRIBUTES)
#else
HWY_BEFORE_NAMESPACE();
#endif
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct I8Layout {
  size_t ldq;     // bytes per quantized activation row
  size_t groups;  // groups of 4 k-values
  size_t blocks;
  size_t group_per_block;
};

HWY_INLINE I8Layout MakeI8Layout(const GemmI8WeightsView& w) {
  const size_t ldq = QuantizedRowStride(w.k);
  return {ldq, ldq / 4, QuantBlockCount(w.k, w.block), w.block / 4};
}

HWY_INLINE uint32_t LoadWord(const int8_t* p) {
  uint32_t word;
  memcpy(&word, p, 4);
  return word;
}

// c[col, col + N) = f * scale + bias, storing at most `cols` values.
template <class DF, class VF>
HWY_INLINE void StoreDequantized(DF df, VF f, const GemmI8WeightsView& w, size_t col, size_t cols,
                                 float* HWY_RESTRICT c) {
  const auto bias = w.bias != nullptr ? hn::LoadU(df, w.bias + col) : hn::Zero(df);
  StorePartial(df, hn::MulAdd(f, hn::LoadU(df, w.scales + col), bias), c, cols);
}

#if EDGEATTN_I8_VNNI

// An empty asm that takes the accumulator in a vector register and gives it back: g++ 12 otherwise
// gives each loop iteration's accumulators new registers and copies them back at the loop end
// (two moves per vpdpbusd, and spills at 4 rows). Without GCC-style asm, the compiler's choice.
HWY_INLINE void PinToRegister(__m512i& v) {
#if HWY_COMPILER_GCC
  asm("" : "+v"(v));
#else
  (void)v;
#endif
}

// The 4 activation bytes of row `row`, group g, in every 32-bit lane: a broadcast from memory,
// which is a load alone. Broadcasting a general register takes a vector port (port 5 on Intel),
// one of the two that run vpdpbusd: one such uop per 4 vpdpbusd cost a fifth of the peak.
HWY_INLINE __m512i BroadcastActivationWord(const int8_t* word) {
  return _mm512_broadcastd_epi32(_mm_loadu_si32(word));
}

// kRows rows x 64 features. The 4 x kRows int32 block accumulators and the four weight vectors
// of a group stay in registers; the float sums over blocks live in an L1 buffer, touched once per
// block. Holding those in registers too leaves g++ no room for the weights: it re-loads each as
// a memory operand of every vpdpbusd (kRows x the loads). Four rows is the most g++ 12 keeps in
// registers: at 5 or 6 it spills.
template <size_t kRows>
HWY_NOINLINE void PanelRowsVnni(const QuantizedRowsView& a, size_t row0,
                                const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                                size_t ldc) {
  const hn::Full512<int32_t> di;
  const hn::Full512<float> df;
  const size_t N = hn::Lanes(df);
  const I8Layout L = MakeI8Layout(w);
  const int8_t* panel = w.panels + p * L.groups * kGemmI8GroupBytes;
  HWY_ALIGN float sums_f[kRows * kGemmI8PanelWidth];
  for (size_t b = 0; b < L.blocks; ++b) {
    const int32_t* starts = w.block_starts + (p * L.blocks + b) * kGemmI8PanelWidth;
    __m512i acc[kRows][4];
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t v = 0; v < 4; ++v) acc[r][v] = hn::LoadU(di, starts + N * v).raw;
    }
    const size_t g_end = HWY_MIN(L.groups, (b + 1) * L.group_per_block);
    for (size_t g = b * L.group_per_block; g < g_end; ++g) {
      const int8_t* bg = panel + g * kGemmI8GroupBytes;
      const __m512i b0 = _mm512_loadu_si512(bg);
      const __m512i b1 = _mm512_loadu_si512(bg + 64);
      const __m512i b2 = _mm512_loadu_si512(bg + 128);
      const __m512i b3 = _mm512_loadu_si512(bg + 192);
      for (size_t r = 0; r < kRows; ++r) {
        const __m512i x = BroadcastActivationWord(a.q + (row0 + r) * L.ldq + 4 * g);
        acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], x, b0);
        acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], x, b1);
        acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], x, b2);
        acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], x, b3);
      }
      for (size_t r = 0; r < kRows; ++r) {
        for (size_t v = 0; v < 4; ++v) PinToRegister(acc[r][v]);
      }
    }
    for (size_t r = 0; r < kRows; ++r) {
      const auto scale = hn::Set(df, a.scales[(row0 + r) * L.blocks + b]);
      for (size_t v = 0; v < 4; ++v) {
        float* f = sums_f + r * kGemmI8PanelWidth + N * v;
        const auto block = hn::ConvertTo(df, hn::Vec512<int32_t>{acc[r][v]});
        hn::Store(b == 0 ? hn::Mul(block, scale) : hn::MulAdd(block, scale, hn::Load(df, f)), df,
                  f);
      }
    }
  }
  const size_t col0 = p * kGemmI8PanelWidth;
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t v = 0; v < 4; ++v) {
      const size_t col = col0 + N * v;
      if (col >= w.n) break;
      StoreDequantized(df, hn::Load(df, sums_f + r * kGemmI8PanelWidth + N * v), w, col,
                       w.n - col, c + (row0 + r) * ldc + col);
    }
  }
}

HWY_NOINLINE void PanelVnni(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                            const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                            size_t ldc) {
  size_t row = row_begin;
  for (; row + 4 <= row_end; row += 4) PanelRowsVnni<4>(a, row, w, p, c, ldc);
  if (row_end - row == 3) PanelRowsVnni<3>(a, row, w, p, c, ldc);
  if (row_end - row == 2) PanelRowsVnni<2>(a, row, w, p, c, ldc);
  if (row_end - row == 1) PanelRowsVnni<1>(a, row, w, p, c, ldc);
}

#endif  // EDGEATTN_I8_VNNI

#if EDGEATTN_I8_NEON_DOT
// Armv8.2 dot product (sdot), which Highway 1.0.3's NEON target neither enables nor detects:
// compiled for +dotprod here and called only when the kernel reports it (HWCAP_ASIMDDP). clang 14
// accepts no "arch=" string with extensions here, g++'s assembler needs armv8.2-a for sdot.
#ifdef EDGEATTN_I8_FILE_ATTRIBUTES
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
#ifndef EDGEATTN_I8_FILE_ATTRIBUTES
HWY_POP_ATTRIBUTES
#endif

#endif

#if EDGEATTN_I8_SVE
// kRows rows x 4 vectors of N features, the scheme of DotTileNeon with svdot: sums[r * 4N + j]
// = sum over blocks of x_scale[row][b] * (block b's int32 dot product). Sizeless SVE vectors
// cannot form arrays, hence one named accumulator per row and vector.
template <size_t kRows>
HWY_NOINLINE void DotTileSve(const int8_t* weights, const QuantizedRowsView& a, size_t row0,
                             const I8Layout& L, float* HWY_RESTRICT sums) {
  const hn::CappedTag<int32_t, 16> d32;
  const hn::Rebind<float, decltype(d32)> df;
  const hn::Repartition<int8_t, decltype(d32)> d8;
  const size_t N = hn::Lanes(d32);
  for (size_t i = 0; i < kRows * 4 * N; ++i) sums[i] = 0.0f;
  for (size_t b = 0; b < L.blocks; ++b) {
    auto acc00 = hn::Zero(d32), acc01 = acc00, acc02 = acc00, acc03 = acc00;
    auto acc10 = acc00, acc11 = acc00, acc12 = acc00, acc13 = acc00;
    auto acc20 = acc00, acc21 = acc00, acc22 = acc00, acc23 = acc00;
    auto acc30 = acc00, acc31 = acc00, acc32 = acc00, acc33 = acc00;
    const size_t g_end = HWY_MIN(L.groups, (b + 1) * L.group_per_block);
    for (size_t g = b * L.group_per_block; g < g_end; ++g) {
      const int8_t* wg = weights + g * kGemmI8GroupBytes;
      const auto w0 = hn::LoadU(d8, wg);
      const auto w1 = hn::LoadU(d8, wg + 4 * N);
      const auto w2 = hn::LoadU(d8, wg + 8 * N);
      const auto w3 = hn::LoadU(d8, wg + 12 * N);
#define EDGEATTN_SVE_DOT_ROW(r)                                                          \
  if constexpr (kRows > r) {                                                             \
    const auto x = hn::BitCast(                                                          \
        d8, hn::Set(d32, static_cast<int32_t>(LoadWord(a.q + (row0 + r) * L.ldq + 4 * g)))); \
    acc##r##0 = svdot_s32(acc##r##0, w0, x);                                             \
    acc##r##1 = svdot_s32(acc##r##1, w1, x);                                             \
    acc##r##2 = svdot_s32(acc##r##2, w2, x);                                             \
    acc##r##3 = svdot_s32(acc##r##3, w3, x);                                             \
  }
      EDGEATTN_SVE_DOT_ROW(0)
      EDGEATTN_SVE_DOT_ROW(1)
      EDGEATTN_SVE_DOT_ROW(2)
      EDGEATTN_SVE_DOT_ROW(3)
#undef EDGEATTN_SVE_DOT_ROW
    }
#define EDGEATTN_SVE_SUM_ROW(r)                                                               \
  if constexpr (kRows > r) {                                                                  \
    const auto scale = hn::Set(df, a.scales[(row0 + r) * L.blocks + b]);                      \
    float* f = sums + r * 4 * N;                                                              \
    hn::StoreU(hn::MulAdd(hn::ConvertTo(df, acc##r##0), scale, hn::LoadU(df, f)), df, f);     \
    hn::StoreU(hn::MulAdd(hn::ConvertTo(df, acc##r##1), scale, hn::LoadU(df, f + N)), df,     \
               f + N);                                                                        \
    hn::StoreU(hn::MulAdd(hn::ConvertTo(df, acc##r##2), scale, hn::LoadU(df, f + 2 * N)), df, \
               f + 2 * N);                                                                    \
    hn::StoreU(hn::MulAdd(hn::ConvertTo(df, acc##r##3), scale, hn::LoadU(df, f + 3 * N)), df, \
               f + 3 * N);                                                                    \
  }
    EDGEATTN_SVE_SUM_ROW(0)
    EDGEATTN_SVE_SUM_ROW(1)
    EDGEATTN_SVE_SUM_ROW(2)
    EDGEATTN_SVE_SUM_ROW(3)
#undef EDGEATTN_SVE_SUM_ROW
  }
}

#endif

#if EDGEATTN_I8_NEON_DOT || EDGEATTN_I8_SVE
// tile(std::integral_constant<size_t, rows>(), ...) for rows in [1, kRows].
template <size_t kRows, class Tile>
HWY_INLINE void CallTileRows(size_t rows, const Tile& tile, const int8_t* weights, size_t row,
                             float* sums) {
  if (rows == kRows) return tile(std::integral_constant<size_t, kRows>(), weights, row, sums);
  if constexpr (kRows > 1) CallTileRows<kRows - 1>(rows, tile, weights, row, sums);
}

// Runs a dot-product tile kernel over panel p: slices of 4 vectors (4N features: 4N x 4 weight
// bytes of each 256-byte group), each slice over tiles of up to kMaxRows rows, so that a slice's
// weights (4N x k bytes) stay in L1 across the row tiles. tile(rows, weights, row, sums) is
// called with rows as a std::integral_constant and leaves the tile's float sums (rows x 4N) in
// sums; they are stored here with the weight scales and the bias.
template <size_t kMaxRows, class DF, class Tile>
HWY_INLINE void PanelI8Tiles(DF df, const I8Layout& L, size_t row_begin, size_t row_end,
                             const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                             size_t ldc, const Tile& tile) {
  const size_t N = hn::Lanes(df);
  const int8_t* panel = w.panels + p * L.groups * kGemmI8GroupBytes;
  const size_t col0 = p * kGemmI8PanelWidth;
  HWY_ALIGN float sums[kMaxRows * kGemmI8PanelWidth];
  for (size_t slice = 0; slice * 4 * N < kGemmI8PanelWidth && col0 + slice * 4 * N < w.n;
       ++slice) {
    const int8_t* weights = panel + 16 * N * slice;
    for (size_t row = row_begin; row < row_end; row += kMaxRows) {
      const size_t rows = HWY_MIN(kMaxRows, row_end - row);
      CallTileRows<kMaxRows>(rows, tile, weights, row, sums);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t v = 0; v < 4; ++v) {
          const size_t col = col0 + slice * 4 * N + v * N;
          if (col >= w.n) break;
          StoreDequantized(df, hn::LoadU(df, sums + r * 4 * N + v * N), w, col, w.n - col,
                           c + (row + r) * ldc + col);
        }
      }
    }
  }
}
#endif

#if EDGEATTN_I8_NEON_DOT
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
#endif

#if EDGEATTN_I8_SVE
// The SVE dot-product tiles over panel p.
HWY_NOINLINE void PanelSveDot(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                              const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                              size_t ldc) {
  const I8Layout L = MakeI8Layout(w);
  PanelI8Tiles<4>(hn::CappedTag<float, 16>(), L, row_begin, row_end, w, p, c, ldc,
                  [&](auto rows, const int8_t* weights, size_t row, float* sums) HWY_ATTR {
                    DotTileSve<decltype(rows)::value>(weights, a, row, L, sums);
                  });
}
#endif

// The portable kernel over panel p: one row x one vector of features at a time, with four
// int16-product accumulators per block, folded at its end.
HWY_NOINLINE void PanelI16(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                           const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                           size_t ldc) {
  const I8Layout L = MakeI8Layout(w);
  const hn::CappedTag<int32_t, 16> d32;
  const hn::Rebind<float, decltype(d32)> df;
  const hn::Repartition<int8_t, decltype(d32)> d8;  // 4 bytes per int32 lane
  const size_t N = hn::Lanes(d32);
  const int8_t* panel = w.panels + p * L.groups * kGemmI8GroupBytes;
  const size_t col0 = p * kGemmI8PanelWidth;
  for (size_t row = row_begin; row < row_end; ++row) {
    const int8_t* xq = a.q + row * L.ldq;
    const float* xs = a.scales + row * L.blocks;
    for (size_t v = 0; v * N < kGemmI8PanelWidth && col0 + v * N < w.n; ++v) {
      auto f = hn::Zero(df);
      for (size_t b = 0; b < L.blocks; ++b) {
        const size_t g_end = HWY_MIN(L.groups, (b + 1) * L.group_per_block);
        const hn::Half<decltype(d8)> dh8;
        const hn::Repartition<int16_t, decltype(d32)> d16;
        auto lo0 = hn::Zero(d32), lo1 = hn::Zero(d32), hi0 = hn::Zero(d32), hi1 = hn::Zero(d32);
        for (size_t g = b * L.group_per_block; g < g_end; ++g) {
          const auto bytes = hn::LoadU(d8, panel + g * kGemmI8GroupBytes + v * 4 * N);
          const auto x8 = hn::BitCast(d8, hn::Set(d32, static_cast<int32_t>(LoadWord(xq + 4 * g))));
          // Both halves of x8 repeat the same 4 bytes, so one promoted half serves both.
          const auto x16 = hn::PromoteTo(d16, hn::LowerHalf(dh8, x8));
          lo0 = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::LowerHalf(dh8, bytes)),
                                              x16, lo0, lo1);
          hi0 = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::UpperHalf(dh8, bytes)),
                                              x16, hi0, hi1);
        }
        // Lane i of each sum holds feature i / 2: k-values 0-1 (even i) or 2-3 (odd i).
        const auto lo = hn::RearrangeToOddPlusEven(lo0, lo1);
        const auto hi = hn::RearrangeToOddPlusEven(hi0, hi1);
        const auto acc = hn::Add(hn::ConcatEven(d32, hi, lo), hn::ConcatOdd(d32, hi, lo));
        f = hn::MulAdd(hn::ConvertTo(df, acc), hn::Set(df, xs[b]), f);
      }
      const size_t col = col0 + v * N;
      StoreDequantized(df, f, w, col, w.n - col, c + row * ldc + col);
    }
  }
}

// Adds each outlier's float product with the dequantized weights of panel p:
// c[row][n] += value * (w_int8[n][channel] * w_scale[n]). The weight byte sits in byte
// channel % 4 of feature n's 32-bit lane in the group channel / 4, so a shift pair extracts it
// with its sign for a whole vector of features.
HWY_INLINE void AddOutliers(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                            const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                            size_t ldc) {
  const hn::CappedTag<int32_t, 16> d32;
  const hn::Rebind<float, decltype(d32)> df;
  const size_t N = hn::Lanes(d32);
  const size_t groups = QuantizedRowStride(w.k) / 4;
  const size_t col0 = p * kGemmI8PanelWidth;
  const size_t cols = HWY_MIN(kGemmI8PanelWidth, w.n - col0);
  for (size_t row = row_begin; row < row_end; ++row) {
    for (uint32_t i = 0; i < a.outlier_count[row]; ++i) {
      const uint32_t channel = a.outlier_channel[row * kMaxOutliersPerRow + i];
      const auto value = hn::Set(df, a.outlier_value[row * kMaxOutliersPerRow + i]);
      const int shift = static_cast<int>(24 - 8 * (channel % 4));
      const int8_t* group = w.panels + (p * groups + channel / 4) * kGemmI8PanelWidth * 4;
      float* out = c + row * ldc + col0;
      for (size_t j = 0; j < cols; j += N) {
        const auto lanes = hn::LoadU(d32, reinterpret_cast<const int32_t*>(group + 4 * j));
        const auto weight = hn::ShiftRightSame(hn::ShiftLeftSame(lanes, shift), 24);
        const auto dequantized =
            hn::Mul(hn::ConvertTo(df, weight), hn::LoadU(df, w.scales + col0 + j));
        const size_t count = HWY_MIN(N, cols - j);
        StorePartial(df, hn::MulAdd(value, dequantized, LoadPartial(df, out + j, count)),
                     out + j, count);
      }
    }
  }
}

// A kernel's work over one panel (PanelVnni, PanelNeonDot, PanelSveDot, PanelI16).
using PanelI8Fn = void(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                       const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c, size_t ldc);

// A kernel's run function (ProjectionKernel::run): kPanel over panels [panel_begin, panel_end)
// of the layout kView reads (gemm_i8.h: the VNNI kernel's panels carry block starts, the others'
// do not), then the outliers' products.
template <PanelI8Fn* kPanel, GemmI8WeightsView (*kView)(const PackedProjectionView&)>
HWY_NOINLINE void RunI8(const ProjectionInput& a, size_t row_begin, size_t row_end,
                        const PackedProjectionView& packed, size_t panel_begin, size_t panel_end,
                        float* HWY_RESTRICT c, size_t ldc) {
  const GemmI8WeightsView w = kView(packed);
  for (size_t p = panel_begin; p < panel_end; ++p) {
    kPanel(a.qd8, row_begin, row_end, w, p, c, ldc);
    if (a.qd8.outlier_count != nullptr) AddOutliers(a.qd8, row_begin, row_end, w, p, c, ldc);
  }
}

// The int8 kernels compiled for this target, best first. Exported: plain inline, as a one-target
// build (EDGEATTN_TARGETS=phone) calls it directly from code without this target's attributes,
// where always_inline cannot apply.
inline std::vector<const ProjectionKernel*> ListI8Kernels() {
  std::vector<const ProjectionKernel*> kernels;
#if EDGEATTN_I8_VNNI
  static const ProjectionKernel kVnni = {"qd8_qc8w_vnni_4x4v",
                                         ActivationType::kQdu8,
                                         WeightType::kQc8,
                                         &RunsWhereItsTargetRuns,
                                         kGemmI8PanelWidth,
                                         &Qc8PanelsWithStartsBytes,
                                         &PackQc8PanelsWithStarts,
                                         &UnpackQc8Panels,
                                         &RunI8<&PanelVnni, &Qc8PanelsWithStartsView>};
  kernels.push_back(&kVnni);
#endif
#if EDGEATTN_I8_SVE
  static const ProjectionKernel kSveDot = {
      "qd8_qc8w_svedot_4x4v",  ActivationType::kQd8, WeightType::kQc8,
      &RunsWhereItsTargetRuns, kGemmI8PanelWidth,    &Qc8PanelsBytes,
      &PackQc8Panels,          &UnpackQc8Panels,     &RunI8<&PanelSveDot, &Qc8PanelsView>};
  kernels.push_back(&kSveDot);
#endif
#if EDGEATTN_I8_NEON_DOT
  static const ProjectionKernel kNeonDot = {"qd8_qc8w_neondot_3x4v",
                                            ActivationType::kQd8,
                                            WeightType::kQc8,
                                            &CpuHasNeonDotProduct,
                                            kGemmI8PanelWidth,
                                            &Qc8PanelsBytes,
                                            &PackQc8Panels,
                                            &UnpackQc8Panels,
                                            &RunI8<&PanelNeonDot, &Qc8PanelsView>};
  kernels.push_back(&kNeonDot);
#endif
  static const ProjectionKernel kI16 = {
      "qd8_qc8w_i16_1x1v",     ActivationType::kQd8, WeightType::kQc8,
      &RunsWhereItsTargetRuns, kGemmI8PanelWidth,    &Qc8PanelsBytes,
      &PackQc8Panels,          &UnpackQc8Panels,     &RunI8<&PanelI16, &Qc8PanelsView>};
  kernels.push_back(&kI16);
  return kernels;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_I8_VNNI
#undef EDGEATTN_I8_SVE
#undef EDGEATTN_I8_NEON_DOT
#undef EDGEATTN_I8_FILE_ATTRIBUTES

#endif  // EDGEATTN_SIMD_GEMM_I8_INL_H_
