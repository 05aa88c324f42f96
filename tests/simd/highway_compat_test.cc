// What simd/highway_compat.h promises, on every compiled target of the Highway version built
// against: a capability predicate is true only where the CPU running the target has the
// feature, and the partial loads/stores built on it (LoadNOr/StoreN on 1.1+, a buffer on 1.0.3)
// touch only their lanes.
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/highway_compat_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/highway_compat.h"
#include "simd/partial_vector-inl.h"
#include "simd/targets.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

struct CpuFeatures {
  bool int8_dot = false;  // avx512vnni; ARM asimddp
  bool bf16 = false;      // avx512bf16; ARM bf16
  bool fp16 = false;      // ARM asimdhp (x86's avx512fp16 is left to Highway's own check)
};

CpuFeatures DetectCpu() {
  CpuFeatures f;
#if HWY_ARCH_X86
  __builtin_cpu_init();
  f.int8_dot = __builtin_cpu_supports("avx512vnni");
  f.bf16 = __builtin_cpu_supports("avx512bf16");
#elif defined(__aarch64__) && defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  f.int8_dot = (hwcap & HWCAP_ASIMDDP) != 0;
  f.fp16 = (hwcap & HWCAP_ASIMDHP) != 0;
#ifdef HWCAP2_BF16
  f.bf16 = (getauxval(AT_HWCAP2) & HWCAP2_BF16) != 0;
#endif
#endif
  return f;
}

void TestPredicatesMatchCpu() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  const CpuFeatures cpu = DetectCpu();
#if HWY_ARCH_X86
  if (EDGEATTN_TARGET_HAS_AVX512_VNNI) {
    EXPECT_TRUE(cpu.int8_dot);
  }
  if (EDGEATTN_TARGET_HAS_BF16_DOT) {
    EXPECT_TRUE(cpu.bf16);
  }
#elif HWY_ARCH_ARM_A64
  EXPECT_NE(EDGEATTN_TARGET_IS_NEON, EDGEATTN_TARGET_IS_SVE);
  // cpu.int8_dot is the Advanced SIMD dot product (HWCAP_ASIMDDP); SVE's sdot is part of SVE
  // itself, which some SVE CPUs (A64FX) have without the NEON one.
  if (EDGEATTN_TARGET_HAS_ARM_DOTPROD && EDGEATTN_TARGET_IS_NEON) {
    EXPECT_TRUE(cpu.int8_dot);
  }
  if (EDGEATTN_TARGET_HAS_BF16_DOT) {
    EXPECT_TRUE(cpu.bf16);
  }
  if (EDGEATTN_TARGET_HAS_FP16_ARITHMETIC) {
    EXPECT_TRUE(cpu.fp16);
  }
#endif
  (void)cpu;
}

constexpr float kSentinel = 777.0f;

// Every count from 0 to a whole vector, at every offset into a guarded buffer.
void TestPartialVectorsTouchOnlyTheirLanes() {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  for (size_t count = 0; count <= N; ++count) {
    for (size_t offset = 0; offset < 3; ++offset) {
      std::vector<float> buffer(offset + N + 8, kSentinel);
      float* p = buffer.data() + offset;
      simd::HWY_NAMESPACE::StorePartial(d, hn::Iota(d, 1.0f), p, count);
      for (size_t i = 0; i < buffer.size(); ++i) {
        const bool stored = i >= offset && i < offset + count;
        ASSERT_EQ(buffer[i], stored ? static_cast<float>(i - offset + 1) : kSentinel)
            << "count=" << count << " offset=" << offset << " i=" << i;
      }
      std::vector<float> lanes(N);
      hn::StoreU(simd::HWY_NAMESPACE::LoadPartial(d, p, count, -2.0f), d, lanes.data());
      for (size_t i = 0; i < N; ++i) {
        ASSERT_EQ(lanes[i], i < count ? static_cast<float>(i + 1) : -2.0f)
            << "count=" << count << " offset=" << offset << " i=" << i;
      }
    }
  }
}

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {
HWY_BEFORE_TEST(HighwayCompatTest);
HWY_EXPORT_AND_TEST_P(HighwayCompatTest, TestPredicatesMatchCpu);
HWY_EXPORT_AND_TEST_P(HighwayCompatTest, TestPartialVectorsTouchOnlyTheirLanes);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HighwayCompatTest);

TEST(HighwayCompatTest, VersionNamesTheHeadersCompiledAgainst) {
  EXPECT_EQ(simd::HighwayVersion(), std::to_string(HWY_MAJOR) + "." + std::to_string(HWY_MINOR) +
                                        "." + std::to_string(HWY_PATCH));
}
}  // namespace edgeattn
#endif
