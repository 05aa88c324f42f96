// Each compiled target's facts for the kernel tests compiled once (target_facts.h): the
// conditions its per-target code tests, evaluated under the target's attributes.
#include "tests/simd/target_facts.h"

#include <stdint.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/target_facts.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/highway_compat.h"
#include "simd/targets.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

// Where attention_arm_half-inl.h compiles the kernels.
#if (EDGEATTN_TARGET_IS_NEON || EDGEATTN_TARGET_IS_SVE) && HWY_COMPILER_GCC_ACTUAL && \
    defined(__linux__)
constexpr bool kArmF16Compiled = true, kArmBf16Compiled = true;
#elif EDGEATTN_TARGET_IS_NEON || EDGEATTN_TARGET_IS_SVE
#ifdef __ARM_FEATURE_FP16_VECTOR_ARITHMETIC
constexpr bool kArmF16Compiled = true;
#else
constexpr bool kArmF16Compiled = false;
#endif
#ifdef __ARM_FEATURE_BF16_VECTOR_ARITHMETIC
constexpr bool kArmBf16Compiled = true;
#else
constexpr bool kArmBf16Compiled = false;
#endif
#else
constexpr bool kArmF16Compiled = false, kArmBf16Compiled = false;
#endif

// Where attention_arm_i8mm-inl.h compiles the kernel.
#if (EDGEATTN_TARGET_IS_NEON || EDGEATTN_TARGET_IS_SVE) && \
    ((HWY_COMPILER_GCC_ACTUAL && defined(__linux__)) || defined(__ARM_FEATURE_MATMUL_INT8))
constexpr bool kArmI8mmCompiled = true;
#else
constexpr bool kArmI8mmCompiled = false;
#endif

// The Armv8.2 dot product enabled at compile time (the whole build's -march or the target's).
#if defined(__ARM_FEATURE_DOTPROD)
constexpr bool kArmDotprod = true;
#else
constexpr bool kArmDotprod = false;
#endif

// This target's facts (target_facts.h), for the tests compiled once.
testing_support::TargetFacts Facts() {
  testing_support::TargetFacts facts;
  facts.target = HWY_TARGET;
  facts.native_fma = HWY_NATIVE_FMA;
  facts.has_avx512 = EDGEATTN_TARGET_HAS_AVX512;
  facts.can_build_avx512_fp16 = EDGEATTN_TARGET_CAN_BUILD_AVX512_FP16;
  facts.arm_dotprod = kArmDotprod;
  facts.arm_f16_attention_compiled = kArmF16Compiled;
  facts.arm_bf16_attention_compiled = kArmBf16Compiled;
  facts.arm_i8mm_attention_compiled = kArmI8mmCompiled;
  return facts;
}

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {

HWY_EXPORT(Facts);

namespace testing_support {
TargetFacts FactsOf(int64_t target) {
  const TargetFacts facts = HWY_DYNAMIC_DISPATCH(Facts)();
  EXPECT_STREQ(hwy::TargetName(facts.target), hwy::TargetName(target))
      << "dynamic dispatch does not follow the target under test";
  return facts;
}
}  // namespace testing_support

}  // namespace edgeattn
#endif  // HWY_ONCE
