// Seeded random data and error measures shared by the tests.
#ifndef EDGEATTN_TESTS_TEST_SUPPORT_H_
#define EDGEATTN_TESTS_TEST_SUPPORT_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

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

inline double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::fmax(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

inline double MaxAbs(const std::vector<float>& a) {
  double m = 0.0;
  for (float x : a) m = std::fmax(m, std::fabs(double(x)));
  return m;
}

inline double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0.0, aa = 0.0, bb = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_TEST_SUPPORT_H_
