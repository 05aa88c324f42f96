// How far a computed output is from a reference one: the measures the tests' bounds and the
// CLI's bench rows report.
#ifndef EDGEATTN_RUNTIME_ERROR_METRICS_H_
#define EDGEATTN_RUNTIME_ERROR_METRICS_H_

#include <cmath>
#include <vector>

namespace edgeattn {

// The loops compare with `>` rather than std::fmax: aarch64 g++ 12 -O3 crashes vectorising
// fmax reductions.

// The largest |a_i - b_i| (0 where both are the same infinity), or NaN where either holds a NaN
// or their sizes differ, so that no bound passes an output that went NaN or came short.
inline double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::nan("");
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;  // equal infinities included
    const double d = std::fabs(double(a[i]) - b[i]);
    if (std::isnan(d)) return d;
    if (d > m) m = d;
  }
  return m;
}

// The largest |a_i|, NaN skipped (a bound's scale; the difference above sees the NaN).
inline double MaxAbs(const std::vector<float>& a) {
  double m = 0.0;
  for (float x : a) {
    if (std::fabs(double(x)) > m) m = std::fabs(double(x));
  }
  return m;
}

// NaN when either holds a NaN or their sizes differ.
inline double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::nan("");
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
