// What the kernel tests compiled once, not once per Highway target, need to know of the target
// under test that only code compiled for it knows: its macros under Highway's target attributes.
// Each fact is the condition the kernels' own per-target code tests; target_facts.cc evaluates
// them for every target the tests compile.
#ifndef EDGEATTN_TESTS_SIMD_TARGET_FACTS_H_
#define EDGEATTN_TESTS_SIMD_TARGET_FACTS_H_

#include <cstdint>

namespace edgeattn {
namespace testing_support {

struct TargetFacts {
  std::int64_t target;  // HWY_TARGET
  // HWY_NATIVE_FMA: the target's MulAdd rounds once.
  bool native_fma;
  // EDGEATTN_TARGET_HAS_AVX512 (simd/highway_compat.h).
  bool has_avx512;
  // EDGEATTN_TARGET_CAN_BUILD_AVX512_FP16: the compiler builds f16kv_f16fma_8x64 for the target.
  bool can_build_avx512_fp16;
  // __ARM_FEATURE_DOTPROD: the target's code runs sdot/udot without asking the CPU.
  bool arm_dotprod;
  // attention_arm_half-inl.h compiles f16kv_f16fma_6x8 and bf16kv_bf16dot_6x8 for the target.
  bool arm_f16_attention_compiled;
  bool arm_bf16_attention_compiled;
  // attention_arm_i8mm-inl.h compiles i8kv_i8mm_smmla for the target.
  bool arm_i8mm_attention_compiled;
};

// The facts of `target`, the target under test (a hwy::TestWithParamTarget's GetParam()), from
// the code dynamic dispatch picks, which the fixture's SetUp points at that target; fails the
// test where it does not.
TargetFacts FactsOf(std::int64_t target);

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_SIMD_TARGET_FACTS_H_
