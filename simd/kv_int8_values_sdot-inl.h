// P V of the Arm dot-product kernels (i8kv_i8dot_neondot, i8kv_i8mm_smmla) on the int8 values'
// pair rows, in sdot rather than smlal: A76- to X4-class cores issue smlal on one vector pipe and
// sdot on two or four. Steps 1, 2 and 4 are kv_int8_values-inl.h's; step 3's exact int32 sums come
// out the same, so the kernel keeps the bits of the target's other int8 kernels.
//
// sdot multiplies 4 signed bytes by 4 into a 32-bit lane. A 32-bit lane of a pair row holds
// channels 2i and 2i + 1 of the pair's two positions, so two consecutive pair rows are zipped by
// 16-bit lanes into quads: each 32-bit lane then holds one channel of 4 consecutive positions, and
// sdot by element with those positions' probabilities sums all four, in channel order. A
// probability q (at most kI8ProbabilityMax = 2^14 - 1 in these builds) is 128 h + l with h and l in
// [0, 127], signed bytes both: two sdot per quad vector (h, l) and two zips per pair of rows, where
// the pair rows taken as they are (words (h0, h1, 0, 0) and (0, 0, h0, h1) picking a lane's even
// and odd channel) took four sdot per row, each a half useful. Each lane's sums are then 128
// sum_h + sum_l (exact: 256 keys x 127 x 127 x 129 < 2^31). A row's h and l bytes are laid out
// once per tile, 16 positions per 16-byte vector of each, so that sdot by element takes quad m
// from lane m % 4.

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
  // Steps 3 and 4 for one row and kVecs 16-byte vectors (8 channels each) of the pair rows from
  // channel c0 on: out[c0, c0 + 8 kVecs) += the channels' sums times the row's step.
  template <size_t kVecs>
  static void RowChannels(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t pairs,
                          const int8_t* HWY_RESTRICT words, const I16Probabilities& p, size_t c0,
                          float* HWY_RESTRICT out) {
    Sums<kVecs> sums;
    for (size_t v = 0; v < kVecs; ++v) {
      sums.low_h[v] = sums.high_h[v] = sums.low_l[v] = sums.high_l[v] = vdupq_n_s32(0);
    }
    const size_t pair_bytes = I8ValuePairBytes(dk);
    // Groups of 8 pairs (one vector of words) never cross a panel (32 pairs): whole ones, then
    // the tile's last if it has fewer.
    const auto rows = [&](size_t u0) {
      return panels + u0 / (kI8ValuePanel / 2) * I8ValuePanelBytes(dk) +
             u0 % (kI8ValuePanel / 2) * pair_bytes + 2 * c0;
    };
    size_t u0 = 0;
    for (; u0 + 8 <= pairs; u0 += 8) {
      AddGroup<true>(rows(u0), pair_bytes, 8, words + u0 / 8 * 32, sums);
    }
    if (u0 < pairs) AddGroup<false>(rows(u0), pair_bytes, pairs - u0, words + u0 / 8 * 32, sums);
    for (size_t v = 0; v < kVecs; ++v) {
      AddSums(vmlaq_n_s32(sums.low_l[v], sums.low_h[v], 128), p, out + c0 + 8 * v);
      AddSums(vmlaq_n_s32(sums.high_l[v], sums.high_h[v], 128), p, out + c0 + 8 * v + 4);
    }
  }

  // Rows of acc += the tile's P V (AccumulateTileValuesI8's contract), a row at a time.
  static void AccumulateTile(const uint8_t* HWY_RESTRICT panels, size_t dk, size_t keys,
                             const I16Probabilities* probabilities, size_t rows,
                             float* HWY_RESTRICT acc, size_t ldacc) {
    const size_t pairs = (keys + 1) / 2;
    const size_t vecs = I8ValuePairBytes(dk) / 16;  // even: RoundUp(dk, 16) channels
    HWY_ALIGN int8_t words[2 * kAttentionKeyTile];
    for (size_t r = 0; r < rows; ++r) {
      const I16Probabilities& p = probabilities[r];
      LayOutWords(p, pairs, words);
      // 16 channels a pass: with 32, g++ 12 hoists a group's 32 value loads and spills sums.
      for (size_t v = 0; v < vecs; v += 2) {
        RowChannels<2>(panels, dk, pairs, words, p, 8 * v, acc + r * ldacc);
      }
    }
  }

 private:
  // Channels [8 v, 8 v + 4) and [8 v + 4, 8 v + 8) of the h and l products.
  template <size_t kVecs>
  struct Sums {
    int32x4_t low_h[kVecs], high_h[kVecs], low_l[kVecs], high_l[kVecs];
  };

  // The bytes RowChannels reads for a missing pair row (kVecs vectors of 16).
  alignas(16) static constexpr uint8_t kZeroRow[32] = {};

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

  // The group's n pairs from `rows` (kWhole: all 8, without the tail's choices), times their
  // words (h, then l). A quad's second pair row past the tile's last is read as zeros, not from
  // the panel, whose row there may hold no position yet (never written); its probabilities are
  // zeros too, so no result depends on it.
  template <bool kWhole, size_t kVecs>
  static HWY_INLINE void AddGroup(const uint8_t* HWY_RESTRICT rows, size_t pair_bytes, size_t n,
                                  const int8_t* HWY_RESTRICT words, Sums<kVecs>& sums) {
    const int8x16_t h = vld1q_s8(words), l = vld1q_s8(words + 16);
    const auto second = [&](size_t u) {
      return kWhole || u < n ? rows + u * pair_bytes : kZeroRow;
    };
    AddQuad<0>(rows, second(1), h, l, sums);
    if (kWhole || n > 2) AddQuad<1>(rows + 2 * pair_bytes, second(3), h, l, sums);
    if (kWhole || n > 4) AddQuad<2>(rows + 4 * pair_bytes, second(5), h, l, sums);
    if (kWhole || n > 6) AddQuad<3>(rows + 6 * pair_bytes, second(7), h, l, sums);
  }

  // Quad kLane of the group: pair rows `first` and `second` zipped into 4 positions per channel.
  template <int kLane, size_t kVecs>
  static HWY_INLINE void AddQuad(const uint8_t* HWY_RESTRICT first,
                                 const uint8_t* HWY_RESTRICT second, int8x16_t h, int8x16_t l,
                                 Sums<kVecs>& sums) {
    static_assert(16 * kVecs <= sizeof(kZeroRow), "a missing row's vectors");
    for (size_t v = 0; v < kVecs; ++v) {
      const int16x8_t a = vld1q_s16(reinterpret_cast<const int16_t*>(first + 16 * v));
      const int16x8_t b = vld1q_s16(reinterpret_cast<const int16_t*>(second + 16 * v));
      const int8x16_t low = vreinterpretq_s8_s16(vzip1q_s16(a, b));
      const int8x16_t high = vreinterpretq_s8_s16(vzip2q_s16(a, b));
      sums.low_h[v] = vdotq_laneq_s32(sums.low_h[v], low, h, kLane);
      sums.high_h[v] = vdotq_laneq_s32(sums.high_h[v], high, h, kLane);
      sums.low_l[v] = vdotq_laneq_s32(sums.low_l[v], low, l, kLane);
      sums.high_l[v] = vdotq_laneq_s32(sums.high_l[v], high, l, kLane);
    }
  }

  // words[32 g, 32 g + 32): positions 16 g to 16 g + 15's h bytes, then their l bytes, for the
  // groups holding the tile's pairs.
  static void LayOutWords(const I16Probabilities& p, size_t pairs, int8_t* HWY_RESTRICT words) {
    const int16x8_t low_bits = vdupq_n_s16(127);
    for (size_t u0 = 0; u0 < pairs; u0 += 8) {
      // 16 probabilities; the tile's pair rows meet only defined ones (q[keys] = 0: an odd
      // count's partner), the bytes past them meet a missing pair row's zeros, or no sdot.
      const int16x8_t q0 = vld1q_s16(p.q + 2 * u0), q1 = vld1q_s16(p.q + 2 * u0 + 8);
      vst1q_s8(words + u0 / 8 * 32, vcombine_s8(vshrn_n_s16(q0, 7), vshrn_n_s16(q1, 7)));
      vst1q_s8(words + u0 / 8 * 32 + 16,
               vcombine_s8(vmovn_s16(vandq_s16(q0, low_bits)), vmovn_s16(vandq_s16(q1, low_bits))));
    }
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
