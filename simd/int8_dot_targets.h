// Which Highway targets may run which int8 dot-product instructions: the one place that ties the
// int8 projection kernels to CPU features. Highway dispatches to a target only on CPUs with all
// of that target's features, so a kernel compiled for a target in its set runs wherever the
// target does; features no target implies are checked at run time by the kernel's predicate.
//
// Targets that only newer Highway versions define (AVX3_ZEN4, AVX3_SPR, AVX10_2, NEON_BF16,
// NEON_WITHOUT_AES: Highway 1.4 has them all) count as absent (0) where they are not defined.
#ifndef EDGEATTN_SIMD_INT8_DOT_TARGETS_H_
#define EDGEATTN_SIMD_INT8_DOT_TARGETS_H_

#include "hwy/detect_targets.h"

#ifdef HWY_AVX3_ZEN4
#define EDGEATTN_HWY_AVX3_ZEN4 HWY_AVX3_ZEN4
#else
#define EDGEATTN_HWY_AVX3_ZEN4 0
#endif
#ifdef HWY_AVX3_SPR
#define EDGEATTN_HWY_AVX3_SPR HWY_AVX3_SPR
#else
#define EDGEATTN_HWY_AVX3_SPR 0
#endif
#ifdef HWY_AVX10_2
#define EDGEATTN_HWY_AVX10_2 HWY_AVX10_2
#else
#define EDGEATTN_HWY_AVX10_2 0
#endif
#ifdef HWY_NEON_BF16
#define EDGEATTN_HWY_NEON_BF16 HWY_NEON_BF16
#else
#define EDGEATTN_HWY_NEON_BF16 0
#endif
#ifdef HWY_NEON_WITHOUT_AES
#define EDGEATTN_HWY_NEON_WITHOUT_AES HWY_NEON_WITHOUT_AES
#else
#define EDGEATTN_HWY_NEON_WITHOUT_AES 0
#endif

// 512-bit x86 targets whose CPUs all have AVX512-VNNI (vpdpbusd).
#define EDGEATTN_VNNI_TARGETS \
  (HWY_AVX3_DL | EDGEATTN_HWY_AVX3_ZEN4 | EDGEATTN_HWY_AVX3_SPR | EDGEATTN_HWY_AVX10_2)
// SVE targets: SVE has sdot.
#define EDGEATTN_SVE_DOT_TARGETS (HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128)
// NEON targets on AArch64: the Armv8.2 dot product (sdot) is optional there, so the kernel
// checks for it at run time (NEON_BF16 CPUs always have it).
#define EDGEATTN_NEON_DOT_TARGETS \
  (HWY_NEON | EDGEATTN_HWY_NEON_WITHOUT_AES | EDGEATTN_HWY_NEON_BF16)

// Whether the target being compiled is one of `targets`, in #if.
#define EDGEATTN_TARGET_IN(targets) ((HWY_TARGET & (targets)) != 0)

#endif  // EDGEATTN_SIMD_INT8_DOT_TARGETS_H_
