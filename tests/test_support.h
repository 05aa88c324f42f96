// Seeded random data and error measures shared by the tests.
#ifndef EDGEATTN_TESTS_TEST_SUPPORT_H_
#define EDGEATTN_TESTS_TEST_SUPPORT_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/error_metrics.h"

namespace edgeattn {
namespace testing_support {

// Unit roundoff of float32.
inline constexpr double kFloatEps = 1.0 / (1 << 24);

// Seeded random numbers that are the same with every standard library: the std:: distributions
// are implementation-defined, so libstdc++ and libc++ (Android, Apple) would draw different test
// data from one seed. SplitMix64, and Box-Muller for normal deviates.
class TestRandom {
 public:
  explicit TestRandom(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1], from the top 53 bits.
  double Uniform() { return static_cast<double>((Next() >> 11) + 1) * 0x1.0p-53; }
  // Standard normal.
  double Normal() {
    const double radius = std::sqrt(-2.0 * std::log(Uniform()));
    return radius * std::cos(6.283185307179586 * Uniform());
  }

 private:
  std::uint64_t state_;
};

// Whether Linux lists the CPU flag in /proc/cpuinfo (it lists AMX only where it saves tile
// state): a source independent of the kernels' own CPUID checks. False elsewhere.
inline bool CpuInfoHasFlag(const std::string& flag) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) return (line + " ").find(" " + flag + " ") != std::string::npos;
  }
  return false;
}

inline std::vector<float> RandomNormal(std::size_t n, std::uint32_t seed, float stddev = 1.0f) {
  TestRandom rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.Normal() * stddev);
  return v;
}

// The error measures, shared with the CLI's bench (runtime/error_metrics.h).
using edgeattn::Cosine;
using edgeattn::MaxAbs;
using edgeattn::MaxAbsDiff;

// The scale of a bound on MaxAbsDiff(out, want): 1 + MaxAbs(want), or NaN where want holds an
// infinity, which would make the bound infinite and pass any output (inf <= inf).
inline double BoundScale(const std::vector<float>& want) {
  const double m = MaxAbs(want);
  return std::isinf(m) ? std::nan("") : 1.0 + m;
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_TEST_SUPPORT_H_
