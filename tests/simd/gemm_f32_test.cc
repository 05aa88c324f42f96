// Every fp32 projection kernel of every compiled target, forced one by one, against a
// double-precision scalar product: odd sizes around the tile and panel widths, strided inputs,
// any split of rows and panels, and pack/unpack.
#include <cmath>
#include <cstring>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/gemm_f32_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/projection_kernel.h"
#include "simd/targets.h"
#include "tests/simd/packed_weights.h"
#include "tests/test_support.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

using testing_support::kFloatEps;
using testing_support::RandomNormal;

constexpr float kSentinel = -12345.0f;

void CheckCase(const simd::ProjectionKernel& kernel, size_t m, size_t n, size_t k, bool with_bias,
               uint32_t seed) {
  const size_t lda = k + 3;  // strides wider than the data: padding must be neither read nor written
  const size_t ldc = n + 5;
  const std::vector<float> a = RandomNormal(m * lda, seed);
  const std::vector<float> w = RandomNormal(n * k, seed + 1);
  const std::vector<float> bias = with_bias ? RandomNormal(n, seed + 2) : std::vector<float>();
  const testing_support::PackedWeights packed(kernel, w.data(), n, k, 0, {}, bias);
  std::vector<float> unpacked(n * k);
  kernel.unpack(packed.packed.get(), n, k, 0, unpacked.data());
  ASSERT_EQ(unpacked, w) << kernel.name << ": unpack gives back what was packed";
  const simd::ProjectionInput in{a.data(), lda, {}};
  const size_t panels = packed.panels(kernel);
  std::vector<float> c(m * ldc, kSentinel);
  kernel.run(in, 0, m, packed.view, 0, panels, c.data(), ldc);

  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= n) {
        ASSERT_EQ(got, kSentinel) << "wrote outside C at " << i << "," << j;
        continue;
      }
      double ref = with_bias ? bias[j] : 0.0;
      double abs_sum = with_bias ? std::fabs(bias[j]) : 0.0;
      for (size_t x = 0; x < k; ++x) {
        ref += double(a[i * lda + x]) * w[j * k + x];
        abs_sum += std::fabs(double(a[i * lda + x]) * w[j * k + x]);
      }
      // A sum of k+1 terms with one rounding per fused multiply-add is off by at most
      // gamma_{k+1} * sum |terms|, gamma_n = n u / (1 - n u) (Higham, 3.1); doubled for margin.
      const double tol = 2.0 * (k + 1) * kFloatEps * abs_sum + 1e-30;
      ASSERT_NEAR(got, ref, tol) << kernel.name << " m=" << m << " n=" << n << " k=" << k
                                 << " at " << i << "," << j;
    }
  }

  // Any split of rows and panels between workers computes bit-identical results.
  std::vector<float> split(m * ldc, kSentinel);
  const size_t row_cut = m / 3;
  const size_t panel_cut = panels / 2;
  const size_t row_ranges[2][2] = {{0, row_cut}, {row_cut, m}};
  for (const auto& rows : row_ranges) {
    kernel.run(in, rows[0], rows[1], packed.view, 0, panel_cut, split.data(), ldc);
    kernel.run(in, rows[0], rows[1], packed.view, panel_cut, panels, split.data(), ldc);
  }
  ASSERT_EQ(0, std::memcmp(split.data(), c.data(), c.size() * sizeof(float))) << kernel.name;
}

void TestGemmMatchesScalar() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  const std::vector<const simd::ProjectionKernel*> kernels =
      simd::ProjectionKernels(simd::WeightType::kF32);
  ASSERT_FALSE(kernels.empty());
  for (const simd::ProjectionKernel* kernel : kernels) {
    ASSERT_EQ(kernel->activations, simd::ActivationType::kF32) << kernel->name;
    ASSERT_EQ(simd::FindProjectionKernel(simd::WeightType::kF32, kernel->name), kernel);
  }
  // m: below, at and above the tile rows (4, 6) and their multiples; n: below, at and above the
  // vector, tile and panel widths; k: odd.
  const size_t sizes_m[] = {1, 3, 5, 6, 7, 8, 12, 13, 15, 17, 63, 129};
  const size_t sizes_n[] = {1, 3, 4, 8, 15, 16, 17, 31, 33, 63, 64, 65, 129, 300};
  const size_t sizes_k[] = {1, 3, 17, 63, 129, 300};
  uint32_t seed = 1;
  for (size_t m : sizes_m) {
    for (size_t n : sizes_n) {
      for (size_t k : sizes_k) {
        if (m * n * k > 2000000) continue;
        for (const simd::ProjectionKernel* kernel : kernels) {
          CheckCase(*kernel, m, n, k, (seed & 1) != 0, seed);
          if (::testing::Test::HasFatalFailure()) return;
        }
        seed += 3;
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
HWY_BEFORE_TEST(GemmF32Test);
HWY_EXPORT_AND_TEST_P(GemmF32Test, TestGemmMatchesScalar);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GemmF32Test);
}  // namespace edgeattn
#endif
