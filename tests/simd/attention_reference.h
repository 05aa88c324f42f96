// The reference row of the attention-core tests and the check of a kernel's row against it:
// softmax of double-precision scores (with masks and an attention sink) times the values, within
// bounds each test derives from its kernel's roundings.
#ifndef EDGEATTN_TESTS_SIMD_ATTENTION_REFERENCE_H_
#define EDGEATTN_TESTS_SIMD_ATTENTION_REFERENCE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace edgeattn {
namespace testing_support {

// One query row of a reference: p_j = exp(s_j - max) (0 for masked keys), their sum with the
// sink's term (0: nothing visible, not even a sink), and the bound of the scores' errors.
struct ReferenceRow {
  std::vector<double> p;
  double sum = 0.0;
  double score_err = 0.0;
};

// Turns row.p from scores (-inf: masked) into p_j and sets row.sum; sink in the scores' units
// (-inf: none), base2: the scores are base-2 logits.
inline void Exponentiate(ReferenceRow& row, double sink, bool base2) {
  double max = sink;
  for (double s : row.p) max = std::max(max, s);
  if (max == -HUGE_VAL) {
    std::fill(row.p.begin(), row.p.end(), 0.0);
    row.sum = 0.0;
    return;
  }
  const auto exp = [base2](double x) { return base2 ? std::exp2(x) : std::exp(x); };
  row.sum = sink == -HUGE_VAL ? 0.0 : exp(sink - max);
  for (double& x : row.p) row.sum += (x = exp(x - max));
}

// How far a kernel's row may be from the reference.
struct RowBounds {
  double p_err;             // outputs: relative error of each term p_j v_j, the sums' included
  double value_tiny = 0.0;  // outputs: absolute error per visible value (steps below a format's
                            // normal range)
  double out_abs = 0.0;     // outputs: absolute (a format's rounding of the probabilities)
  double weight_rel;        // weights: relative
  double weight_abs;        // weights: absolute
};

// A kernel's row: ld outputs (dk results, then columns it must not write, left at -3) and, when
// weights is not null, ldw weights (lk results, then -3).
struct KernelRow {
  const float* out;
  std::size_t ld, dk;
  const float* weights;
  std::size_t ldw, lk;
};

// Checks the row against p_j / sum and sum_j p_j v[j ldv + c] / sum (v: the lk values as the
// reference takes them, float or double); a fully masked row is exactly zero. where(): what to
// print on a failure.
template <class V, class Where>
void CheckRow(const KernelRow& got, const ReferenceRow& m, const RowBounds& b, const V* v,
              std::size_t ldv, const Where& where) {
  for (std::size_t c = 0; c < got.ld; ++c) {
    if (c >= got.dk) {
      ASSERT_EQ(got.out[c], -3.0f) << "wrote outside the head's columns";
      continue;
    }
    if (m.sum == 0.0) {
      ASSERT_EQ(got.out[c], 0.0f) << "fully masked row; " << where();
      continue;
    }
    double want = 0.0, abs_want = 0.0, abs_values = 0.0;
    for (std::size_t j = 0; j < got.lk; ++j) {
      const double x = v[j * ldv + c];
      want += m.p[j] * x;
      abs_want += m.p[j] * std::fabs(x);
    }
    for (std::size_t j = 0; b.value_tiny != 0.0 && j < got.lk; ++j) {
      if (m.p[j] != 0.0) abs_values += std::fabs(double(v[j * ldv + c]));
    }
    const double tol =
        2.0 * abs_want / m.sum * b.p_err + 2.0 * b.value_tiny * abs_values / m.sum +
        2.0 * b.out_abs + 1e-30;
    ASSERT_NEAR(got.out[c], want / m.sum, tol) << where() << " col " << c;
  }
  if (got.weights == nullptr) return;
  for (std::size_t j = 0; j < got.ldw; ++j) {
    if (j >= got.lk) {
      ASSERT_EQ(got.weights[j], -3.0f) << "wrote outside the row's weights";
    } else if (m.sum == 0.0) {
      ASSERT_EQ(got.weights[j], 0.0f) << "fully masked row; " << where();
    } else {
      const double want = m.p[j] / m.sum;
      ASSERT_NEAR(got.weights[j], want, b.weight_rel * want + b.weight_abs)
          << where() << " weight " << j;
    }
  }
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_SIMD_ATTENTION_REFERENCE_H_
