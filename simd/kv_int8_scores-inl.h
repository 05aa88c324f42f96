// The int8 KV cache's score kernels, one per dot-product instruction: Dot::Panel(q8, q8_sum,
// q_scale, panel, dk, scores, ahead) scores one quantized query row against a panel of 64 keys
// (kv_int8_rows-inl.h's layout: each key's 4 channels of a group in a 32-bit word, stored
// k + kI8KeyOffset: k + 128 on x86, k elsewhere), exactly in integers, then scores[j] =
// float(dot_j) * key_scale_j * q_scale. I8Kv (attention_kv-inl.h) runs them. Defines
// EDGEATTN_KV_VNNI, EDGEATTN_KV_AVX_VNNI, EDGEATTN_KV_MADDUBS, EDGEATTN_KV_NEON_MLAL and
// EDGEATTN_KV_NEON_DOT (whether this target has each kernel) for the kernel list
// (attention_kv-inl.h, which undefines them).

#if defined(EDGEATTN_SIMD_KV_INT8_SCORES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_KV_INT8_SCORES_INL_H_
#undef EDGEATTN_SIMD_KV_INT8_SCORES_INL_H_
#else
#define EDGEATTN_SIMD_KV_INT8_SCORES_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "simd/gemm_i8_x86_tile-inl.h"  // x86: PinToRegister
#include "simd/highway_compat.h"
#include "simd/kv_int8_rows-inl.h"
#include "simd/prefetch.h"

#if EDGEATTN_TARGET_HAS_AVX512_VNNI
#include <immintrin.h>
#define EDGEATTN_KV_VNNI 1
// Highway 1.0.3's AVX3_DL attribute string lacks avx512vnni (as in gemm_i8_vnni-inl.h).
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512vnni")
#else
#define EDGEATTN_KV_VNNI 0
HWY_BEFORE_NAMESPACE();
#endif

// AVX-VNNI (the VEX vpdpbusd on 256-bit vectors) on the AVX2 target, where the CPU has it; g++
// from 11 and clang from 12 have its intrinsics.
#if HWY_TARGET == HWY_AVX2 && HWY_ARCH_X86_64 && \
    (HWY_COMPILER_GCC_ACTUAL >= 1100 || HWY_COMPILER_CLANG >= 1200)
#include <immintrin.h>
#define EDGEATTN_KV_AVX_VNNI 1
#else
#define EDGEATTN_KV_AVX_VNNI 0
#endif

// vpmaddubsw (gemm_i8_maddubs-inl.h's instruction) on the AVX2 and AVX3 targets, for the CPUs
// without VNNI.
#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3)
#include <immintrin.h>
#define EDGEATTN_KV_MADDUBS 1
#else
#define EDGEATTN_KV_MADDUBS 0
#endif

// smull / smlal on NEON targets, for the cores without the dot product (every AArch64 core has
// them; g++ and clang alike).
#if EDGEATTN_TARGET_IS_NEON
#include <arm_neon.h>
#define EDGEATTN_KV_NEON_MLAL 1
#else
#define EDGEATTN_KV_NEON_MLAL 0
#endif

// The Armv8.2 dot product on NEON targets, which Highway 1.0.3 neither enables nor detects:
// g++ only (its per-function target attribute below), where Linux reports the feature
// (HWCAP_ASIMDDP) or the whole build targets it. Other ARM builds run the portable kernel.
#if EDGEATTN_TARGET_IS_NEON && HWY_COMPILER_GCC_ACTUAL && \
    (defined(__linux__) || defined(__ARM_FEATURE_DOTPROD))
#include <arm_neon.h>
#define EDGEATTN_KV_NEON_DOT 1
#else
#define EDGEATTN_KV_NEON_DOT 0
#endif

namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using I32Tag = hn::CappedTag<int32_t, 16>;

// Whether the int8 kernels ask the keys they read next into L2 while they compute. A decode step
// reads every cached position once, from L3 or memory, and the hardware prefetchers restart at
// each 4 KiB page. Measured on AVX-512 (Sapphire Rapids class, a decode step's core over 2048
// cached positions, 12 heads of 64): the int8 core took 0.8-0.9x the time with its keys and
// values asked ahead while its P V widened the values to fp32; the integer P V measured the same
// with and without the values asked, and only keys are. The bf16 and fp32 cores read at 24-27
// GB/s, what a plain read reaches, and the same prefetching made the bf16 one 1.1x slower: they
// go without. Only calls of one query block prefetch (QueryBlock::prefetch_end). Other targets
// are unmeasured and keep the hardware prefetchers alone.
#if HWY_ARCH_X86 && EDGEATTN_TARGET_HAS_AVX512
inline constexpr bool kPrefetchKv = true;
#else
inline constexpr bool kPrefetchKv = false;
#endif

// Bytes [begin, end) past `base`, as kPrefetchKv asks (end <= the buffer's size): the next
// panel or tile a kernel reads, or nullptr (none, or past the end).
HWY_INLINE const uint8_t* KvAhead(const void* base, size_t begin, size_t end, size_t size) {
  return kPrefetchKv && end <= size && begin < end ? static_cast<const uint8_t*>(base) + begin
                                                   : nullptr;
}

// Asks group g's cache lines of the int8 key panel `ahead` (g == groups: its scales) into L2,
// as the same group of the current panel is read; nullptr: nothing.
HWY_INLINE void PrefetchI8Group(const uint8_t* ahead, size_t g) {
  if (ahead == nullptr) return;
  for (size_t line = 0; line < kI8KeyGroupBytes; line += kCacheLineBytes) {
    __builtin_prefetch(ahead + g * kI8KeyGroupBytes + line, 0, 2);  // locality 2: L2
  }
}

// Scores of one row against one panel of 64 int8 keys, from the exact integer dot products:
// scores[j] = float(dot_j) * key_scale_j * q_scale.
template <class VI>
HWY_INLINE void StoreI8Scores(VI dot, const float* HWY_RESTRICT scales, float q_scale,
                              float* HWY_RESTRICT scores) {
  const hn::Rebind<float, hn::DFromV<VI> > df;
  const auto s = hn::Mul(hn::ConvertTo(df, dot), hn::LoadU(df, scales));
  hn::StoreU(hn::Mul(s, hn::Set(df, q_scale)), df, scores);
}

// Portable: each word holds 4 channels of one key (k + kI8KeyOffset; on x86, xor 0x80 per byte
// gives k back), shifts sign-extend each byte, and int32 multiply-adds sum them exactly.
struct I8DotI32 {
  static void Panel(const int8_t* HWY_RESTRICT q8, int32_t /*q8_sum*/, float q_scale,
                    const uint8_t* HWY_RESTRICT panel, size_t dk, float* HWY_RESTRICT scores,
                    const uint8_t* ahead) {
    const I32Tag di;
    const size_t N = hn::Lanes(di);
    const size_t groups = I8Groups(dk);
    const float* scales = reinterpret_cast<const float*>(panel + groups * kI8KeyPanel * 4);
    const auto flip = hn::Set(di, static_cast<int32_t>(kI8KeyOffset * 0x01010101u));
    for (size_t j = 0; j < kI8KeyPanel; j += N) {
      auto dot = hn::Zero(di);
      for (size_t g = 0; g < groups; ++g) {
        if (j == 0) PrefetchI8Group(ahead, g);
        auto w = hn::LoadU(di, reinterpret_cast<const int32_t*>(panel + (g * kI8KeyPanel + j) * 4));
        if (kI8KeyOffset != 0) w = hn::Xor(w, flip);
        const int8_t* q = q8 + g * 4;
        dot = hn::Add(dot, hn::Mul(hn::ShiftRight<24>(hn::ShiftLeft<24>(w)), hn::Set(di, q[0])));
        dot = hn::Add(dot, hn::Mul(hn::ShiftRight<24>(hn::ShiftLeft<16>(w)), hn::Set(di, q[1])));
        dot = hn::Add(dot, hn::Mul(hn::ShiftRight<24>(hn::ShiftLeft<8>(w)), hn::Set(di, q[2])));
        dot = hn::Add(dot, hn::Mul(hn::ShiftRight<24>(w), hn::Set(di, q[3])));
      }
      StoreI8Scores(dot, scales + j, q_scale, scores + j);
    }
    PrefetchI8Group(ahead, groups);
  }
};

// The x86 kernels read the key bytes as k + 128 (vpdpbusd's unsigned operand), the ARM ones as k.
static_assert(!HWY_ARCH_X86 || kI8KeyOffset == 128, "x86 int8 keys are stored k + 128");
static_assert(!HWY_ARCH_ARM || kI8KeyOffset == 0, "ARM int8 keys are stored k");

#if EDGEATTN_KV_VNNI
// AVX512-VNNI: vpdpbusd multiplies the unsigned key bytes (k + 128) by the query's signed bytes,
// four channels per lane; sum (k + 128) q = k.q + 128 sum q, so the row's 128 sum q is taken off.
struct I8DotVnni {
  static void Panel(const int8_t* HWY_RESTRICT q8, int32_t q8_sum, float q_scale,
                    const uint8_t* HWY_RESTRICT panel, size_t dk, float* HWY_RESTRICT scores,
                    const uint8_t* ahead) {
    const size_t groups = I8Groups(dk);
    __m512i acc0 = _mm512_setzero_si512(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    for (size_t g = 0; g < groups; ++g) {
      PrefetchI8Group(ahead, g);
      int32_t word;
      memcpy(&word, q8 + g * 4, 4);
      const __m512i q = _mm512_set1_epi32(word);
      const uint8_t* keys = panel + g * kI8KeyPanel * 4;
      acc0 = _mm512_dpbusd_epi32(acc0, _mm512_loadu_si512(keys), q);
      acc1 = _mm512_dpbusd_epi32(acc1, _mm512_loadu_si512(keys + 64), q);
      acc2 = _mm512_dpbusd_epi32(acc2, _mm512_loadu_si512(keys + 128), q);
      acc3 = _mm512_dpbusd_epi32(acc3, _mm512_loadu_si512(keys + 192), q);
    }
    PrefetchI8Group(ahead, groups);  // the scales
    const __m512i offset = _mm512_set1_epi32(128 * q8_sum);
    const float* scales = reinterpret_cast<const float*>(panel + groups * kI8KeyPanel * 4);
    StoreI8Scores(hn::Vec<I32Tag>{_mm512_sub_epi32(acc0, offset)}, scales, q_scale, scores);
    StoreI8Scores(hn::Vec<I32Tag>{_mm512_sub_epi32(acc1, offset)}, scales + 16, q_scale,
                  scores + 16);
    StoreI8Scores(hn::Vec<I32Tag>{_mm512_sub_epi32(acc2, offset)}, scales + 32, q_scale,
                  scores + 32);
    StoreI8Scores(hn::Vec<I32Tag>{_mm512_sub_epi32(acc3, offset)}, scales + 48, q_scale,
                  scores + 48);
  }
};
#endif  // EDGEATTN_KV_VNNI

#if EDGEATTN_KV_AVX_VNNI
// I8DotVnni's arithmetic on 256-bit vectors, 8 keys a vector. No Highway target includes
// AVX-VNNI and clang takes only the outermost target attribute, so the struct leaves the file's
// attribute region for one of its own (its Panel is then called, not inlined, from the AVX2
// code); the kernel list adds it only where CpuHasAvxVnni.
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avxvnni")
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
struct I8DotAvxVnni {
  // Group g's keys 8 i to 8 i + 7 (a function, not a lambda, which clang's pushed attribute
  // would leave without avxvnni).
  static __m256i Keys(const uint8_t* HWY_RESTRICT panel, size_t g, size_t i) {
    return _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(panel + g * kI8KeyPanel * 4 + 32 * i));
  }

  static void Panel(const int8_t* HWY_RESTRICT q8, int32_t q8_sum, float q_scale,
                    const uint8_t* HWY_RESTRICT panel, size_t dk, float* HWY_RESTRICT scores,
                    const uint8_t* ahead) {
    const size_t groups = I8Groups(dk);
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0, acc2 = acc0, acc3 = acc0, acc4 = acc0,
            acc5 = acc0, acc6 = acc0, acc7 = acc0;
    for (size_t g = 0; g < groups; ++g) {
      PrefetchI8Group(ahead, g);
      int32_t word;
      memcpy(&word, q8 + g * 4, 4);
      const __m256i q = _mm256_set1_epi32(word);
      acc0 = _mm256_dpbusd_avx_epi32(acc0, Keys(panel, g, 0), q);
      acc1 = _mm256_dpbusd_avx_epi32(acc1, Keys(panel, g, 1), q);
      acc2 = _mm256_dpbusd_avx_epi32(acc2, Keys(panel, g, 2), q);
      acc3 = _mm256_dpbusd_avx_epi32(acc3, Keys(panel, g, 3), q);
      acc4 = _mm256_dpbusd_avx_epi32(acc4, Keys(panel, g, 4), q);
      acc5 = _mm256_dpbusd_avx_epi32(acc5, Keys(panel, g, 5), q);
      acc6 = _mm256_dpbusd_avx_epi32(acc6, Keys(panel, g, 6), q);
      acc7 = _mm256_dpbusd_avx_epi32(acc7, Keys(panel, g, 7), q);
    }
    PrefetchI8Group(ahead, groups);  // the scales
    const __m256i offset = _mm256_set1_epi32(128 * q8_sum);
    const float* scales = reinterpret_cast<const float*>(panel + groups * kI8KeyPanel * 4);
    const __m256i accs[8] = {acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7};
    for (size_t i = 0; i < 8; ++i) {
      StoreI8Scores(hn::Vec<I32Tag>{_mm256_sub_epi32(accs[i], offset)}, scales + 8 * i, q_scale,
                    scores + 8 * i);
    }
  }
};
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();
HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
#endif  // EDGEATTN_KV_AVX_VNNI

#if EDGEATTN_KV_MADDUBS
// vpmaddubsw multiplies unsigned by signed bytes and adds pairs into int16 with saturation: here
// the keys' magnitudes (the stored k + 128 flipped back to k, then vpabsb: at most 128 as
// unsigned) by the query bytes carrying the keys' signs (vpsignb; the query quantizes to
// [-127, 127], so negating it cannot overflow), a pair at most 2 x 128 x 127 = 32512; vpmaddwd
// by ones adds a key's two pairs into int32: the exact k.q, as the other kernels compute it.
// 256-bit vectors (8 keys) on both targets.
struct I8DotMaddubs {
  static void Panel(const int8_t* HWY_RESTRICT q8, int32_t /*q8_sum*/, float q_scale,
                    const uint8_t* HWY_RESTRICT panel, size_t dk, float* HWY_RESTRICT scores,
                    const uint8_t* ahead) {
    constexpr size_t kVecs = kI8KeyPanel / 8;
    const size_t groups = I8Groups(dk);
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[kVecs];
    EDGEATTN_UNROLL_ACCUMULATORS for (size_t i = 0; i < kVecs; ++i) acc[i] = _mm256_setzero_si256();
    for (size_t g = 0; g < groups; ++g) {
      PrefetchI8Group(ahead, g);
      int32_t word;
      memcpy(&word, q8 + g * 4, 4);
      const __m256i q = _mm256_set1_epi32(word);
      const uint8_t* keys = panel + g * kI8KeyPanel * 4;
      EDGEATTN_UNROLL_ACCUMULATORS for (size_t i = 0; i < kVecs; ++i) {
        const __m256i k = _mm256_xor_si256(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys + 32 * i)), flip);
        const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(k), _mm256_sign_epi8(q, k));
        acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(pairs, ones));
      }
      EDGEATTN_UNROLL_ACCUMULATORS for (size_t i = 0; i < kVecs; ++i) PinToRegister(acc[i]);
    }
    PrefetchI8Group(ahead, groups);  // the scales
    const float* scales = reinterpret_cast<const float*>(panel + groups * kI8KeyPanel * 4);
    EDGEATTN_UNROLL_ACCUMULATORS for (size_t i = 0; i < kVecs; ++i) {
      StoreI8Scores(hn::Vec256<int32_t>{acc[i]}, scales + 8 * i, q_scale, scores + 8 * i);
    }
  }
};
#endif  // EDGEATTN_KV_MADDUBS

#if EDGEATTN_KV_NEON_MLAL
// NEON without the dot product (Cortex-A53, A72), as qd8_qc8w_neonmlal_2x4v computes: smull
// multiplies a group's key bytes (k, signed: kI8KeyOffset is 0 on ARM) by the query bytes into
// int16, smlal adds the next group's products (two of [-127, 127] values fit), and sadalp adds
// the int16 pairs into int32: two accumulators per 4 keys, each key's channels {0, 1} and {2, 3}
// of a group in adjacent lanes, folded by addp. Half a panel (32 keys, 16 accumulators) per
// pass over the groups. No prefetching (kPrefetchKv is off on ARM).
struct I8DotNeonMlal {
  static constexpr size_t kVecs = kI8KeyPanel / 8;  // per half: 32 keys, 4 per 16-byte vector

  // Not inlined: one call per 64 keys, and tools/arm_model.py finds its loop by name.
  static HWY_NOINLINE void Panel(const int8_t* HWY_RESTRICT q8, int32_t /*q8_sum*/, float q_scale,
                                 const uint8_t* HWY_RESTRICT panel, size_t dk,
                                 float* HWY_RESTRICT scores, const uint8_t* /*ahead*/) {
    const size_t groups = I8Groups(dk);
    const float* scales = reinterpret_cast<const float*>(panel + groups * kI8KeyGroupBytes);
    for (size_t half = 0; half < 2; ++half) {
      const size_t key0 = half * 4 * kVecs;
      int32x4_t lo[kVecs], hi[kVecs];
      for (size_t i = 0; i < kVecs; ++i) lo[i] = hi[i] = vdupq_n_s32(0);
      size_t g = 0;
      for (; g + 2 <= groups; g += 2) AddProducts<true>(q8, panel + 4 * key0, g, lo, hi);
      if (g < groups) AddProducts<false>(q8, panel + 4 * key0, g, lo, hi);
      for (size_t i = 0; i < kVecs; ++i) {
        StoreI8Scores(hn::Vec<I32Tag>(vpaddq_s32(lo[i], hi[i])), scales + key0 + 4 * i, q_scale,
                      scores + key0 + 4 * i);
      }
    }
  }

 private:
  // Group g's key bytes of vector i (4 keys).
  static int8x16_t Keys(const uint8_t* HWY_RESTRICT keys, size_t g, size_t i) {
    return vld1q_s8(reinterpret_cast<const int8_t*>(keys + g * kI8KeyGroupBytes + 16 * i));
  }

  static int8x16_t QueryWord(const int8_t* HWY_RESTRICT q8, size_t g) {
    int32_t word;
    memcpy(&word, q8 + 4 * g, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(word));
  }

  // Groups g and, when kPair, g + 1 of the 32 keys from `keys`.
  template <bool kPair>
  static HWY_INLINE void AddProducts(const int8_t* HWY_RESTRICT q8, const uint8_t* keys, size_t g,
                                     int32x4_t (&lo)[kVecs], int32x4_t (&hi)[kVecs]) {
    const int8x16_t q0 = QueryWord(q8, g);
    const int8x16_t q1 = kPair ? QueryWord(q8, g + 1) : q0;
    for (size_t i = 0; i < kVecs; ++i) {
      const int8x16_t k0 = Keys(keys, g, i);
      int16x8_t l = vmull_s8(vget_low_s8(k0), vget_low_s8(q0));
      int16x8_t h = vmull_high_s8(k0, q0);
      if (kPair) {
        const int8x16_t k1 = Keys(keys, g + 1, i);
        l = vmlal_s8(l, vget_low_s8(k1), vget_low_s8(q1));
        h = vmlal_high_s8(h, k1, q1);
      }
      lo[i] = vpadalq_s16(lo[i], l);
      hi[i] = vpadalq_s16(hi[i], h);
    }
  }
};
#endif  // EDGEATTN_KV_NEON_MLAL

#if EDGEATTN_KV_NEON_DOT
HWY_PUSH_ATTRIBUTES("arch=armv8.2-a+crypto+dotprod")
// sdot multiplies the key bytes (k, signed: kI8KeyOffset is 0 on ARM) by the query's, 4 keys a
// vector. No prefetching (kPrefetchKv is off on ARM).
struct I8DotNeon {
  static void Panel(const int8_t* HWY_RESTRICT q8, int32_t /*q8_sum*/, float q_scale,
                    const uint8_t* HWY_RESTRICT panel, size_t dk, float* HWY_RESTRICT scores,
                    const uint8_t* /*ahead*/) {
    constexpr size_t kVecs = kI8KeyPanel / 4;  // 4 keys per 16-byte vector
    const size_t groups = I8Groups(dk);
    int32x4_t acc[kVecs];
    for (size_t i = 0; i < kVecs; ++i) acc[i] = vdupq_n_s32(0);
    for (size_t g = 0; g < groups; ++g) {
      int32_t word;
      memcpy(&word, q8 + g * 4, 4);
      const int8x16_t q = vreinterpretq_s8_s32(vdupq_n_s32(word));
      const int8_t* keys = reinterpret_cast<const int8_t*>(panel + g * kI8KeyPanel * 4);
      for (size_t i = 0; i < kVecs; ++i) acc[i] = vdotq_s32(acc[i], vld1q_s8(keys + i * 16), q);
    }
    const float* scales = reinterpret_cast<const float*>(panel + groups * kI8KeyPanel * 4);
    for (size_t i = 0; i < kVecs; ++i) {
      StoreI8Scores(hn::Vec<I32Tag>(acc[i]), scales + 4 * i, q_scale, scores + 4 * i);
    }
  }
};
HWY_POP_ATTRIBUTES
#endif  // EDGEATTN_KV_NEON_DOT

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_KV_INT8_SCORES_INL_H_
