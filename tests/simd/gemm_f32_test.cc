// Every fp32 projection kernel of every compiled target, forced one by one, against a
// double-precision scalar product: odd sizes around the tile and panel widths, strided inputs,
// any split of rows and panels, and pack/unpack.
#include <cstdint>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/gemm_f32_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/gemm_f32-inl.h"
#include "simd/projection_kernel.h"
#include "simd/targets.h"
#include "tests/simd/projection_check.h"
#include "tests/test_support.h"

// Per target only the kernels' row block; the test itself is compiled once (below).
HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

size_t RowBlock(size_t k) { return simd::HWY_NAMESPACE::RowBlock(k); }

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {

HWY_EXPORT(RowBlock);

namespace {

using testing_support::CheckPackedCase;
using testing_support::ForEachProjectionSize;
using testing_support::RandomNormal;

void CheckCase(const simd::ProjectionKernel& kernel, size_t m, size_t n, size_t k, bool with_bias,
               uint32_t seed) {
  const std::vector<float> w = RandomNormal(n * k, seed + 1);
  CheckPackedCase(kernel, m, n, k, with_bias, w, seed,
                  [](float a, float weight) { return double(a) * weight; });
}

void TestGemmMatchesScalar(int64_t target) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  const std::vector<const simd::ProjectionKernel*> kernels =
      simd::ProjectionKernels(simd::WeightType::kF32);
  ASSERT_FALSE(kernels.empty());
  for (const simd::ProjectionKernel* kernel : kernels) {
    ASSERT_EQ(kernel->activations, simd::ActivationType::kF32) << kernel->name;
    ASSERT_EQ(simd::FindProjectionKernel(simd::WeightType::kF32, kernel->name), kernel);
  }
  // m: below, at and above the tile rows (4, 6) and their multiples; n: below, at and above the
  // vector, tile and panel widths; k: odd.
  const uint32_t seed = ForEachProjectionSize(
      kernels, {1, 3, 5, 6, 7, 8, 12, 13, 15, 17, 63, 129},
      {1, 3, 4, 8, 15, 16, 17, 31, 33, 63, 64, 65, 129, 300}, {1, 3, 17, 63, 129, 300},
      [](const simd::ProjectionKernel& kernel, size_t m, size_t n, size_t k, uint32_t seed) {
        CheckCase(kernel, m, n, k, (seed & 1) != 0, seed);
      });
  if (::testing::Test::HasFatalFailure()) return;
  // More rows than one row block (RowBlock), with a tile tail inside the second block: a long k
  // keeps the block at its minimum, a narrow n keeps the case cheap.
  const size_t k = 3000;
  const size_t m = HWY_DYNAMIC_DISPATCH(RowBlock)(k) + 5;
  for (const simd::ProjectionKernel* kernel : kernels) {
    CheckCase(*kernel, m, 3, k, true, seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace

// An instance per target; the body reaches its kernels and RowBlock by dynamic dispatch.
HWY_BEFORE_TEST(GemmF32Test);
TEST_P(GemmF32Test, TestGemmMatchesScalar) { TestGemmMatchesScalar(GetParam()); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GemmF32Test);

// PackGemmWeights reads W's rows ldw apart (the kernels' packs above pass ldw == k only) and
// zero-pads the lanes past n of the last panel, whatever the buffer held: the layout
// gemm_f32.h documents, read back element by element.
TEST(PackGemmWeightsTest, ReadsRowsLdwApartAndZeroPadsPastN) {
  const size_t n = 70, k = 3, ldw = 5;   // two panels, the second with 6 features of 64
  std::vector<float> w(n * ldw, -1.0f);  // -1 in the 2 columns past k of each row
  for (size_t row = 0; row < n; ++row) {
    for (size_t i = 0; i < k; ++i) w[row * ldw + i] = static_cast<float>(row * k + i + 1);
  }
  std::vector<float> packed(simd::PackedGemmWeightsSize(n, k), 5.0f);
  ASSERT_EQ(packed.size(), 2 * k * simd::kGemmPanelWidth);
  simd::PackGemmWeights(w.data(), ldw, n, k, packed.data());
  size_t mismatches = 0;
  for (size_t panel = 0; panel < 2; ++panel) {
    for (size_t i = 0; i < k; ++i) {
      for (size_t lane = 0; lane < simd::kGemmPanelWidth; ++lane) {
        const size_t row = panel * simd::kGemmPanelWidth + lane;
        const float want = row < n ? static_cast<float>(row * k + i + 1) : 0.0f;
        const float got = packed[(panel * k + i) * simd::kGemmPanelWidth + lane];
        if (got == want) continue;
        ADD_FAILURE() << "panel " << panel << " row " << i << " lane " << lane << ": " << got
                      << ", want " << want;
        if (++mismatches == 4) return;  // enough to tell the pattern
      }
    }
  }
}
}  // namespace edgeattn
#endif
