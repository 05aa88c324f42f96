// What the attention-step tests share: a grouped-query model with the learned parts of the step
// (sinks, Q/K norm weights), and rows of a sequence.
#ifndef EDGEATTN_TESTS_RUNTIME_MATH_MODEL_H_
#define EDGEATTN_TESTS_RUNTIME_MATH_MODEL_H_

#include <cstddef>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace testing_support {

// A grouped-query model with the learned parts of the attention step.
struct MathModel {
  GqaModel base;
  std::vector<float> sinks, q_norm, k_norm;
  bool with_sinks;

  MathModel(const AttentionMath& math, bool sinks_on, std::size_t d = 64, std::size_t heads = 4)
      : base(d, heads, heads / 2, 41), with_sinks(sinks_on) {
    base.config.math = math;
    sinks = RandomNormal(heads, 5, 2.0f);
    q_norm = RandomNormal(d / heads, 6, 0.3f);
    k_norm = RandomNormal(d / heads, 7, 0.3f);
    for (float& w : q_norm) w += 1.0f;
    for (float& w : k_norm) w += 1.0f;
  }
  WeightsView view() const {
    WeightsView w = base.view();
    if (with_sinks) w.sinks = {sinks.data(), sinks.size()};
    if (base.config.math.qk_norm) {
      w.q_norm_weight = {q_norm.data(), q_norm.size()};
      w.k_norm_weight = {k_norm.data(), k_norm.size()};
    }
    return w;
  }
  Config config(Precision precision) const { return base.with(precision); }
};

// Rows of x [length, d] from `first`.
std::vector<float> Rows(const std::vector<float>& x, std::size_t d, std::size_t first,
                        std::size_t n) {
  return std::vector<float>(x.begin() + first * d, x.begin() + (first + n) * d);
}

// The causal forward over x [batch, length, d] on two threads: what decode steps reproduce.
inline std::vector<float> CausalForward(const MultiheadAttention& mha, const std::vector<float>& x,
                                        std::size_t batch, std::size_t length, std::size_t d) {
  ForwardOptions causal;
  causal.is_causal = true;
  std::vector<float> full(x.size());
  Context context(2);
  mha.Forward(context, {x.data(), batch, length, d}, {full.data(), batch, length, d}, causal);
  return full;
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_RUNTIME_MATH_MODEL_H_
