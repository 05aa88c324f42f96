// The check every projection-kernel test makes once its weights are packed: the kernel run over
// all of C against a reference sum per element, within the bound of fp32 summation, nothing
// written past the n columns, and any split of rows and panels giving the same bits; and the
// float-activation tests' cases around it (strided inputs, pack/unpack, odd sizes).
#ifndef EDGEATTN_TESTS_SIMD_PROJECTION_CHECK_H_
#define EDGEATTN_TESTS_SIMD_PROJECTION_CHECK_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <vector>

#include "simd/projection_kernel.h"
#include "tests/simd/packed_weights.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace testing_support {

// The exact sum of an element's terms (products and bias) and the sum of their magnitudes.
struct ReferenceSum {
  double sum = 0;
  double abs_sum = 0;
};

// reference(i, j) gives C[i][j]'s ReferenceSum; k is the number of products per element.
template <class Reference>
void CheckProjection(const simd::ProjectionKernel& kernel, const PackedWeights& packed,
                     const simd::ProjectionInput& in, std::size_t m, std::size_t k, std::size_t ldc,
                     const Reference& reference) {
  constexpr float kSentinel = -12345.0f;
  const std::size_t n = packed.view.n;
  const std::size_t panels = packed.panels(kernel);
  std::vector<float> c(m * ldc, kSentinel);
  kernel.run(in, 0, m, packed.view, 0, panels, c.data(), ldc);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= n) {
        ASSERT_EQ(got, kSentinel) << "wrote outside C at " << i << "," << j;
        continue;
      }
      const ReferenceSum ref = reference(i, j);
      if (!std::isfinite(ref.sum) || std::isnan(ref.abs_sum)) {
        ASSERT_FALSE(std::isfinite(got)) << kernel.name << " at " << i << "," << j;
        continue;
      }
      // Every product is exact in fp32 (or rounded once inside a fused multiply-add), so a sum
      // of k+1 terms is off by at most gamma_{k+1} * sum |terms|, gamma_n = n u / (1 - n u)
      // (Higham, 3.1), doubled for margin; a kernel that flushes subnormal sums to zero adds at
      // most the smallest normal float per step.
      const double tol = 2.0 * (k + 1) * kFloatEps * ref.abs_sum +
                         (k + 1) * double(std::numeric_limits<float>::min());
      ASSERT_NEAR(got, ref.sum, tol)
          << kernel.name << " m=" << m << " n=" << n << " k=" << k << " at " << i << "," << j;
    }
  }
  std::vector<float> split(m * ldc, kSentinel);
  const std::size_t row_cut = m / 3;
  const std::size_t panel_cut = panels / 2;
  const std::size_t row_ranges[2][2] = {{0, row_cut}, {row_cut, m}};
  for (const auto& rows : row_ranges) {
    kernel.run(in, rows[0], rows[1], packed.view, 0, panel_cut, split.data(), ldc);
    kernel.run(in, rows[0], rows[1], packed.view, panel_cut, panels, split.data(), ldc);
  }
  ASSERT_EQ(0, std::memcmp(split.data(), c.data(), c.size() * sizeof(float))) << kernel.name;
}

// C = A W^T + bias for weights w (n x k elements of the kernel's weight type, which unpack must
// give back) on N(0, 1) activations, against the sum of term(a, w) over each element's k pairs:
// strides wider than the data, whose padding must be neither read nor written.
template <class Weight, class Term>
void CheckPackedCase(const simd::ProjectionKernel& kernel, std::size_t m, std::size_t n,
                     std::size_t k, bool with_bias, const std::vector<Weight>& w,
                     std::uint32_t seed, const Term& term) {
  const std::size_t lda = k + 3;
  const std::size_t ldc = n + 5;
  const std::vector<float> a = RandomNormal(m * lda, seed);
  const std::vector<float> bias = with_bias ? RandomNormal(n, seed + 2) : std::vector<float>();
  const PackedWeights packed(kernel, w.data(), n, k, 0, {}, bias);
  std::vector<Weight> unpacked(n * k);
  kernel.unpack(packed.packed.get(), n, k, 0, unpacked.data());
  ASSERT_EQ(unpacked, w) << kernel.name << ": unpack gives back what was packed";
  const simd::ProjectionInput in{a.data(), lda, {}};
  CheckProjection(kernel, packed, in, m, k, ldc, [&](std::size_t i, std::size_t j) {
    ReferenceSum ref{with_bias ? bias[j] : 0.0, with_bias ? std::fabs(bias[j]) : 0.0};
    for (std::size_t x = 0; x < k; ++x) {
      const double t = term(a[i * lda + x], w[j * k + x]);
      ref.sum += t;
      ref.abs_sum += std::fabs(t);
    }
    return ref;
  });
}

// Calls check(kernel, m, n, k, seed) for every kernel and every size with m n k <= 150,000
// (larger cases add no tail and are what costs under qemu), seeds 1, 4, 7, ... a size; stops
// at the first fatal failure. Returns the next seed.
template <class Check>
std::uint32_t ForEachProjectionSize(const std::vector<const simd::ProjectionKernel*>& kernels,
                                    std::initializer_list<std::size_t> sizes_m,
                                    std::initializer_list<std::size_t> sizes_n,
                                    std::initializer_list<std::size_t> sizes_k,
                                    const Check& check) {
  std::uint32_t seed = 1;
  for (std::size_t m : sizes_m) {
    for (std::size_t n : sizes_n) {
      for (std::size_t k : sizes_k) {
        if (m * n * k > 150000) continue;
        for (const simd::ProjectionKernel* kernel : kernels) {
          check(*kernel, m, n, k, seed);
          if (::testing::Test::HasFatalFailure()) return seed;
        }
        seed += 3;
      }
    }
  }
  return seed;
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_SIMD_PROJECTION_CHECK_H_
