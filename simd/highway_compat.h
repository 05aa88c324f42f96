// What differs between the Highway versions edgeattn builds with (Debian 12's 1.0.3 and the
// current 1.4), in one place: the version, which ops exist, and what the target being compiled
// can do. Kernels test a capability (a CPU feature), never one named target, so a newer Highway's
// additional targets (AVX3_ZEN4, AVX3_SPR, NEON_BF16, ...) keep every fast path.
//
// The EDGEATTN_TARGET_* predicates read HWY_TARGET, so use them inside per-target code (after
// foreach_target.h has set it), e.g. `#if EDGEATTN_TARGET_HAS_AVX512_VNNI`.
#ifndef EDGEATTN_SIMD_HIGHWAY_COMPAT_H_
#define EDGEATTN_SIMD_HIGHWAY_COMPAT_H_

#include "hwy/highway.h"  // HWY_MAJOR/HWY_MINOR (1.0.3 defines them here, 1.4 in base.h)

#if defined(EDGEATTN_HWY_LINKED_MAJOR) && \
    (HWY_MAJOR != EDGEATTN_HWY_LINKED_MAJOR || HWY_MINOR != EDGEATTN_HWY_LINKED_MINOR)
#error "Highway headers of another version than the library linked: link hwy::hwy"
#endif

#define EDGEATTN_HWY_AT_LEAST(major, minor) \
  (HWY_MAJOR > (major) || (HWY_MAJOR == (major) && HWY_MINOR >= (minor)))

#define EDGEATTN_HWY_STRINGIFY_(x) #x
#define EDGEATTN_HWY_STRINGIFY(x) EDGEATTN_HWY_STRINGIFY_(x)
// The Highway these kernels were compiled against, e.g. "1.4.0".
#define EDGEATTN_HWY_VERSION_STRING \
  EDGEATTN_HWY_STRINGIFY(HWY_MAJOR) \
  "." EDGEATTN_HWY_STRINGIFY(HWY_MINOR) "." EDGEATTN_HWY_STRINGIFY(HWY_PATCH)

// Ops that replace hand-written code on 1.0.3: LoadN/LoadNOr/StoreN (tails that touch no memory
// past the last lane).
#define EDGEATTN_HWY_HAS_LOAD_STORE_N EDGEATTN_HWY_AT_LEAST(1, 1)

// Target families. 1.0.3 has one NEON target; 1.4 adds NEON_WITHOUT_AES and NEON_BF16.
#if EDGEATTN_HWY_AT_LEAST(1, 1)
#define EDGEATTN_HWY_ALL_NEON HWY_ALL_NEON
#else
#define EDGEATTN_HWY_ALL_NEON HWY_NEON
#endif
#define EDGEATTN_HWY_ALL_SVE (HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128)

#define EDGEATTN_TARGET_IS_NEON (HWY_ARCH_ARM_A64 && (HWY_TARGET & EDGEATTN_HWY_ALL_NEON) != 0)
#define EDGEATTN_TARGET_IS_SVE (HWY_ARCH_ARM_A64 && (HWY_TARGET & EDGEATTN_HWY_ALL_SVE) != 0)
// EMU128 and SCALAR: plain C++ standing in for vector instructions.
#define EDGEATTN_TARGET_IS_EMULATED (HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR)

// x86 targets order by capability (lower bit = more features), and each AVX-512 target of
// either version includes the features of the ones above it: AVX3 (F/VL/DQ/BW) < AVX3_DL
// (+VNNI, VBMI2, ...) < AVX3_ZEN4 (+BF16) < AVX3_SPR (+FP16) < AVX10_2.
#define EDGEATTN_TARGET_HAS_AVX512 (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3)
#define EDGEATTN_TARGET_HAS_AVX512_VNNI (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3_DL)
// AVX512-FP16 intrinsics and _Float16 on x86: g++ 12 and clang 16 have them (clang 14 lacks
// both; 15 untried). The kernel needs them and a run-time CPUID check besides.
#define EDGEATTN_TARGET_CAN_BUILD_AVX512_FP16 \
  (EDGEATTN_TARGET_HAS_AVX512 && (HWY_COMPILER_GCC_ACTUAL >= 1200 || HWY_COMPILER_CLANG >= 1600))

#endif  // EDGEATTN_SIMD_HIGHWAY_COMPAT_H_
