// Builds a small attention operator from the installed package, runs it and checks it against
// the float reference. Exit code 0 on agreement.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/reference.hpp"

int main() {
  // The installed headers and library carry the same version.
  if (std::strcmp(edgeattn::Version(), EDGEATTN_VERSION_STRING) != 0) {
    std::printf("edgeattn consumer: library %s, headers %s\n", edgeattn::Version(),
                EDGEATTN_VERSION_STRING);
    return 1;
  }
  const std::size_t d = 16, heads = 2, length = 5;
  std::vector<float> in_w(3 * d * d), in_b(3 * d), out_w(d * d), out_b(d), x(length * d);
  for (std::size_t i = 0; i < in_w.size(); ++i) in_w[i] = std::sin(0.37f * i) * 0.25f;
  for (std::size_t i = 0; i < in_b.size(); ++i) in_b[i] = 0.01f * i;
  for (std::size_t i = 0; i < out_w.size(); ++i) out_w[i] = std::cos(0.11f * i) * 0.25f;
  for (std::size_t i = 0; i < out_b.size(); ++i) out_b[i] = -0.02f * i;
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(1.3f * i);
  const edgeattn::WeightsView weights{{in_w.data(), in_w.size()}, {in_b.data(), in_b.size()},
                                      {out_w.data(), out_w.size()}, {out_b.data(), out_b.size()}};
  // Only the zero-length call may throw: an error from the valid calls fails, where a catch
  // around all of them took it for the rejection the last call expects.
  try {
    const edgeattn::MultiheadAttention mha({d, heads}, weights);
    edgeattn::Context context(2);
    std::vector<float> y(x.size()), ref(x.size());
    try {
      mha.Forward(context, {x.data(), 1, length, d}, {y.data(), 1, length, d});
      const edgeattn::ConstTensor tx{x.data(), 1, length, d};
      edgeattn::ReferenceForward({d, heads}, weights, tx, tx, tx, {ref.data(), 1, length, d});
    } catch (const edgeattn::Error& e) {
      std::printf("edgeattn consumer: a valid call failed: %s\n", e.what());
      return 1;
    }
    double max_err = 0.0, max_ref = 0.0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      // Plain comparisons: aarch64 g++ 12 -O3 crashes vectorising fmax reductions.
      const double err = std::fabs(double(y[i]) - ref[i]);
      if (std::isnan(err)) {  // fails the bound below
        max_err = err;
        break;
      }
      if (err > max_err) max_err = err;
      if (std::fabs(ref[i]) > max_ref) max_ref = std::fabs(ref[i]);
    }
    // The tests' bound for a forward pass against the reference: 4 (2 d + L) float roundings of
    // the output's scale.
    const double bound = 4.0 * (2 * d + length) * 0x1p-23 * (1.0 + max_ref);
    std::printf("edgeattn consumer: max abs error vs reference %.3g (bound %.3g)\n", max_err,
                bound);
    if (!(max_err <= bound)) return 1;
    try {
      mha.Forward(context, {x.data(), 1, 0, d}, {y.data(), 1, 0, d});  // must throw
    } catch (const edgeattn::Error& e) {
      std::printf("edgeattn consumer: bad call rejected: %s\n", e.what());
      return 0;
    }
    std::printf("edgeattn consumer: a zero-length call did not throw\n");
    return 1;
  } catch (const edgeattn::Error& e) {
    std::printf("edgeattn consumer: the operator or context failed: %s\n", e.what());
    return 1;
  }
}
