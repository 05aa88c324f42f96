// Bad arguments get an edgeattn::Error that names the argument, what was expected and what came.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace {

// Runs fn, expects an edgeattn::Error whose message contains every fragment.
template <class Fn>
void ExpectError(const Fn& fn, std::initializer_list<const char*> fragments) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    for (const char* f : fragments) {
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "message '" << e.what() << "' lacks '" << f << "'";
    }
  }
}

struct Weights {
  std::size_t d;
  std::vector<float> w_in, b_in, w_out, b_out;
  explicit Weights(std::size_t d_)
      : d(d_), w_in(3 * d * d, 0.01f), b_in(3 * d), w_out(d * d, 0.01f), b_out(d) {}
  WeightsView view() const {
    return {{w_in.data(), w_in.size()}, {b_in.data(), b_in.size()}, {w_out.data(), w_out.size()},
            {b_out.data(), b_out.size()}};
  }
};

TEST(ValidationTest, Config) {
  const Weights w(10);
  ExpectError([&] { MultiheadAttention({10, 3}, w.view()); },
              {"d_model", "multiple of num_heads (3)", "got 10"});
  ExpectError([&] { MultiheadAttention({10, 0}, w.view()); }, {"num_heads", "got 0"});
  ExpectError([&] { MultiheadAttention({0, 1}, w.view()); }, {"d_model", "got 0"});
  ExpectError([&] { MultiheadAttention({10, 20}, w.view()); }, {"num_heads", "[1, 10]", "got 20"});
  ExpectError([&] { MultiheadAttention({kMaxModelDim + 1, 1}, w.view()); }, {"d_model"});
}

TEST(ValidationTest, Weights) {
  const Weights w(8);
  WeightsView v = w.view();
  v.in_proj_weight.data = nullptr;
  ExpectError([&] { MultiheadAttention({8, 2}, v); }, {"in_proj_weight", "[24, 8]", "null"});
  v = w.view();
  v.in_proj_weight.size = 100;
  ExpectError([&] { MultiheadAttention({8, 2}, v); }, {"in_proj_weight", "192", "got 100"});
  v = w.view();
  v.out_proj_weight.size = 63;
  ExpectError([&] { MultiheadAttention({8, 2}, v); }, {"out_proj.weight", "[8, 8]", "got 63"});
  v = w.view();
  v.in_proj_bias.size = 8;
  ExpectError([&] { MultiheadAttention({8, 2}, v); }, {"in_proj_bias", "[24]", "got 8"});
  v = w.view();
  v.out_proj_bias.size = 9;
  ExpectError([&] { MultiheadAttention({8, 2}, v); }, {"out_proj.bias", "got 9"});
}

TEST(ValidationTest, ForwardShapes) {
  const Weights w(8);
  const MultiheadAttention mha({8, 2}, w.view());
  Context ctx(1);
  std::vector<float> x(2 * 5 * 8), kv(2 * 7 * 8), out(2 * 5 * 8);
  const ConstTensor q{x.data(), 2, 5, 8};
  const ConstTensor k{kv.data(), 2, 7, 8};
  const Tensor o{out.data(), 2, 5, 8};
  ExpectError([&] { mha.Forward(ctx, {nullptr, 2, 5, 8}, k, k, o); }, {"query.data", "null"});
  ExpectError([&] { mha.Forward(ctx, {x.data(), 2, 0, 8}, k, k, o); },
              {"query.length", "got 0"});
  ExpectError([&] { mha.Forward(ctx, {x.data(), 2, 5, 6}, k, k, o); },
              {"query.features", "d_model = 8", "got 6"});
  ExpectError([&] { mha.Forward(ctx, q, {kv.data(), 1, 7, 8}, k, o); },
              {"key.batch", "query.batch = 2", "got 1"});
  ExpectError([&] { mha.Forward(ctx, q, k, {kv.data(), 2, 6, 8}, o); },
              {"value.length", "key.length = 7", "got 6"});
  ExpectError([&] { mha.Forward(ctx, q, k, k, {out.data(), 2, 4, 8}); },
              {"out", "[2, 5, 8]", "[2, 4, 8]"});
  ExpectError([&] { mha.Forward(ctx, q, k, k, {nullptr, 2, 5, 8}); }, {"out.data"});
  ExpectError([&] { mha.Forward(ctx, {x.data(), 2, kMaxSequenceLength + 1, 8}, k, k, o); },
              {"query.length"});
  ExpectError([&] { mha.Forward(ctx, {x.data(), 0, 5, 8}, k, k, o); }, {"query.batch"});
}

TEST(ValidationTest, NonFiniteInputPoisonsOnlyItsRows) {
  const Weights w(8);
  const MultiheadAttention mha({8, 2}, w.view());
  Context ctx(1);
  std::vector<float> q(3 * 8, 0.5f), kv(4 * 8, 0.25f), out(3 * 8);
  q[8 + 3] = std::nanf("");  // query row 1
  mha.Forward(ctx, {q.data(), 1, 3, 8}, {kv.data(), 1, 4, 8}, {kv.data(), 1, 4, 8},
              {out.data(), 1, 3, 8});
  for (std::size_t c = 0; c < 8; ++c) {
    EXPECT_TRUE(std::isfinite(out[c]));
    EXPECT_TRUE(std::isnan(out[8 + c]));
    EXPECT_TRUE(std::isfinite(out[16 + c]));
  }
}

TEST(ValidationTest, ExecutorWithNoWorkers) {
  SerialExecutor none(1);
  struct Empty final : Executor {
    std::size_t workers() const override { return 0; }
    void RunWorkers(WorkerFn) override {}
  } empty;
  ExpectError([&] { Context ctx(empty); }, {"workers", "got 0"});
  EXPECT_EQ(Context(none).threads(), 1u);
}

}  // namespace
}  // namespace edgeattn
