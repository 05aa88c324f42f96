// A seeded random attention model with separate q/k/v projections, so that it can have fewer
// key/value heads than query heads (grouped-query attention).
#ifndef EDGEATTN_TESTS_RUNTIME_TEST_MODEL_H_
#define EDGEATTN_TESTS_RUNTIME_TEST_MODEL_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "runtime/benchmark_case.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace testing_support {

struct GqaModel {
  Config config;
  std::vector<float> wq, wk, wv, bq, bk, bv, wo, bo;

  GqaModel(std::size_t d, std::size_t heads, std::size_t kv_heads, std::uint32_t seed)
      : config{d, heads, Precision::kFp32, kDefaultInt8Block, kv_heads} {
    const std::size_t kvd = kv_heads * (d / heads);
    const float sd = 1.0f / std::sqrt(float(d));  // as trained weights: N(0, 1/d)
    wq = RandomNormal(d * d, seed, sd);
    wk = RandomNormal(kvd * d, seed + 1, sd);
    wv = RandomNormal(kvd * d, seed + 2, sd);
    bq = RandomNormal(d, seed + 3, 0.1f);
    bk = RandomNormal(kvd, seed + 4, 0.1f);
    bv = RandomNormal(kvd, seed + 5, 0.1f);
    wo = RandomNormal(d * d, seed + 6, sd);
    bo = RandomNormal(d, seed + 7, 0.1f);
  }

  WeightsView view() const {
    WeightsView w;
    w.q_proj_weight = {wq.data(), wq.size()};
    w.k_proj_weight = {wk.data(), wk.size()};
    w.v_proj_weight = {wv.data(), wv.size()};
    w.q_proj_bias = {bq.data(), bq.size()};
    w.k_proj_bias = {bk.data(), bk.size()};
    w.v_proj_bias = {bv.data(), bv.size()};
    w.out_proj_weight = {wo.data(), wo.size()};
    w.out_proj_bias = {bo.data(), bo.size()};
    return w;
  }

  Config with(Precision precision) const {
    Config c = config;
    c.precision = precision;
    return c;
  }
};

// Self-attention over x [seq, d_model] on a context of `threads` threads.
inline std::vector<float> SelfAttention(const MultiheadAttention& mha, const std::vector<float>& x,
                                        std::size_t seq, std::size_t threads = 1) {
  const std::size_t d = mha.config().d_model;
  std::vector<float> y(x.size());
  Context context(threads);
  mha.Forward(context, {x.data(), 1, seq, d}, {y.data(), 1, seq, d});
  return y;
}

// Trained transformers have a few input channels far larger than the rest and a few output
// channels with larger weights: here 6 input channels x20 and 6 rows of every weight x8.
inline void AddOutliers(RandomModel& model, std::vector<float>& x, std::size_t seq) {
  const std::size_t d = model.config.d_model;
  for (std::size_t r = 0; r < seq; ++r) {
    for (std::size_t c : {3, 50, 100, 150, 200, 250}) x[r * d + c] *= 20.0f;
  }
  for (std::size_t row : {1, 40, 80, 120, 160, 200}) {
    for (std::size_t c = 0; c < d; ++c) {
      for (std::size_t m = 0; m < 3; ++m) model.in_proj_weight[(m * d + row) * d + c] *= 8.0f;
      model.out_proj_weight[row * d + c] *= 8.0f;
    }
  }
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_RUNTIME_TEST_MODEL_H_
