// Seeded random data and error measures shared by the tests.
#ifndef EDGEATTN_TESTS_TEST_SUPPORT_H_
#define EDGEATTN_TESTS_TEST_SUPPORT_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/error_metrics.h"

namespace edgeattn {
namespace testing_support {

// Unit roundoff of float32.
inline constexpr double kFloatEps = 1.0 / (1 << 24);

inline std::vector<float> RandomNormal(std::size_t n, std::uint32_t seed, float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The error measures, shared with the CLI's bench (runtime/error_metrics.h).
using edgeattn::Cosine;
using edgeattn::MaxAbs;
using edgeattn::MaxAbsDiff;

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_TEST_SUPPORT_H_
