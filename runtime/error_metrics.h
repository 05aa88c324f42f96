// How far a computed output is from a reference one: the measures the tests' bounds and the
// CLI's bench rows report.
#ifndef EDGEATTN_RUNTIME_ERROR_METRICS_H_
#define EDGEATTN_RUNTIME_ERROR_METRICS_H_

#include <cmath>
#include <vector>

namespace edgeattn {

// The loops compare with `>` rather than std::fmax: aarch64 g++ 12 -O3 crashes vectorising
// fmax reductions. Both skip NaN differences; Cosine turns NaN.
inline double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - b[i]);
    if (d > m) m = d;
  }
  return m;
}

inline double MaxAbs(const std::vector<float>& a) {
  double m = 0.0;
  for (float x : a) {
    if (std::fabs(double(x)) > m) m = std::fabs(double(x));
  }
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

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_ERROR_METRICS_H_
