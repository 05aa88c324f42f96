// qd8_qc8w_neonmlal_2x4v (NEON targets: every AArch64 CPU, for those without the Armv8.2 dot
// product: Cortex-A53, A57, A72 and A73, e.g. the Raspberry Pi 3 and 4). smull multiplies 8
// signed bytes into int16, smlal adds a second group's products to them, and sadalp adds adjacent
// int16 pairs into int32: 6 arithmetic instructions per 32 products (and 2 weight loads per 2
// rows), where the portable kernel widens every weight byte to int16 and multiplies 4 lanes at a
// time. Exact while two products fit int16: the
// quantized activations stay within [-127, 127] (QuantizeRowsI8; a non-finite block may hold
// -128, and its row is NaN on every kernel), so two products of weights in [-128, 127] sum to at
// most 2 x 127 x 128 = 32512. Per 4-feature weight vector and row, two int32 accumulators (one
// for its first two features, one for the other two) hold each feature's k-value pairs {0, 1}
// and {2, 3} in adjacent lanes; addp folds them at the end of a block. Tiles of 2 rows x 4
// vectors (16 features) of a panel slice (PanelI8Tiles): 16 accumulators, 4 activation vectors,
// 2 weight vectors and the int16 products in flight in the inner loop; the float sums over
// blocks are updated in the tile's buffer once per block. Defines
// EDGEATTN_I8_NEON_MLAL (whether this target has the kernel) for the kernel list (gemm_i8-inl.h,
// which undefines it).

#if defined(EDGEATTN_SIMD_GEMM_I8_NEONMLAL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_I8_NEONMLAL_INL_H_
#undef EDGEATTN_SIMD_GEMM_I8_NEONMLAL_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_I8_NEONMLAL_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "simd/gemm_i8.h"
#include "simd/gemm_i8_panel-inl.h"
#include "simd/highway_compat.h"
#include "simd/quantize.h"

#define EDGEATTN_I8_NEON_MLAL EDGEATTN_TARGET_IS_NEON
#if EDGEATTN_I8_NEON_MLAL
#include <arm_neon.h>

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// g++ keeps the accumulator arrays in registers only when the loops over them are unrolled
// before its scalar replacement.
#define EDGEATTN_I8_MLAL_UNROLL _Pragma("GCC unroll 8")

// A block's int32 accumulators: lo[r][v] for features 4v, 4v + 1 of the slice, hi[r][v] for
// 4v + 2, 4v + 3, each feature's k-value pairs {0, 1} and {2, 3} in adjacent lanes.
template <size_t kRows>
struct MlalTileAccumulators {
  int32x4_t lo[kRows][4];
  int32x4_t hi[kRows][4];
};

// Row r's activation word of group g in every 32-bit lane. The empty asm hides the broadcast
// from clang, which would otherwise load 8 bytes and multiply the weights' upper halves after an
// ext each, rather than smull2 / smlal2 on the whole vector.
HWY_INLINE int8x16_t ActivationWordNeon(const int8_t* HWY_RESTRICT row, size_t g) {
  int8x16_t x = vreinterpretq_s8_u32(vdupq_n_u32(LoadWord(row + 4 * g)));
  asm("" : "+w"(x));
  return x;
}

// Where the 2-row tile wants an instruction order: an empty volatile asm, across which g++'s
// scheduler moves nothing, so that it neither hoists all 8 weight loads of a group pair (an
// accumulator then spills) nor puts a load next to its first use (in-order cores stall). The
// 1-row tile (a decode step's) has registers to spare and goes without: on the in-order A53 the
// barriers would serialize each vector's smull, smlal and sadalp.
template <size_t kRows>
HWY_INLINE void MlalOrder() {
  if (kRows > 1) asm volatile("");
}

// Groups g and, when kPair, g + 1 of all rows: each 16-byte weight vector (4 features x 4
// k-values) times the rows' activation words, two groups' products summed in int16, then into
// the int32 accumulators. Each next weight vector is loaded while the rows multiply this one.
template <size_t kRows, bool kPair>
HWY_INLINE void MlalGroups(MlalTileAccumulators<kRows>& t, const int8_t* HWY_RESTRICT wg,
                           const int8_t* const (&rows)[kRows], size_t g) {
  int8x16_t x0[kRows], x1[kRows];
  EDGEATTN_I8_MLAL_UNROLL for (size_t r = 0; r < kRows; ++r) {
    x0[r] = ActivationWordNeon(rows[r], g);
    if (kPair) x1[r] = ActivationWordNeon(rows[r], g + 1);
  }
  int8x16_t w0 = vld1q_s8(wg);
  int8x16_t w1 = kPair ? vld1q_s8(wg + kGemmI8GroupBytes) : w0;
  EDGEATTN_I8_MLAL_UNROLL for (size_t v = 0; v < 4; ++v) {
    int16x8_t lo[kRows], hi[kRows];
    EDGEATTN_I8_MLAL_UNROLL for (size_t r = 0; r < kRows; ++r) {
      lo[r] = vmull_s8(vget_low_s8(w0), vget_low_s8(x0[r]));
      hi[r] = vmull_high_s8(w0, x0[r]);
    }
    if (v < 3) w0 = vld1q_s8(wg + 16 * (v + 1));
    MlalOrder<kRows>();
    if (kPair) {
      EDGEATTN_I8_MLAL_UNROLL for (size_t r = 0; r < kRows; ++r) {
        lo[r] = vmlal_s8(lo[r], vget_low_s8(w1), vget_low_s8(x1[r]));
        hi[r] = vmlal_high_s8(hi[r], w1, x1[r]);
      }
      if (v < 3) w1 = vld1q_s8(wg + kGemmI8GroupBytes + 16 * (v + 1));
      MlalOrder<kRows>();
    }
    EDGEATTN_I8_MLAL_UNROLL for (size_t r = 0; r < kRows; ++r) {
      t.lo[r][v] = vpadalq_s16(t.lo[r][v], lo[r]);
      t.hi[r][v] = vpadalq_s16(t.hi[r][v], hi[r]);
    }
  }
}

// kRows (<= 2) rows x 16 features of a panel slice: sums[r * 16 + j] = sum over blocks of
// x_scale[row][b] * (block b's int32 dot product), in block order, each step one fused
// multiply-add (as the NEON dot-product kernel).
template <size_t kRows>
HWY_NOINLINE void MlalTileNeon(const int8_t* weights, const QuantizedRowsView& a, size_t row0,
                               const I8Layout& L, float* HWY_RESTRICT sums) {
  static_assert(kRows >= 1 && kRows <= 2, "2 rows' accumulators fill half the register file");
  const int8_t* rows[kRows];
  EDGEATTN_I8_MLAL_UNROLL for (size_t r = 0; r < kRows; ++r) {
    rows[r] = a.q + (row0 + r) * L.ldq;
    EDGEATTN_I8_MLAL_UNROLL for (size_t v = 0; v < 4; ++v) {
      vst1q_f32(sums + r * 16 + 4 * v, vdupq_n_f32(0.0f));
    }
  }
  for (size_t b = 0; b < L.blocks; ++b) {
    MlalTileAccumulators<kRows> t;
    EDGEATTN_I8_MLAL_UNROLL for (size_t r = 0; r < kRows; ++r) {
      EDGEATTN_I8_MLAL_UNROLL for (size_t v = 0; v < 4; ++v) {
        t.lo[r][v] = vdupq_n_s32(0);
        t.hi[r][v] = vdupq_n_s32(0);
      }
    }
    const size_t g_end = HWY_MIN(L.groups, (b + 1) * L.group_per_block);
    size_t g = b * L.group_per_block;
    for (; g + 2 <= g_end; g += 2) {
      MlalGroups<kRows, true>(t, weights + g * kGemmI8GroupBytes, rows, g);
    }
    if (g < g_end) MlalGroups<kRows, false>(t, weights + g * kGemmI8GroupBytes, rows, g);
    EDGEATTN_I8_MLAL_UNROLL for (size_t r = 0; r < kRows; ++r) {
      const float scale = a.scales[(row0 + r) * L.blocks + b];
      EDGEATTN_I8_MLAL_UNROLL for (size_t v = 0; v < 4; ++v) {
        const float32x4_t block = vcvtq_f32_s32(vpaddq_s32(t.lo[r][v], t.hi[r][v]));
        float* out = sums + r * 16 + 4 * v;
        vst1q_f32(out, vfmaq_n_f32(vld1q_f32(out), block, scale));
      }
    }
  }
}

#undef EDGEATTN_I8_MLAL_UNROLL

// The NEON mlal tiles over panel p.
HWY_NOINLINE void PanelNeonMlal(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
                                const GemmI8WeightsView& w, size_t p, float* HWY_RESTRICT c,
                                size_t ldc) {
  const I8Layout L = MakeI8Layout(w);
  PanelI8Tiles<2>(hn::Full128<float>(), L, row_begin, row_end, w, p, c, ldc,
                  [&](auto rows, const int8_t* weights, size_t row, float* sums)
                      HWY_ATTR { MlalTileNeon<decltype(rows)::value>(weights, a, row, L, sums); });
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_I8_NEON_MLAL

#endif  // EDGEATTN_SIMD_GEMM_I8_NEONMLAL_INL_H_
