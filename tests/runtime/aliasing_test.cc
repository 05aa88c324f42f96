// Inputs that alias each other (the same buffer as query, key and value, prefix views, batch
// views into one buffer, out over the query) must give bit for bit what the same call gives on
// separate copies of every input, in fp32 and int8, with a fresh and with a reused context.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::GqaModel;
using testing_support::RandomNormal;

constexpr std::size_t kD = 48;
constexpr std::size_t kHeads = 4;

// One forward call described by offsets into a shared buffer (in rows of kD floats).
struct AliasCase {
  const char* name;
  std::size_t batch, lq, lk;
  std::size_t q_at, k_at, v_at;  // row offsets into the buffer
  std::vector<std::size_t> query_lengths, key_lengths;  // empty: none
};

ForwardOptions Lengths(const AliasCase& c) {
  ForwardOptions o;
  if (!c.query_lengths.empty()) o.query_lengths = {c.query_lengths.data(), c.batch};
  if (!c.key_lengths.empty()) o.key_lengths = {c.key_lengths.data(), c.batch};
  return o;
}

// The call on views into one buffer.
std::vector<float> Aliased(const MultiheadAttention& mha, Context& context, const AliasCase& c,
                           const std::vector<float>& buffer) {
  std::vector<float> out(c.batch * c.lq * kD);
  const float* base = buffer.data();
  mha.Forward(context, {base + c.q_at * kD, c.batch, c.lq, kD},
              {base + c.k_at * kD, c.batch, c.lk, kD}, {base + c.v_at * kD, c.batch, c.lk, kD},
              {out.data(), c.batch, c.lq, kD}, Lengths(c));
  return out;
}

// The same call on a copy of each input.
std::vector<float> Copied(const MultiheadAttention& mha, Context& context, const AliasCase& c,
                          const std::vector<float>& buffer) {
  const auto copy = [&](std::size_t at, std::size_t rows) {
    return std::vector<float>(buffer.begin() + at * kD, buffer.begin() + (at + rows) * kD);
  };
  const std::vector<float> q = copy(c.q_at, c.batch * c.lq);
  const std::vector<float> k = copy(c.k_at, c.batch * c.lk);
  const std::vector<float> v = copy(c.v_at, c.batch * c.lk);
  std::vector<float> out(c.batch * c.lq * kD);
  mha.Forward(context, {q.data(), c.batch, c.lq, kD}, {k.data(), c.batch, c.lk, kD},
              {v.data(), c.batch, c.lk, kD}, {out.data(), c.batch, c.lq, kD}, Lengths(c));
  return out;
}

const std::vector<AliasCase>& Cases() {
  static const std::vector<AliasCase> kCases = {
      {"self, query lengths shorter than key lengths", 1, 100, 100, 0, 0, 0, {3}, {100}},
      {"self, key lengths shorter than query lengths", 1, 100, 100, 0, 0, 0, {100}, {7}},
      {"self, equal lengths in separate arrays", 2, 40, 40, 0, 0, 0, {17, 40}, {17, 40}},
      {"query a prefix view of key and value", 1, 10, 100, 0, 0, 0, {}, {}},
      {"batch views into one buffer", 2, 10, 100, 0, 0, 0, {}, {}},
      {"batch views with lengths", 2, 10, 100, 0, 0, 0, {4, 10}, {60, 9}},
      {"key = value, query elsewhere", 2, 33, 21, 0, 70, 70, {}, {}},
      {"value = query, key elsewhere", 1, 30, 30, 0, 40, 0, {}, {}},
      {"key = query, value elsewhere", 1, 30, 30, 0, 0, 40, {}, {}},
      {"key and value overlapping one row apart", 2, 16, 50, 0, 5, 6, {}, {}},
  };
  return kCases;
}

class AliasingTest : public ::testing::TestWithParam<Precision> {};

TEST_P(AliasingTest, ViewsMatchSeparateCopiesBitForBit) {
  for (std::size_t kv_heads : {kHeads, std::size_t{2}}) {
    const GqaModel model(kD, kHeads, kv_heads, 11);
    const MultiheadAttention mha(model.with(GetParam()), model.view());
    Context reused(2);
    for (const AliasCase& c : Cases()) {
      const std::vector<float> buffer = RandomNormal(250 * kD, 5);
      Context fresh(2);
      const std::vector<float> want = Copied(mha, fresh, c, buffer);
      EXPECT_EQ(Aliased(mha, fresh, c, buffer), want) << c.name << ", kv heads " << kv_heads;
      // A context that has served larger calls keeps stale rows in its workspace.
      (void)Aliased(mha, reused, Cases()[0], buffer);
      EXPECT_EQ(Aliased(mha, reused, c, buffer), want) << c.name << " (reused context)";
    }
  }
}

TEST_P(AliasingTest, OutputOverTheQueryMatchesSeparateOutput) {
  const GqaModel model(kD, kHeads, kHeads, 12);
  const MultiheadAttention mha(model.with(GetParam()), model.view());
  Context context(2);
  for (std::size_t batch : {1, 3}) {
    std::vector<float> x = RandomNormal(batch * 37 * kD, 6);
    std::vector<float> y(x.size());
    mha.Forward(context, {x.data(), batch, 37, kD}, {y.data(), batch, 37, kD});
    mha.Forward(context, {x.data(), batch, 37, kD}, {x.data(), batch, 37, kD});
    EXPECT_EQ(x, y) << "batch " << batch;
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, AliasingTest,
                         ::testing::Values(Precision::kFp32, Precision::kInt8),
                         [](const auto& info) {
                           return info.param == Precision::kFp32 ? "Fp32" : "Int8";
                         });

}  // namespace
}  // namespace edgeattn
