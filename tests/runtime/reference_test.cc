// The float reference against cases worked out by hand.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/reference.hpp"

namespace edgeattn {
namespace {

std::vector<float> RunReference(std::size_t d, std::size_t heads, const std::vector<float>& w_in,
                                const std::vector<float>& b_in, const std::vector<float>& w_out,
                                const std::vector<float>& b_out, const std::vector<float>& q,
                                const std::vector<float>& kv, std::size_t lq, std::size_t lk) {
  std::vector<float> out(lq * d);
  ReferenceForward({d, heads}, {{w_in.data(), w_in.size()}, {b_in.data(), b_in.size()},
                                {w_out.data(), w_out.size()}, {b_out.data(), b_out.size()}},
                   {q.data(), 1, lq, d}, {kv.data(), 1, lk, d}, {kv.data(), 1, lk, d},
                   {out.data(), 1, lq, d});
  return out;
}

// Identity projections, one head: out = softmax(X X^T / sqrt(2)) X + bo.
TEST(ReferenceTest, IdentityWeightsOneHead) {
  const std::vector<float> eye3 = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1};  // three 2x2 identities
  const std::vector<float> x = {1, 0, 0, 1};
  const std::vector<float> out =
      RunReference(2, 1, eye3, {0, 0, 0, 0, 0, 0}, {1, 0, 0, 1}, {0.5f, -0.5f}, x, x, 2, 2);
  // Row 0 scores: [1/sqrt2, 0] -> weights [a, 1-a], a = 1 / (1 + exp(-1/sqrt2)).
  const double a = 1.0 / (1.0 + std::exp(-1.0 / std::sqrt(2.0)));
  EXPECT_NEAR(out[0], a + 0.5, 1e-6);
  EXPECT_NEAR(out[1], 1 - a - 0.5, 1e-6);
  EXPECT_NEAR(out[2], 1 - a + 0.5, 1e-6);
  EXPECT_NEAR(out[3], a - 0.5, 1e-6);
}

// One key: softmax is 1, so out = Wo (Wv x_k + bv) + bo whatever the query.
TEST(ReferenceTest, SingleKeyIsValueProjection) {
  const std::vector<float> w_in = {9, 9, 9, 9,  // Wq: irrelevant
                                   7, 7, 7, 7,  // Wk: irrelevant
                                   1, 2, 3, 4}; // Wv
  const std::vector<float> b_in = {0, 0, 0, 0, 10, 20};
  const std::vector<float> out = RunReference(2, 2, w_in, b_in, {1, 1, 0, 2}, {1, 0},
                                              {5, -5}, {1, -1}, 1, 1);
  // v = Wv [1, -1] + bv = [1 - 2 + 10, 3 - 4 + 20] = [9, 19]; out = [9 + 19 + 1, 38].
  EXPECT_NEAR(out[0], 29.0, 1e-5);
  EXPECT_NEAR(out[1], 38.0, 1e-5);
}

// Two heads of width 1 attend separately: head 0 sees column 0, head 1 column 1.
TEST(ReferenceTest, HeadsAreIndependent) {
  const std::vector<float> eye3 = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1};
  const std::vector<float> q = {1, 2};
  const std::vector<float> kv = {0, 1, 3, 0};  // keys/values: [0, 1] and [3, 0]
  const std::vector<float> out =
      RunReference(2, 2, eye3, {0, 0, 0, 0, 0, 0}, {1, 0, 0, 1}, {0, 0}, q, kv, 1, 2);
  // Head 0 (dk = 1, scale 1): scores q0*k = [0, 3] -> weights softmax([0, 3]) on values [0, 3].
  const double w3 = std::exp(3.0) / (1 + std::exp(3.0));
  EXPECT_NEAR(out[0], 3 * w3, 1e-6);
  // Head 1: scores [2, 0] on values [1, 0].
  const double w2 = std::exp(2.0) / (1 + std::exp(2.0));
  EXPECT_NEAR(out[1], w2, 1e-6);
}

// A NaN in a query row makes that row NaN, as in Forward (not the bias of a row whose every key
// is masked); the other row is untouched.
TEST(ReferenceTest, NanQueryRowIsNan) {
  const std::vector<float> eye3 = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1};
  const std::vector<float> kv = {0, 1, 3, 0};
  const std::vector<float> clean =
      RunReference(2, 1, eye3, {0, 0, 0, 0, 0, 0}, {1, 0, 0, 1}, {0.5f, -0.5f}, {1, 2, 3, 4}, kv,
                   2, 2);
  const std::vector<float> out = RunReference(2, 1, eye3, {0, 0, 0, 0, 0, 0}, {1, 0, 0, 1},
                                              {0.5f, -0.5f}, {1, 2, NAN, 4}, kv, 2, 2);
  EXPECT_EQ(out[0], clean[0]);
  EXPECT_EQ(out[1], clean[1]);
  EXPECT_TRUE(std::isnan(out[2]) && std::isnan(out[3])) << out[2] << " " << out[3];
}

}  // namespace
}  // namespace edgeattn
