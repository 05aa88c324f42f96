// The fast fp32 forward pass against the float reference on many shapes.
#include <cmath>
#include <algorithm>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/reference.hpp"
#include "runtime/benchmark_case.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::BoundScale;
using testing_support::Cosine;
using testing_support::kFloatEps;
using testing_support::MaxAbsDiff;
using testing_support::RandomNormal;

struct Case {
  std::size_t d, h, batch, lq, lk;
};

void CheckAgainstReference(const Case& c, std::uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "d=" << c.d << " h=" << c.h << " B=" << c.batch
                                    << " Lq=" << c.lq << " Lk=" << c.lk);
  const RandomModel model(c.d, c.h, seed);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> q = RandomNormal(c.batch * c.lq * c.d, seed + 10);
  const std::vector<float> k = RandomNormal(c.batch * c.lk * c.d, seed + 11);
  const std::vector<float> v = RandomNormal(c.batch * c.lk * c.d, seed + 12);
  std::vector<float> ref(q.size()), out(q.size());
  const ConstTensor tq{q.data(), c.batch, c.lq, c.d};
  const ConstTensor tk{k.data(), c.batch, c.lk, c.d};
  const ConstTensor tv{v.data(), c.batch, c.lk, c.d};
  ReferenceForward(model.config, model.view(), tq, tk, tv, {ref.data(), c.batch, c.lq, c.d});
  Context context(1);
  mha.Forward(context, tq, tk, tv, {out.data(), c.batch, c.lq, c.d});
  // Each output is two chained d-term projections around a softmax-weighted sum of lk values;
  // float rounding grows at most linearly with d and lk (usually with their square roots).
  const double tol = 4.0 * (2 * c.d + c.lk) * kFloatEps * BoundScale(ref);
  EXPECT_LE(MaxAbsDiff(out, ref), tol);
  EXPECT_GE(Cosine(out, ref), 0.99999);

  // Thread count changes nothing, bit for bit.
  for (std::size_t threads : {2, 3, 7}) {
    SerialExecutor executor(threads);
    Context many(executor);
    std::vector<float> again(q.size());
    mha.Forward(many, tq, tk, tv, {again.data(), c.batch, c.lq, c.d});
    EXPECT_EQ(0, std::memcmp(again.data(), out.data(), out.size() * sizeof(float)))
        << threads << " workers";
  }
}

TEST(MhaForwardTest, MatchesReferenceOnOddAndContractShapes) {
  const Case cases[] = {
      {8, 1, 1, 1, 1},      {8, 2, 1, 3, 5},     {12, 3, 2, 17, 4},   {16, 16, 1, 9, 33},
      {20, 4, 1, 65, 65},   {24, 6, 3, 2, 129},  {40, 5, 1, 31, 257}, {64, 4, 1, 64, 64},
      {96, 12, 2, 7, 300},  {100, 10, 1, 50, 3}, {128, 8, 1, 300, 17}, {256, 4, 1, 64, 64},
      {384, 12, 1, 128, 128}, {1024, 16, 1, 5, 9}, {768, 12, 1, 20, 70},
  };
  std::uint32_t seed = 1;
  for (const Case& c : cases) {
    CheckAgainstReference(c, seed);
    seed += 100;
  }
}

TEST(MhaForwardTest, SelfAttentionAndInPlaceOutput) {
  const RandomModel model(32, 4, 5);
  const MultiheadAttention mha(model.config, model.view());
  std::vector<float> x = RandomNormal(2 * 11 * 32, 6);
  std::vector<float> ref(x.size());
  const ConstTensor tx{x.data(), 2, 11, 32};
  ReferenceForward(model.config, model.view(), tx, tx, tx, {ref.data(), 2, 11, 32});
  Context context(2);
  std::vector<float> out(x.size());
  mha.Forward(context, tx, {out.data(), 2, 11, 32});
  EXPECT_LE(MaxAbsDiff(out, ref), 1e-5);
  // The output may overwrite the input: all reads of x happen before the first write.
  mha.Forward(context, tx, {x.data(), 2, 11, 32});
  EXPECT_EQ(0, std::memcmp(x.data(), out.data(), out.size() * sizeof(float)));
}

TEST(MhaForwardTest, NoBiasMatchesZeroBias) {
  RandomModel model(16, 2, 9);
  WeightsView no_bias = model.view();
  no_bias.in_proj_bias = {};
  no_bias.out_proj_bias = {};
  const MultiheadAttention without(model.config, no_bias);
  std::fill(model.in_proj_bias.begin(), model.in_proj_bias.end(), 0.0f);
  std::fill(model.out_proj_bias.begin(), model.out_proj_bias.end(), 0.0f);
  const MultiheadAttention zeros(model.config, model.view());
  const std::vector<float> x = RandomNormal(5 * 16, 10);
  std::vector<float> a(x.size()), b(x.size());
  Context context(1);
  without.Forward(context, {x.data(), 1, 5, 16}, {a.data(), 1, 5, 16});
  zeros.Forward(context, {x.data(), 1, 5, 16}, {b.data(), 1, 5, 16});
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace edgeattn
