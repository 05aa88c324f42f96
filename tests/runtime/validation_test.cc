// Bad arguments get an edgeattn::Error that names the argument, what was expected and what came.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "tests/expect_error.h"

namespace edgeattn {
namespace {

using testing_support::ExpectError;

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
  // The largest finite floats are weights like any other; infinity is not.
  Weights extreme(8);
  extreme.b_out[0] = std::numeric_limits<float>::max();
  extreme.b_out[1] = -std::numeric_limits<float>::max();
  EXPECT_NO_THROW(MultiheadAttention({8, 2}, extreme.view()));
  extreme.b_out[1] = -std::numeric_limits<float>::infinity();
  ExpectError([&] { MultiheadAttention({8, 2}, extreme.view()); },
              {"out_proj.bias[1]: expected a finite value, got -inf"});
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
  ExpectError([&] { mha.Forward(ctx, q, k, {kv.data(), 1, 7, 8}, o); },
              {"value.batch", "query.batch = 2", "got 2 and 1"});
  ExpectError([&] { mha.Forward(ctx, q, k, k, {out.data(), 1, 5, 8}); },
              {"out", "[2, 5, 8]", "[1, 5, 8]"});
  ExpectError([&] { mha.Forward(ctx, q, k, k, {out.data(), 2, 4, 8}); },
              {"out", "[2, 5, 8]", "[2, 4, 8]"});
  ExpectError([&] { mha.Forward(ctx, q, k, k, {nullptr, 2, 5, 8}); }, {"out.data"});
  ExpectError([&] { mha.Forward(ctx, {x.data(), 2, kMaxSequenceLength + 1, 8}, k, k, o); },
              {"query.length"});
  ExpectError([&] { mha.Forward(ctx, {x.data(), 0, 5, 8}, k, k, o); }, {"query.batch"});
  // An empty array's data pointer may be null: its length is what is wrong.
  ExpectError([&] { mha.Forward(ctx, {nullptr, 2, 0, 8}, k, k, o); }, {"query.length", "got 0"});
  ExpectError([&] { mha.Forward(ctx, q, k, k, {nullptr, 0, 5, 8}); }, {"out.batch", "got 0"});
}

TEST(ValidationTest, OutputsApartFromWhatIsStillBeingRead) {
  const Weights w(8);
  const MultiheadAttention mha({8, 2}, w.view());
  Context ctx(1);
  std::vector<float> x(2 * 5 * 8), out(2 * 5 * 8), weights(2 * 5 * 5 + 50);
  const ConstTensor q{x.data(), 2, 5, 8};
  const Tensor o{out.data(), 2, 5, 8};
  std::vector<std::size_t> lengths = {5, 3};
  ForwardOptions opt;
  opt.need_weights = AttentionWeights::kAveraged;
  opt.attn_weights = {weights.data(), 2 * 5 * 5};
  ExpectError([&] { mha.Forward(ctx, q, {weights.data() + 40, 2, 5, 8}, opt); },
              {"attn_weights: expected a buffer apart from out, got one that overlaps it"});
  ForwardOptions mask_under_weights = opt;
  mask_under_weights.attn_mask = {weights.data() + 49, 25};
  ExpectError([&] { mha.Forward(ctx, q, o, mask_under_weights); },
              {"attn_weights", "apart from attn_mask"});
  ForwardOptions lengths_under_out;
  lengths_under_out.query_lengths = {reinterpret_cast<const std::size_t*>(out.data() + 4), 2};
  std::memcpy(out.data() + 4, lengths.data(), 2 * sizeof(std::size_t));
  ExpectError([&] { mha.Forward(ctx, q, o, lengths_under_out); },
              {"out: expected a buffer apart from query_lengths"});
  ForwardOptions padding_under_weights = opt;
  padding_under_weights.key_padding_mask = {reinterpret_cast<const bool*>(weights.data() + 49), 10};
  ExpectError([&] { mha.Forward(ctx, q, o, padding_under_weights); },
              {"attn_weights", "apart from key_padding_mask"});
  ForwardOptions key_lengths_under_out;
  key_lengths_under_out.key_lengths = lengths_under_out.query_lengths;
  ExpectError([&] { mha.Forward(ctx, q, o, key_lengths_under_out); },
              {"out: expected a buffer apart from key_lengths"});
  // The output may lie over the inputs: they are read before it is first written.
  mha.Forward(ctx, q, {x.data(), 2, 5, 8}, opt);
}

// Overlap is byte-exact: lengths that end inside the output overlap it (all batch * 8 bytes of
// them count), while buffers that only touch are apart.
TEST(ValidationTest, OverlapCountsEveryByteAndNoMore) {
  const Weights w(8);
  const MultiheadAttention mha({8, 2}, w.view());
  Context ctx(1);
  std::vector<float> x(2 * 5 * 8);
  const ConstTensor q{x.data(), 2, 5, 8};
  // lengths [2] at floats 2..5 of the buffer, out from float 4: their second value is under out.
  std::vector<float> buffer(4 + 2 * 5 * 8);
  const std::size_t lengths[] = {5, 3};
  std::memcpy(buffer.data() + 2, lengths, sizeof(lengths));
  ForwardOptions straddling;
  straddling.query_lengths = {reinterpret_cast<const std::size_t*>(buffer.data() + 2), 2};
  ExpectError([&] { mha.Forward(ctx, q, {buffer.data() + 4, 2, 5, 8}, straddling); },
              {"out: expected a buffer apart from query_lengths"});
  // attn_weights [2, 5, 5] directly followed by out.
  std::vector<float> both(2 * 5 * 5 + 2 * 5 * 8);
  ForwardOptions touching;
  touching.need_weights = AttentionWeights::kAveraged;
  touching.attn_weights = {both.data(), 2 * 5 * 5};
  mha.Forward(ctx, q, {both.data() + 2 * 5 * 5, 2, 5, 8}, touching);
  std::vector<float> out(2 * 5 * 8);
  mha.Forward(ctx, q, {out.data(), 2, 5, 8});
  EXPECT_TRUE(std::equal(out.begin(), out.end(), both.begin() + 2 * 5 * 5));
}

TEST(ValidationTest, ThreadCounts) {
  ExpectError([&] { Context ctx(kMaxThreads + 1); },
              {"Context: threads", "[1, 256]", "got 257"});
  ExpectError([&] { Context ctx(static_cast<std::size_t>(-1)); },
              {"Context: threads", "got 18446744073709551615"});
  ExpectError([&] { MakeThreadPoolExecutor(std::size_t{1} << 32); },
              {"MakeThreadPoolExecutor: threads", "got 4294967296"});
#if EDGEATTN_WITH_TBB
  ExpectError([&] { MakeTbbExecutor(100000); }, {"MakeTbbExecutor: threads", "got 100000"});
#endif
  SerialExecutor many(kMaxThreads + 1);
  ExpectError([&] { Context ctx(many); }, {"executor.workers()", "got 257"});
  EXPECT_EQ(Context(kMaxThreads).threads(), kMaxThreads);
}

TEST(ValidationTest, MovedFromOperatorThrows) {
  const Weights w(8);
  MultiheadAttention mha({8, 2}, w.view());
  const MultiheadAttention taken = std::move(mha);
  EXPECT_EQ(taken.config().d_model, 8u);
  Context ctx(1);
  std::vector<float> x(8), y(8);
  // NOLINTNEXTLINE(bugprone-use-after-move): using the moved-from object is the point.
  ExpectError([&] { (void)mha.config(); }, {"MultiheadAttention: moved-from"});
  ExpectError([&] { mha.Forward(ctx, {x.data(), 1, 1, 8}, {y.data(), 1, 1, 8}); },
              {"moved-from"});
  ExpectError([&] { KvCache cache(mha, 4); }, {"moved-from"});
}

// Move assignment leaves its source moved-from, as a move does (a swap would hand the source
// the target's old contents): the target holds what the source held, and the source throws.
TEST(ValidationTest, MoveAssignmentEmptiesTheSource) {
  const Weights w(8);
  MultiheadAttention source({8, 2}, w.view());
  MultiheadAttention target({8, 1}, w.view());
  target = std::move(source);
  EXPECT_EQ(target.config().num_heads, 2u);
  // NOLINTNEXTLINE(bugprone-use-after-move): using the moved-from object is the point.
  ExpectError([&] { (void)source.config(); }, {"MultiheadAttention: moved-from"});
  KvCache cache(target, 4), other_cache(target, 8);
  other_cache = std::move(cache);
  EXPECT_EQ(other_cache.max_length(), 4u);
  // NOLINTNEXTLINE(bugprone-use-after-move): using the moved-from object is the point.
  ExpectError([&] { (void)cache.length(); }, {"KvCache: moved-from"});
  CrossAttentionMemory memory(target, 4), other_memory(target, 8);
  other_memory = std::move(memory);
  EXPECT_EQ(other_memory.max_length(), 4u);
  // NOLINTNEXTLINE(bugprone-use-after-move): using the moved-from object is the point.
  ExpectError([&] { (void)memory.bytes(); }, {"CrossAttentionMemory: moved-from"});
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

namespace edgeattn {
namespace {

TEST(ValidationTest, GroupedQueryConfigAndWeights) {
  const Weights w(8);
  Config c{8, 4};
  c.num_kv_heads = 3;
  ExpectError([&] { MultiheadAttention(c, w.view()); },
              {"num_kv_heads", "divisor of num_heads (4)", "got 3"});
  c.num_kv_heads = 2;  // kv_dim 4
  std::vector<float> q(64), k(32), v(31), kb(4);
  WeightsView sep;
  sep.q_proj_weight = {q.data(), q.size()};
  sep.k_proj_weight = {k.data(), k.size()};
  sep.v_proj_weight = {v.data(), v.size()};
  sep.out_proj_weight = {w.w_out.data(), w.w_out.size()};
  ExpectError([&] { MultiheadAttention(c, sep); }, {"v_proj_weight", "[4, 8]", "got 31"});
  sep.v_proj_weight = {k.data(), k.size()};
  sep.k_proj_bias = {kb.data(), 3};
  ExpectError([&] { MultiheadAttention(c, sep); }, {"k_proj_bias", "[4]", "got 3"});
  sep.in_proj_bias = {w.b_in.data(), w.b_in.size()};
  ExpectError([&] { MultiheadAttention(c, sep); }, {"in_proj_bias", "expected null"});
  sep.in_proj_bias = {};
  sep.k_proj_bias = {};
  sep.in_proj_weight = {w.w_in.data(), w.w_in.size()};
  ExpectError([&] { MultiheadAttention(c, sep); }, {"in_proj_weight", "expected null"});
}

// Every forward option is checked against the call's shape before anything runs.
TEST(ValidationTest, ForwardOptions) {
  const Weights w(8);
  const MultiheadAttention mha({8, 2}, w.view());
  std::vector<float> q(2 * 3 * 8), kv(2 * 5 * 8), out(q.size());
  Context context(1);
  const auto forward = [&](const ForwardOptions& o) {
    mha.Forward(context, {q.data(), 2, 3, 8}, {kv.data(), 2, 5, 8}, {kv.data(), 2, 5, 8},
                {out.data(), 2, 3, 8}, o);
  };
  bool padding[10] = {};
  std::vector<float> mask(2 * 2 * 3 * 5), weights(2 * 2 * 3 * 5);
  const std::size_t lengths[] = {3, 6};
  ForwardOptions o;
  o.key_padding_mask = {padding, 9};
  ExpectError([&] { forward(o); }, {"key_padding_mask", "10 values [batch, Lk]", "got 9"});
  o = {};
  o.key_padding_mask = {nullptr, 10};
  ExpectError([&] { forward(o); }, {"key_padding_mask", "null pointer with size 10"});
  o = {};
  o.attn_mask = {mask.data(), 16};
  ExpectError([&] { forward(o); }, {"attn_mask", "15 floats [Lq = 3, Lk = 5]", "60", "got 16"});
  o = {};
  o.query_lengths = {lengths, 1};
  ExpectError([&] { forward(o); }, {"query_lengths", "2 values [batch]", "got 1"});
  o = {};
  o.key_lengths = {lengths, 2};
  ExpectError([&] { forward(o); }, {"key_lengths[1]", "[0, 5]", "got 6"});
  o = {};
  o.need_weights = AttentionWeights::kPerHead;
  ExpectError([&] { forward(o); }, {"attn_weights", "[batch, num_heads, Lq, Lk]", "null"});
  o.attn_weights = {weights.data(), 30};
  ExpectError([&] { forward(o); }, {"attn_weights", "60 values", "got 30"});
  o.need_weights = AttentionWeights::kAveraged;
  o.attn_weights = {weights.data(), 60};
  ExpectError([&] { forward(o); }, {"attn_weights", "30 values [batch, Lq, Lk]", "got 60"});
  o.need_weights = AttentionWeights::kNone;
  ExpectError([&] { forward(o); }, {"attn_weights", "need_weights is kNone"});
  o.need_weights = static_cast<AttentionWeights>(7);
  ExpectError([&] { forward(o); }, {"need_weights", "got 7"});
  // A refused call writes nothing.
  std::vector<float> untouched(out.size(), 0.0f);
  EXPECT_EQ(out, untouched);
}

// A per-head size of batch * heads * Lq * Lk = 2^16 * 2^8 * 2^20 * 2^20 = 2^64 wraps to 0 in
// size_t: an attn_mask or attn_weights of 0 floats must not match it. Refused before any data
// is read, so the tensors need not be that large.
TEST(ValidationTest, PerHeadSizesDoNotWrap) {
  const std::size_t d = 256;
  const Weights w(d);
  const MultiheadAttention mha({d, d}, w.view());  // 256 heads of 1
  Context ctx(1);
  std::vector<float> data(d);
  const ConstTensor huge{data.data(), kMaxBatch, kMaxSequenceLength, d};
  const Tensor huge_out{data.data(), kMaxBatch, kMaxSequenceLength, d};
  ForwardOptions mask;
  mask.attn_mask = {data.data(), 0};
  ExpectError([&] { mha.Forward(ctx, huge, huge, huge, huge_out, mask); },
              {"attn_mask", "18446744073709551615", "got 0"});
  ForwardOptions weights;
  weights.need_weights = AttentionWeights::kPerHead;
  weights.attn_weights = {data.data(), 0};
  ExpectError([&] { mha.Forward(ctx, huge, huge, huge, huge_out, weights); },
              {"attn_weights", "18446744073709551615", "got 0"});
}

}  // namespace
}  // namespace edgeattn
