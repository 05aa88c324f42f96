// Incremental decoding with a KV cache gives what a causal forward call over the whole
// sequence gives, step by step, for any step sizes, batch, precision and head grouping.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/reference.hpp"
#include "tests/expect_error.h"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::BoundScale;
using testing_support::Cosine;
using testing_support::ExpectError;
using testing_support::GqaModel;
using testing_support::kFloatEps;
using testing_support::MaxAbsDiff;
using testing_support::RandomNormal;

// Rows [first, first + n) of each batch item of x [batch, length, d].
std::vector<float> Rows(const std::vector<float>& x, std::size_t batch, std::size_t length,
                        std::size_t d, std::size_t first, std::size_t n) {
  std::vector<float> rows;
  for (std::size_t b = 0; b < batch; ++b) {
    const float* from = x.data() + (b * length + first) * d;
    rows.insert(rows.end(), from, from + n * d);
  }
  return rows;
}

void CheckDecode(std::size_t d, std::size_t heads, std::size_t kv_heads, std::size_t batch,
                 Precision precision, const std::vector<std::size_t>& steps,
                 std::size_t threads = 2) {
  std::size_t length = 0;
  for (std::size_t n : steps) length += n;
  SCOPED_TRACE(::testing::Message()
               << "d=" << d << " heads=" << heads << "/" << kv_heads << " batch=" << batch
               << " length=" << length << " " << (precision == Precision::kInt8 ? "int8" : "fp32")
               << " threads=" << threads);
  const GqaModel model(d, heads, kv_heads, 3 * d + kv_heads);
  const MultiheadAttention mha(model.with(precision), model.view());
  const std::vector<float> x = RandomNormal(batch * length * d, 17 + length);
  const ConstTensor tx{x.data(), batch, length, d};
  // What the steps must reproduce: the causal forward over the whole sequence, by the same
  // operator, and the float reference.
  ForwardOptions causal;
  causal.is_causal = true;
  std::vector<float> full(x.size()), ref(x.size());
  Context context(threads);
  mha.Forward(context, tx, {full.data(), batch, length, d}, causal);
  ReferenceForward(model.config, model.view(), tx, tx, tx, {ref.data(), batch, length, d}, causal);

  KvCache cache(mha, length + 3, batch);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass reuses the cleared cache
    cache.Clear();
    std::size_t first = 0;
    for (std::size_t n : steps) {
      const std::vector<float> in = Rows(x, batch, length, d, first, n);
      std::vector<float> out(in.size());
      mha.Decode(context, {in.data(), batch, n, d}, cache, {out.data(), batch, n, d});
      first += n;
      ASSERT_EQ(cache.length(), first);
      const std::vector<float> want = Rows(full, batch, length, d, first - n, n);
      const std::vector<float> want_ref = Rows(ref, batch, length, d, first - n, n);
      // The step computes every row with the arithmetic of the full call, but its key tiles
      // end elsewhere: equal to a few float roundings.
      ASSERT_LE(MaxAbsDiff(out, want), 64 * kFloatEps * BoundScale(want))
          << "step ending at " << first;
      if (precision == Precision::kFp32) {
        ASSERT_LE(MaxAbsDiff(out, want_ref),
                  4.0 * (2 * d + first) * kFloatEps * BoundScale(want_ref));
      } else {
        ASSERT_GE(Cosine(out, want_ref), 0.999);
      }
    }
  }
}

TEST(KvCacheTest, StepsEqualCausalForward) {
  CheckDecode(48, 6, 6, 1, Precision::kFp32, {1, 1, 5, 64, 1, 200, 1, 17});
  CheckDecode(48, 6, 3, 2, Precision::kFp32, {10, 1, 1, 300, 1});  // GQA, batch 2
  CheckDecode(32, 4, 1, 1, Precision::kFp32, {1, 2, 3, 60, 1});    // multi-query
  CheckDecode(64, 8, 2, 2, Precision::kInt8, {7, 1, 1, 250, 1, 1});
  // One group of 4 query heads over 3 threads: two parts of 2, int8 output rows.
  CheckDecode(32, 4, 1, 1, Precision::kInt8, {3, 1, 1, 40, 1}, 3);
}

// Rolling back positions and decoding others gives what decoding those from the start gives.
TEST(KvCacheTest, TruncateRollsBack) {
  const GqaModel model(32, 4, 2, 8);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomNormal(6 * 32, 3), other = RandomNormal(2 * 32, 4);
  Context context(1);
  KvCache rolled(mha, 8), fresh(mha, 8);
  std::vector<float> out(6 * 32), want(2 * 32), got(2 * 32);
  mha.Decode(context, {x.data(), 1, 6, 32}, rolled, {out.data(), 1, 6, 32});
  rolled.Truncate(4);
  mha.Decode(context, {other.data(), 1, 2, 32}, rolled, {got.data(), 1, 2, 32});
  mha.Decode(context, {x.data(), 1, 4, 32}, fresh, {out.data(), 1, 4, 32});
  mha.Decode(context, {other.data(), 1, 2, 32}, fresh, {want.data(), 1, 2, 32});
  EXPECT_EQ(got, want);
  EXPECT_EQ(rolled.length(), 6u);
}

TEST(KvCacheTest, RejectsOverflowAndMismatch) {
  const GqaModel model(32, 4, 2, 1);
  const MultiheadAttention mha(model.config, model.view());
  KvCache cache(mha, 4);
  EXPECT_EQ(cache.max_length(), 4u);
  EXPECT_GT(cache.bytes(), 0u);
  std::vector<float> x(5 * 32, 0.5f), out(5 * 32);
  Context context(1);
  mha.Decode(context, {x.data(), 1, 3, 32}, cache, {out.data(), 1, 3, 32});
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 1, 2, 32}, cache, {out.data(), 1, 2, 32});
      },
      {"x.length: the cache holds 3 of 4 positions, room for 1, got 2"});
  EXPECT_EQ(cache.length(), 3u);  // a refused step leaves the cache as it was
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 2, 1, 32}, cache, {out.data(), 2, 1, 32});
      },
      {"x.batch: expected the cache's batch 1, got 2"});
  const GqaModel other(32, 4, 4, 1);
  const MultiheadAttention mha4(other.config, other.view());
  ExpectError(
      [&] {
        mha4.Decode(context, {x.data(), 1, 1, 32}, cache, {out.data(), 1, 1, 32});
      },
      {"cache: made for d_model 32, 4 heads, 2 key/value heads"});
  ExpectError([&] { cache.Truncate(4); }, {"length: expected at most the cached length 3, got 4"});
  ExpectError([&] { KvCache c(mha, 0); }, {"max_length: expected a value in [1, "});
  ExpectError([&] { KvCache c(mha, 8, 0); }, {"batch: expected a value in [1, "});
  ExpectError(
      [&] {
        mha.Decode(context, {nullptr, 1, 1, 32}, cache, {out.data(), 1, 1, 32});
      },
      {"x.data: expected a buffer, got null"});
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 1, 1, 32}, cache, {out.data(), 1, 2, 32});
      },
      {"out: expected shape [1, 1, 32] like x, got [1, 2, 32]"});
  KvCache taken = std::move(cache);
  EXPECT_EQ(taken.length(), 3u);
  // NOLINTNEXTLINE(bugprone-use-after-move): using the moved-from object is the point.
  ExpectError([&] { (void)cache.length(); }, {"KvCache: moved-from"});
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 1, 1, 32}, cache, {out.data(), 1, 1, 32});
      },
      {"KvCache: moved-from"});
}

// A cache holds one layer's keys and values: another layer's operator of the same shape is
// refused, as is one whose keys differ in a single weight, a single value bias, or in precision
// (int8 of the same weights); one of the same weights that only attends differently (a softcap,
// Wq and Wo of its own) decodes into it.
TEST(KvCacheTest, AnotherLayerOfTheSameShapeIsRefused) {
  const GqaModel model(32, 4, 2, 1);
  const MultiheadAttention mha(model.config, model.view());
  std::vector<float> x(32, 0.5f), out(32);
  Context context(1);
  KvCache cache(mha, 8);
  mha.Decode(context, {x.data(), 1, 1, 32}, cache, {out.data(), 1, 1, 32});
  const auto refused = [&](const Config& config, const GqaModel& layer) {
    const MultiheadAttention other(config, layer.view());
    ExpectError(
        [&] {
          other.Decode(context, {x.data(), 1, 1, 32}, cache, {out.data(), 1, 1, 32});
        },
        {"cache: made for an operator with other key/value projections (another layer"});
    EXPECT_EQ(cache.length(), 1u);
  };
  refused(model.config, GqaModel(32, 4, 2, 2));
  GqaModel one_weight = model;
  one_weight.wk[9 * 32 + 5] += 1e-3f;  // of 16 x 32: every weight is sampled
  refused(model.config, one_weight);
  GqaModel one_bias = model;
  one_bias.bv[13] = -one_bias.bv[13];
  refused(model.config, one_bias);
  Config int8 = model.config;
  int8.precision = Precision::kInt8;
  refused(int8, model);
  GqaModel same_kv = GqaModel(32, 4, 2, 9);
  same_kv.wk = model.wk;
  same_kv.wv = model.wv;
  same_kv.bk = model.bk;
  same_kv.bv = model.bv;
  Config capped = model.config;
  capped.math.softcap = 30.0f;
  const MultiheadAttention shares(capped, same_kv.view());
  shares.Decode(context, {x.data(), 1, 1, 32}, cache, {out.data(), 1, 1, 32});
  EXPECT_EQ(cache.length(), 2u);
}

// Values are stored at the head's width, not padded to a vector: a narrow head's cache costs
// what its keys and values need.
TEST(KvCacheTest, NarrowHeadsCostTheirWidth) {
  for (std::size_t heads : {4, 16}) {  // head widths 16 and 4
    const GqaModel model(64, heads, heads, 3);
    const MultiheadAttention mha(model.config, model.view());
    const std::size_t positions = 1024;
    const KvCache cache(mha, positions, 2);
    const std::size_t needed = 2 * 2 * positions * 64 * sizeof(float);  // batch x (K and V)
    EXPECT_GE(cache.bytes(), needed) << heads;
    EXPECT_LE(cache.bytes(), needed + 2 * heads * 64 * sizeof(float)) << heads;
  }
}

// The forward pass holds narrow heads at their width too: 16 heads of width 4 take the scratch
// of 4 heads of width 16 (padding each head's row to a vector's 16 floats would take 4x).
TEST(KvCacheTest, NarrowHeadsForwardScratchIsTheirWidth) {
  const std::size_t length = 1024;
  const std::vector<float> x = testing_support::RandomNormal(length * 64, 9);
  std::vector<float> out(x.size());
  std::size_t bytes[2] = {0, 0};
  const std::size_t heads[2] = {4, 16};  // head widths 16 and 4
  for (std::size_t i = 0; i < 2; ++i) {
    const GqaModel model(64, heads[i], heads[i], 5);
    const MultiheadAttention mha(model.config, model.view());
    Context context(1);
    mha.Forward(context, ConstTensor{x.data(), 1, length, 64}, Tensor{out.data(), 1, length, 64});
    bytes[i] = context.workspace_bytes();
  }
  EXPECT_GT(bytes[0], 0u);
  EXPECT_LE(bytes[1], bytes[0] + bytes[0] / 8)
      << "width 4: " << bytes[1] << ", width 16: " << bytes[0];
}

// Every input of the keys and values takes part in the cache's check of its layer, not only
// Wk and the value bias: a key bias, the last value weight, the last byte-pair of a 16-bit Wk,
// the K norm's weights and epsilon, and the rotary base, layout and scaling.
TEST(KvCacheTest, EveryKeyValueInputIsChecked) {
  const GqaModel model(32, 4, 2, 1);
  const std::vector<float> q_norm = RandomNormal(8, 2), k_norm = RandomNormal(8, 3);
  Config base = model.config;
  base.math.qk_norm = true;
  base.math.rotary = RotaryLayout::kHalves;
  std::vector<float> x(32, 0.5f), out(32);
  Context context(1);
  // Whether an operator of (config, layer) decodes into a cache made by one of (made, model).
  const auto shares = [&](const Config& made, const Config& config, const GqaModel& layer,
                          const std::vector<float>& layer_k_norm) {
    WeightsView view = model.view();
    view.q_norm_weight = {q_norm.data(), q_norm.size()};
    view.k_norm_weight = {k_norm.data(), k_norm.size()};
    const MultiheadAttention owner(made, view);
    KvCache cache(owner, 8);
    owner.Decode(context, {x.data(), 1, 1, 32}, cache, {out.data(), 1, 1, 32});
    WeightsView other_view = layer.view();
    other_view.q_norm_weight = {q_norm.data(), q_norm.size()};
    other_view.k_norm_weight = {layer_k_norm.data(), layer_k_norm.size()};
    const MultiheadAttention other(config, other_view);
    try {
      other.Decode(context, {x.data(), 1, 1, 32}, cache, {out.data(), 1, 1, 32});
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("other key/value projections"), std::string::npos)
          << e.what();
      return false;
    }
    return true;
  };
  EXPECT_TRUE(shares(base, base, model, k_norm));
  GqaModel key_bias = model;
  key_bias.bk[15] = -key_bias.bk[15];
  EXPECT_FALSE(shares(base, base, key_bias, k_norm));
  GqaModel value_weight = model;
  value_weight.wv.back() += 1e-3f;
  EXPECT_FALSE(shares(base, base, value_weight, k_norm));
  for (Precision precision : {Precision::kBf16, Precision::kFp16}) {
    Config half = base;
    half.precision = precision;
    GqaModel last_key = model;
    last_key.wk.back() += 0.25f;  // a 16-bit value of its own
    EXPECT_TRUE(shares(half, half, model, k_norm)) << PrecisionName(precision);
    EXPECT_FALSE(shares(half, half, last_key, k_norm)) << PrecisionName(precision);
  }
  std::vector<float> other_k_norm = k_norm;
  other_k_norm[5] += 0.5f;
  EXPECT_FALSE(shares(base, base, model, other_k_norm));
  Config eps = base;
  eps.math.qk_norm_eps = 1e-5f;
  EXPECT_FALSE(shares(base, eps, model, k_norm));
  Config rotary_base = base;
  rotary_base.math.rotary_base = 500000.0f;
  EXPECT_FALSE(shares(base, rotary_base, model, k_norm));
  Config interleaved = base;
  interleaved.math.rotary = RotaryLayout::kInterleaved;
  EXPECT_FALSE(shares(base, interleaved, model, k_norm));
  Config scaled = base;
  scaled.math.rotary_scaling = 2.0f;
  EXPECT_FALSE(shares(base, scaled, model, k_norm));
  Config partial = base;
  partial.math.rotary_dim = 4;
  EXPECT_FALSE(shares(base, partial, model, k_norm));
}

}  // namespace
}  // namespace edgeattn
