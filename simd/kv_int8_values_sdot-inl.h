// P V of the Arm dot-product kernels (i8kv_i8dot_neondot, i8kv_i8mm_usmmla) on the int8 values'
// pair rows, in sdot rather than smlal: A76- to X4-class cores issue smlal on one vector pipe and
// sdot on two or four. Steps 1, 2 and 4 are kv_int8_values-inl.h's; step 3's exact int32 sums come
// out the same, so the kernel keeps the bits of the target's other int8 kernels.
//
// sdot multiplies 4 signed bytes by 4: a 32-bit lane of a pair row holds channels 2i and 2i + 1
// of the pair's two positions (v0, v1 of channel 2i, then of 2i + 1). A probability q (at most
// kI8ProbabilityMax = 2^14 - 1 in these builds) is 128 h + l with h and l in [0, 127], signed bytes
// both, and each pair's words (h0, h1, 0, 0) and (0, 0, h0, h1) pick the even and the odd channel
// of every lane, as (l0, l1, 0, 0) and (0, 0, l0, l1) do: four sdot per 16 bytes of values, each
// lane's sums then 128 sum_h + sum_l (exact: 256 keys x 127 x 127 x 128 < 2^31). A row's words
// are laid out once per tile, 4 pairs per 16-byte vector of each kind, so that sdot by element
// takes pair u from lane u % 4.

#if defined(EDGEATTN_SIMD_KV_INT8_VALUES_SDOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_KV_INT8_VALUES_SDOT_INL_H_
#undef EDGEATTN_SIMD_KV_INT8_VALUES_SDOT_INL_H_
#else
#define EDGEATTN_SIMD_KV_INT8_VALUES_SDOT_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "simd/attention_kv.h"
#include "simd/highway_compat.h"
#include "simd/kv_int8_values-inl.h"

// Where kv_int8_scores-inl.h's sdot kernel compiles (g++, per function: EDGEATTN_KV_SDOT_BUILD),
// and on the SVE targets for the kernel they run only where the dot product is (i8mm:
// attention_arm_i8mm-inl.h). NEON code in SVE targets too: it writes each channel's sums lane by
// lane, whatever the vector width.
#if EDGEATTN_KV_SDOT_BUILD && (EDGEATTN_TARGET_IS_NEON || EDGEATTN_TARGET_IS_SVE)
#include <arm_neon.h>
#define EDGEATTN_KV_SDOT_VALUES 1
#else
#define EDGEATTN_KV_SDOT_VALUES 0
#endif

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

#if EDGEATTN_KV_SDOT_VALUES
static_assert(kI8ProbabilityMax == 16383.0f, "two 7-bit halves per probability");

HWY_PUSH_ATTRIBUTES("arch=armv8.2-a+crypto+dotprod")
struct SdotPairValues {
  // A row's multipliers for 4 pairs: even and odd channel words of h, then of l.
  struct PairWords {
    int8x16_t even_h, odd_h, even_l, odd_l;
  };

  // Steps 3 and 4 for one row and kVecs 16-byte vectors (8 channels each) of the pair rows from
  // channel c0 on: out[c0, c0 + 8 kVecs) += the channels' sums times the row's step.
  template <size_t kVecs>
  static void RowChannels(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t pairs,
                          const int8_t* HWY_RESTRICT words, const I16Probabilities& p, size_t c0,
                          float* HWY_RESTRICT out) {
    int32x4_t even_h[kVecs], odd_h[kVecs], even_l[kVecs], odd_l[kVecs];
    for (size_t v = 0; v < kVecs; ++v) {
      even_h[v] = odd_h[v] = even_l[v] = odd_l[v] = vdupq_n_s32(0);
    }
    const size_t pair_bytes = I8ValuePairBytes(dk);
    // Groups of 4 pairs never cross a panel (32 pairs).
    for (size_t u0 = 0; u0 < pairs; u0 += 4) {
      const PairWords w = LoadWords(words + u0 / 4 * 64);
      const uint8_t* rows = panels + u0 / (kI8ValuePanel / 2) * I8ValuePanelBytes(dk) +
                            u0 % (kI8ValuePanel / 2) * pair_bytes + 2 * c0;
      const size_t n = HWY_MIN(size_t{4}, pairs - u0);
      AddPair<0, kVecs>(rows, w, even_h, odd_h, even_l, odd_l);
      if (n > 1) AddPair<1, kVecs>(rows + pair_bytes, w, even_h, odd_h, even_l, odd_l);
      if (n > 2) AddPair<2, kVecs>(rows + 2 * pair_bytes, w, even_h, odd_h, even_l, odd_l);
      if (n > 3) AddPair<3, kVecs>(rows + 3 * pair_bytes, w, even_h, odd_h, even_l, odd_l);
    }
    for (size_t v = 0; v < kVecs; ++v) {
      const int32x4_t even = vmlaq_n_s32(even_l[v], even_h[v], 128);
      const int32x4_t odd = vmlaq_n_s32(odd_l[v], odd_h[v], 128);
      AddSums(vzip1q_s32(even, odd), p, out + c0 + 8 * v);
      AddSums(vzip2q_s32(even, odd), p, out + c0 + 8 * v + 4);
    }
  }

  // Rows of acc += the tile's P V (AccumulateTileValuesI8's contract), a row at a time.
  static void AccumulateTile(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t keys,
                             const I16Probabilities* probabilities, size_t rows,
                             float* HWY_RESTRICT acc, size_t ldacc) {
    const size_t pairs = (keys + 1) / 2;
    const size_t vecs = I8ValuePairBytes(dk) / 16;  // even: RoundUp(dk, 16) channels
    HWY_ALIGN int8_t words[kAttentionKeyTile / 8 * 64];
    for (size_t r = 0; r < rows; ++r) {
      const I16Probabilities& p = probabilities[r];
      LayOutWords(p, pairs, words);
      size_t v = 0;
      for (; v + 4 <= vecs; v += 4) {
        RowChannels<4>(panels, dk, pairs, words, p, 8 * v, acc + r * ldacc);
      }
      if (v < vecs) {  // two vectors (vecs is even): 16 channels
        RowChannels<2>(panels, dk, pairs, words, p, 8 * v, acc + r * ldacc);
      }
    }
  }

 private:
  // out[0, 4) += float(sums) * step (* unscale): AddPairSums' arithmetic, one lane at a time as
  // there, so the same on any vector width (the SVE targets' kernels).
  static void AddSums(int32x4_t sums, const I16Probabilities& p, float* HWY_RESTRICT out) {
    const float32x4_t products = vcvtq_f32_s32(sums);
    const float32x4_t step = vdupq_n_f32(p.step);
    const float32x4_t prior = vld1q_f32(out);
    vst1q_f32(out, p.unscale == 1.0f
                       ? vfmaq_f32(prior, products, step)
                       : vfmaq_f32(prior, vmulq_f32(products, step), vdupq_n_f32(p.unscale)));
  }

  static PairWords LoadWords(const int8_t* HWY_RESTRICT w) {
    return {vld1q_s8(w), vld1q_s8(w + 16), vld1q_s8(w + 32), vld1q_s8(w + 48)};
  }

  template <int kLane, size_t kVecs>
  static HWY_INLINE void AddPair(const uint8_t* HWY_RESTRICT row, const PairWords& w,
                                 int32x4_t (&even_h)[kVecs], int32x4_t (&odd_h)[kVecs],
                                 int32x4_t (&even_l)[kVecs], int32x4_t (&odd_l)[kVecs]) {
    for (size_t v = 0; v < kVecs; ++v) {
      const int8x16_t values = vld1q_s8(reinterpret_cast<const int8_t*>(row) + 16 * v);
      even_h[v] = vdotq_laneq_s32(even_h[v], values, w.even_h, kLane);
      odd_h[v] = vdotq_laneq_s32(odd_h[v], values, w.odd_h, kLane);
      even_l[v] = vdotq_laneq_s32(even_l[v], values, w.even_l, kLane);
      odd_l[v] = vdotq_laneq_s32(odd_l[v], values, w.odd_l, kLane);
    }
  }

  // words[64 g, 64 g + 64): pairs 4g to 4g + 3's even_h, odd_h, even_l, odd_l vectors, for the
  // groups holding the tile's pairs.
  static void LayOutWords(const I16Probabilities& p, size_t pairs, int8_t* HWY_RESTRICT words) {
    const uint16x8_t zero = vdupq_n_u16(0);
    const int16x8_t low_bits = vdupq_n_s16(127);
    for (size_t u0 = 0; u0 < pairs; u0 += 8) {
      // 8 pairs: 16 probabilities; past RoundUp(keys + 1, 4) they are whatever the buffer held,
      // and so are the words of pairs past the tile's, which RowChannels never reads.
      const int16x8_t q0 = vld1q_s16(p.q + 2 * u0), q1 = vld1q_s16(p.q + 2 * u0 + 8);
      // Pair u's two bytes as one 16-bit lane u.
      const uint16x8_t h =
          vreinterpretq_u16_s8(vcombine_s8(vshrn_n_s16(q0, 7), vshrn_n_s16(q1, 7)));
      const uint16x8_t l = vreinterpretq_u16_s8(
          vcombine_s8(vmovn_s16(vandq_s16(q0, low_bits)), vmovn_s16(vandq_s16(q1, low_bits))));
      int8_t* HWY_RESTRICT out = words + u0 / 4 * 64;
      StoreWords(vzip1q_u16(h, zero), vzip1q_u16(zero, h), vzip1q_u16(l, zero), vzip1q_u16(zero, l),
                 out);
      StoreWords(vzip2q_u16(h, zero), vzip2q_u16(zero, h), vzip2q_u16(l, zero), vzip2q_u16(zero, l),
                 out + 64);
    }
  }

  static void StoreWords(uint16x8_t even_h, uint16x8_t odd_h, uint16x8_t even_l, uint16x8_t odd_l,
                         int8_t* HWY_RESTRICT out) {
    vst1q_s8(out, vreinterpretq_s8_u16(even_h));
    vst1q_s8(out + 16, vreinterpretq_s8_u16(odd_h));
    vst1q_s8(out + 32, vreinterpretq_s8_u16(even_l));
    vst1q_s8(out + 48, vreinterpretq_s8_u16(odd_l));
  }
};
HWY_POP_ATTRIBUTES

// The P V of a kernel listed only where the dot product is (the int8 matrix multiply's).
using PairValuesWithDot = SdotPairValues;
#else
using PairValuesWithDot = I16PairValues;
#endif  // EDGEATTN_KV_SDOT_VALUES

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_KV_SDOT_VALUES
#endif  // EDGEATTN_SIMD_KV_INT8_VALUES_SDOT_INL_H_
