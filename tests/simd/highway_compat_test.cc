// What simd/highway_compat.h promises, on every compiled target of the Highway version built
// against: a capability predicate is true only where the CPU running the target has the
// feature, and the partial loads/stores built on it (LoadNOr/StoreN on 1.1+, a buffer on 1.0.3)
// touch only their lanes. And the CPU-feature checks that pick kernels beyond a target
// (simd/cpu_features.h) agree with what Linux reports of the CPU.
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
#include "simd/cpu_features.h"
#include "simd/highway_compat.h"
#include "simd/partial_vector-inl.h"
#include "simd/targets.h"
#include "tests/test_support.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

struct CpuFeatures {
  bool int8_dot = false;  // avx512vnni
};

CpuFeatures DetectCpu() {
  CpuFeatures f;
#if HWY_ARCH_X86
  __builtin_cpu_init();
  f.int8_dot = __builtin_cpu_supports("avx512vnni");
#endif
  return f;
}

void TestPredicatesMatchCpu() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  const CpuFeatures cpu = DetectCpu();
#if HWY_ARCH_X86
  // The AVX-512 targets are the x86 ones with 64-byte vectors. The kernel tests read the
  // predicate through target_facts.h, so they cannot see it wrong: a target left out would only
  // lose its AVX-512 kernels, unnoticed.
  EXPECT_EQ(EDGEATTN_TARGET_HAS_AVX512, hn::Lanes(hn::ScalableTag<uint8_t>()) == 64);
  if (EDGEATTN_TARGET_HAS_AVX512_VNNI) {
    EXPECT_TRUE(cpu.int8_dot);
  }
#elif HWY_ARCH_ARM_A64
  EXPECT_NE(EDGEATTN_TARGET_IS_NEON, EDGEATTN_TARGET_IS_SVE);
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

// The kernel tests take these checks' answers as given (a kernel is listed where its check says
// so), so a wrong CPUID leaf, register or bit would only drop a fast kernel, or list one the CPU
// cannot run: compare them with a source independent of their CPUID reads, the flags Linux lists
// in /proc/cpuinfo (AMX only where the OS saves tile state) and, on ARM, the hwcaps.
TEST(CpuFeaturesTest, MatchWhatLinuxReports) {
#if defined(__x86_64__) && defined(__linux__)
  using testing_support::CpuInfoHasFlag;
  // Linux hides the AVX-512 extensions where the OS does not save AVX-512 state, a case the
  // checks leave to the AVX3 targets' own check.
  if (CpuInfoHasFlag("avx512f")) {
    EXPECT_EQ(simd::CpuHasAvx512Bf16(), CpuInfoHasFlag("avx512_bf16"));
    EXPECT_EQ(simd::CpuHasAvx512Fp16(), CpuInfoHasFlag("avx512_fp16"));
    EXPECT_EQ(simd::CpuHasAvx512Vnni(), CpuInfoHasFlag("avx512_vnni"));
  }
  if (CpuInfoHasFlag("avx2")) {
    EXPECT_EQ(simd::CpuHasAvxVnni(), CpuInfoHasFlag("avx_vnni"));
  }
  const bool tiles = CpuInfoHasFlag("amx_tile");
  EXPECT_EQ(simd::CpuRunsAmxInt8(), tiles && CpuInfoHasFlag("amx_int8"));
  // The bf16 tile kernels also round with AVX512-BF16.
  EXPECT_EQ(simd::CpuRunsAmxBf16(),
            tiles && CpuInfoHasFlag("amx_bf16") && CpuInfoHasFlag("avx512_bf16"));
  EXPECT_FALSE(simd::CpuHasNeonDotProduct());
#elif defined(__aarch64__) && defined(__linux__)
  EXPECT_EQ(simd::CpuHasNeonDotProduct(), (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0);
  EXPECT_FALSE(simd::CpuHasAvx512Bf16());
  EXPECT_FALSE(simd::CpuHasAvx512Fp16());
  EXPECT_FALSE(simd::CpuHasAvx512Vnni());
  EXPECT_FALSE(simd::CpuHasAvxVnni());
  EXPECT_FALSE(simd::CpuRunsAmxInt8());
  EXPECT_FALSE(simd::CpuRunsAmxBf16());
#else
  GTEST_SKIP() << "no source of the CPU's features independent of the checks here";
#endif
}
}  // namespace edgeattn
#endif
