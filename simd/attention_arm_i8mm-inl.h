// Per-target int8 KV attention core on smmla (attention_arm_i8mm.h): the compact-KV kernels'
// online softmax and int8 P V (attention_kv-inl.h) with Q K^T on NEON registers.

#if defined(EDGEATTN_SIMD_ATTENTION_ARM_I8MM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_ATTENTION_ARM_I8MM_INL_H_
#undef EDGEATTN_SIMD_ATTENTION_ARM_I8MM_INL_H_
#else
#define EDGEATTN_SIMD_ATTENTION_ARM_I8MM_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "hwy/highway.h"
#include "simd/attention.h"
#include "simd/attention_arm_i8mm.h"
#include "simd/attention_kv-inl.h"
#include "simd/cpu_features.h"
#include "simd/highway_compat.h"

// As the 16-bit ARM kernels (attention_arm_half-inl.h): g++ on Linux compiles the instruction
// per function and checks the CPU; other compilers only where the whole build targets it.
#if (EDGEATTN_TARGET_IS_NEON || EDGEATTN_TARGET_IS_SVE) && HWY_COMPILER_GCC_ACTUAL && \
    defined(__linux__)
#define EDGEATTN_ARM_I8MM_ATTRIBUTES 1
#define EDGEATTN_ARM_I8MM 1
#elif (EDGEATTN_TARGET_IS_NEON || EDGEATTN_TARGET_IS_SVE) && defined(__ARM_FEATURE_MATMUL_INT8)
#define EDGEATTN_ARM_I8MM_ATTRIBUTES 0
#define EDGEATTN_ARM_I8MM 1
#else
#define EDGEATTN_ARM_I8MM_ATTRIBUTES 0
#define EDGEATTN_ARM_I8MM 0
#endif
#if EDGEATTN_ARM_I8MM
#include <arm_neon.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

#if EDGEATTN_ARM_I8MM
// A block's query rows as smmla pairs them: the int8 row, its scale and its row of scores (null:
// an odd block's last row standing in as its partner).
struct I8mmRows {
  const int8_t* q[kAttentionMaxBlockRows];
  float scale[kAttentionMaxBlockRows];
  float* scores[kAttentionMaxBlockRows];
};

#if EDGEATTN_ARM_I8MM_ATTRIBUTES
HWY_PUSH_ATTRIBUTES("arch=armv8.6-a+crypto+i8mm")
#endif

// Scores of P row pairs (rows [first, first + 2P) of `rows`) against 16 keys at lane j of a
// panel (groups of [64 keys x 4 channels] of k, signed: kI8KeyOffset is 0 on ARM, then the 64
// keys' scales), the panel's first key at column `col` of the scores.
template <size_t P>
void SmmlaTile(const I8mmRows& rows, size_t first, const uint8_t* panel, size_t groups, size_t col,
               size_t j) {
  int32x4_t acc[P][8];  // [row pair][key pair]: (k0 q0, k0 q1, k1 q0, k1 q1)
  for (size_t p = 0; p < P; ++p) {
    for (size_t i = 0; i < 8; ++i) acc[p][i] = vdupq_n_s32(0);
  }
  const int8_t* keys = reinterpret_cast<const int8_t*>(panel) + j * 4;
  // Channel groups g and g + 1 (8 channels); an odd count's last pairs with the scales' bytes,
  // times query bytes that are zero past dk.
  for (size_t g = 0; g < groups; g += 2) {
    int8x16_t q[P];
    for (size_t p = 0; p < P; ++p) {
      q[p] = vcombine_s8(vld1_s8(rows.q[first + 2 * p] + 4 * g),
                         vld1_s8(rows.q[first + 2 * p + 1] + 4 * g));
    }
    for (size_t quad = 0; quad < 4; ++quad) {
      const int32x4_t g0 = vreinterpretq_s32_s8(vld1q_s8(keys + g * 256 + quad * 16));
      const int32x4_t g1 = vreinterpretq_s32_s8(vld1q_s8(keys + (g + 1) * 256 + quad * 16));
      const int8x16_t lo = vreinterpretq_s8_s32(vzip1q_s32(g0, g1));  // keys 0, 1 x 8 channels
      const int8x16_t hi = vreinterpretq_s8_s32(vzip2q_s32(g0, g1));  // keys 2, 3
      for (size_t p = 0; p < P; ++p) {
        acc[p][2 * quad] = vmmlaq_s32(acc[p][2 * quad], lo, q[p]);
        acc[p][2 * quad + 1] = vmmlaq_s32(acc[p][2 * quad + 1], hi, q[p]);
      }
    }
  }
  // float(dot) * key scale * query scale, in the portable kernel's order (StoreI8Scores).
  const float* scales = reinterpret_cast<const float*>(panel + groups * 256) + j;
  for (size_t p = 0; p < P; ++p) {
    for (size_t quad = 0; quad < 4; ++quad) {
      const float32x4_t key_scales = vld1q_f32(scales + 4 * quad);
      const int32x4_t dots[2] = {vuzp1q_s32(acc[p][2 * quad], acc[p][2 * quad + 1]),
                                 vuzp2q_s32(acc[p][2 * quad], acc[p][2 * quad + 1])};
      for (size_t i = 0; i < 2; ++i) {
        const size_t r = first + 2 * p + i;
        if (rows.scores[r] == nullptr) continue;
        const float32x4_t s = vmulq_f32(vcvtq_f32_s32(dots[i]), key_scales);
        vst1q_f32(rows.scores[r] + col + j + 4 * quad, vmulq_f32(s, vdupq_n_f32(rows.scale[r])));
      }
    }
  }
}

#if EDGEATTN_ARM_I8MM_ATTRIBUTES
HWY_POP_ATTRIBUTES
#endif

struct I8mmKv {
  static constexpr bool kQuantizesQuery = true;

  static void Scores(const AttentionHeadArgs& args, const QueryBlock& q, size_t rows, size_t t0,
                     size_t keys, float* HWY_RESTRICT scores) {
    const size_t groups = (args.dk + 3) / 4;
    const size_t panel_bytes = (groups + 1) * kI8KeyPanel * 4;
    const size_t pairs = (rows + 1) / 2;
    I8mmRows block;
    for (size_t r = 0; r < 2 * pairs; ++r) {
      const size_t row = HWY_MIN(r, rows - 1);
      block.q[r] = q.q8 + row * q.ldq8;
      block.scale[r] = q.q8_scale[row];
      block.scores[r] = r < rows ? scores + r * kAttentionKeyTile : nullptr;
    }
    for (size_t p0 = 0; p0 < keys; p0 += kI8KeyPanel) {
      const uint8_t* panel =
          static_cast<const uint8_t*>(args.keys) + (t0 + p0) / kI8KeyPanel * panel_bytes;
      for (size_t j = 0; j < kI8KeyPanel; j += 16) {
        // Two pairs per tile (16 accumulators), then the last pair.
        size_t p = 0;
        for (; p + 2 <= pairs; p += 2) SmmlaTile<2>(block, 2 * p, panel, groups, p0, j);
        if (p < pairs) SmmlaTile<1>(block, 2 * p, panel, groups, p0, j);
      }
    }
  }

  static void AccumulateValues(const AttentionHeadArgs& args, float* HWY_RESTRICT p, size_t rows,
                               size_t t0, size_t keys, float* HWY_RESTRICT acc, size_t ldacc) {
    I8Kv<I8DotI32, PairValuesWithDot>::AccumulateValues(args, p, rows, t0, keys, acc, ldacc);
  }
};
#endif  // EDGEATTN_ARM_I8MM

// Exported: plain inline, as a one-target build calls it directly (see attention-inl.h).
inline std::vector<const AttentionKernel*> ListArmI8mmKernels() {
  std::vector<const AttentionKernel*> kernels;
#if EDGEATTN_ARM_I8MM
  static const AttentionKernel kI8mm = {"i8kv_i8mm_smmla",
                                        KvType::kI8,
                                        &I8KeysBytes,
                                        &I8ValuesBytes,
                                        &PackI8KeysValues,
                                        &CompactKvScratch,
                                        &RunCompactKvAttention<I8mmKv>};
  // Its P V may be sdot's (PairValuesWithDot): FEAT_I8MM implies the dot product only from
  // Armv8.6 on.
  if (CpuHasArmI8mm() && CpuHasNeonDotProduct()) kernels.push_back(&kI8mm);
#endif
  return kernels;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_ARM_I8MM_ATTRIBUTES
#undef EDGEATTN_ARM_I8MM
#endif  // EDGEATTN_SIMD_ATTENTION_ARM_I8MM_INL_H_
