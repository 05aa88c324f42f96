// Masks, padded batches, attention weights and grouped-query heads on the fast paths (fp32 and
// int8 projections, every K/V format, several thread counts) against the float reference.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/reference.hpp"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::BoundScale;
using testing_support::Cosine;
using testing_support::GqaModel;
using testing_support::kFloatEps;
using testing_support::MaxAbsDiff;
using testing_support::RandomNormal;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Inputs {
  std::size_t batch, lq, lk, d;
  std::vector<float> q, k, v;
  Inputs(std::size_t batch_, std::size_t lq_, std::size_t lk_, std::size_t d_,
         std::uint32_t seed)
      : batch(batch_), lq(lq_), lk(lk_), d(d_) {
    q = RandomNormal(batch * lq * d, seed);
    k = RandomNormal(batch * lk * d, seed + 1);
    v = RandomNormal(batch * lk * d, seed + 2);
  }
  ConstTensor tq() const { return {q.data(), batch, lq, d}; }
  ConstTensor tk() const { return {k.data(), batch, lk, d}; }
  ConstTensor tv() const { return {v.data(), batch, lk, d}; }
};

// The options a test case turns on, with the arrays they point to.
struct Variant {
  const char* name;
  bool causal = false, key_padding = false, mask = false, mask_per_head = false,
       lengths = false;
  AttentionWeights weights = AttentionWeights::kNone;
};

struct OptionArrays {
  std::unique_ptr<bool[]> key_padding;
  std::vector<float> mask, weights;
  std::vector<std::size_t> query_lengths, key_lengths;
  ForwardOptions options;

  OptionArrays(const Variant& v, const Inputs& in, std::size_t heads, std::uint32_t seed) {
    options.is_causal = v.causal;
    if (v.key_padding) {
      // Random padding; batch item 1 has every key masked.
      key_padding.reset(new bool[in.batch * in.lk]);
      const std::vector<float> r = RandomNormal(in.batch * in.lk, seed);
      for (std::size_t i = 0; i < in.batch * in.lk; ++i) {
        key_padding[i] = r[i] > 0.5f || i / in.lk == 1;
      }
      options.key_padding_mask = {key_padding.get(), in.batch * in.lk};
    }
    if (v.mask) {
      const std::size_t n = (v.mask_per_head ? in.batch * heads : 1) * in.lq * in.lk;
      mask = RandomNormal(n, seed + 1);
      for (std::size_t i = 0; i < n; ++i) {
        if (i % 5 == 2) mask[i] = kNegInf;
      }
      options.attn_mask = {mask.data(), mask.size()};
    }
    if (v.lengths) {
      for (std::size_t b = 0; b < in.batch; ++b) {
        query_lengths.push_back(b == 0 ? in.lq : (in.lq * b / in.batch));
        key_lengths.push_back(b == 2 ? in.lk : (in.lk * (b + 1) / (in.batch + 1)));
      }
      options.query_lengths = {query_lengths.data(), query_lengths.size()};
      options.key_lengths = {key_lengths.data(), key_lengths.size()};
    }
    if (v.weights != AttentionWeights::kNone) {
      const std::size_t per = v.weights == AttentionWeights::kPerHead ? heads : 1;
      weights.assign(in.batch * per * in.lq * in.lk, -7.0f);
      options.need_weights = v.weights;
      options.attn_weights = {weights.data(), weights.size()};
    }
  }
};

const Variant kVariants[] = {
    {"plain"},
    {"causal", true},
    {"key_padding", false, true},
    {"shared_mask", false, false, true},
    {"per_head_mask", false, false, true, true},
    {"lengths", false, false, false, false, true},
    {"everything", true, true, true, true, true, AttentionWeights::kPerHead},
    {"causal_weights", true, false, false, false, false, AttentionWeights::kPerHead},
    {"averaged_weights", false, true, true, false, true, AttentionWeights::kAveraged},
};

// The bounds on normal data: cosine against the float reference.
double CompactKvBound(KvFormat format) { return format == KvFormat::kInt8 ? 0.9995 : 0.9999; }

void CheckOptions(std::size_t d, std::size_t heads, std::size_t kv_heads, std::size_t lq,
                  std::size_t lk, Precision precision, KvFormat kv_format = KvFormat::kFp32) {
  const GqaModel model(d, heads, kv_heads, 11 * d + heads + kv_heads);
  Config config = model.with(precision);
  config.kv_format = kv_format;
  const MultiheadAttention mha(config, model.view());
  const Inputs in(3, lq, lk, d, 100 + lq);
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(::testing::Message() << v.name << " d=" << d << " heads=" << heads << "/"
                                      << kv_heads << " Lq=" << lq << " Lk=" << lk << " "
                                      << PrecisionName(precision) << " K/V "
                                      << KvFormatName(kv_format));
    OptionArrays ref_opts(v, in, heads, 7);
    std::vector<float> ref(in.q.size());
    ReferenceForward(model.config, model.view(), in.tq(), in.tk(), in.tv(),
                     {ref.data(), in.batch, lq, d}, ref_opts.options);
    std::vector<float> first;
    std::vector<float> first_weights;
    for (std::size_t threads : {1, 3}) {
      OptionArrays opts(v, in, heads, 7);
      std::vector<float> out(in.q.size(), -9.0f);
      Context context(threads);
      mha.Forward(context, in.tq(), in.tk(), in.tv(), {out.data(), in.batch, lq, d},
                  opts.options);
      if (kv_format != KvFormat::kFp32) {
        // Probabilities from rounded keys: off by about |score| times the format's step.
        ASSERT_GE(Cosine(out, ref), CompactKvBound(kv_format));
        ASSERT_LE(MaxAbsDiff(opts.weights, ref_opts.weights), 0.02);
      } else if (precision == Precision::kFp32) {
        const double tol = 4.0 * (2 * d + lk) * kFloatEps * BoundScale(ref);
        ASSERT_LE(MaxAbsDiff(out, ref), tol);
        ASSERT_LE(MaxAbsDiff(opts.weights, ref_opts.weights), (lk + d) * 8 * kFloatEps);
      } else {
        ASSERT_GE(Cosine(out, ref), 0.999);
        ASSERT_LE(MaxAbsDiff(opts.weights, ref_opts.weights), 0.05);
      }
      if (v.lengths) {
        // Padded query rows are zeros, whatever the precision.
        for (std::size_t b = 0; b < in.batch; ++b) {
          for (std::size_t i = opts.query_lengths[b]; i < lq; ++i) {
            for (std::size_t c = 0; c < d; ++c) ASSERT_EQ(out[(b * lq + i) * d + c], 0.0f);
          }
        }
      }
      // Any thread count gives the same bits.
      if (first.empty()) {
        first = out;
        first_weights = opts.weights;
      } else {
        ASSERT_EQ(0, std::memcmp(first.data(), out.data(), out.size() * sizeof(float)));
        ASSERT_EQ(first_weights, opts.weights);
      }
    }
  }
}

TEST(AttentionOptionsTest, MatchReferenceFp32) {
  CheckOptions(48, 6, 6, 70, 130, Precision::kFp32);
  CheckOptions(48, 6, 2, 300, 300, Precision::kFp32);  // more than one key tile, GQA
  CheckOptions(32, 4, 1, 5, 9, Precision::kFp32);      // multi-query
  // One query row, a decode step's shape: causal, it sees key 0 alone (Forward); grouped heads.
  CheckOptions(48, 6, 2, 1, 70, Precision::kFp32);
  CheckOptions(32, 4, 1, 1, 9, Precision::kFp32);
}

TEST(AttentionOptionsTest, MatchReferenceCompactKv) {
  for (KvFormat format : {KvFormat::kBf16, KvFormat::kFp16, KvFormat::kInt8}) {
    CheckOptions(48, 6, 6, 70, 130, Precision::kFp32, format);
    CheckOptions(48, 6, 2, 300, 300, Precision::kFp32, format);
    CheckOptions(32, 4, 1, 5, 9, Precision::kFp32, format);
    CheckOptions(32, 4, 1, 1, 9, Precision::kFp32, format);
  }
  CheckOptions(64, 8, 2, 33, 300, Precision::kInt8, KvFormat::kInt8);
}

TEST(AttentionOptionsTest, MatchReferenceInt8) {
  CheckOptions(64, 4, 4, 70, 130, Precision::kInt8);
  CheckOptions(64, 8, 2, 33, 300, Precision::kInt8);
  CheckOptions(64, 8, 2, 1, 40, Precision::kInt8);  // one query row; padded items have none
}

// A query row whose every key is masked gets zeros from each head: its output is the output
// projection's bias, and its weights are zeros (PyTorch returns NaN there).
TEST(AttentionOptionsTest, FullyMaskedRowGivesOutputBias) {
  const GqaModel model(32, 4, 4, 5);
  const MultiheadAttention mha(model.config, model.view());
  const Inputs in(2, 3, 6, 32, 9);
  bool padding[12];
  for (std::size_t i = 0; i < 12; ++i) padding[i] = i < 6 || i == 8;  // item 0: all; item 1: key 2
  std::vector<float> out(in.q.size()), weights(2 * 3 * 6, -1.0f);
  ForwardOptions options;
  options.key_padding_mask = {padding, 12};
  options.need_weights = AttentionWeights::kAveraged;
  options.attn_weights = {weights.data(), weights.size()};
  Context context(1);
  mha.Forward(context, in.tq(), in.tk(), in.tv(), {out.data(), 2, 3, 32}, options);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t c = 0; c < 32; ++c) EXPECT_EQ(out[i * 32 + c], model.bo[c]);
    for (std::size_t j = 0; j < 6; ++j) EXPECT_EQ(weights[i * 6 + j], 0.0f);
    // Batch item 1: weights over its 5 unmasked keys sum to 1, the masked one is 0.
    double sum = 0.0;
    for (std::size_t j = 0; j < 6; ++j) sum += weights[18 + i * 6 + j];
    EXPECT_NEAR(sum, 1.0, 1e-6);
    EXPECT_EQ(weights[18 + i * 6 + 2], 0.0f);
  }
}

// A NaN key at a padded position is dropped, as under causal or the window, whether its key
// tile is computed (item 0: key 2 of 300; item 1: key 100, with keys from 50 on padded) or
// skipped as wholly padded (item 1: key 280): every row finite, as in the reference. (PyTorch
// adds the padding as -inf, and NaN - inf is NaN.)
TEST(AttentionOptionsTest, NanKeyAtPaddedPositionIsDropped) {
  const GqaModel model(32, 4, 4, 5);
  const MultiheadAttention mha(model.config, model.view());
  const std::size_t lk = 300;
  Inputs in(2, 3, lk, 32, 9);
  bool padding[2 * lk] = {};
  padding[2] = true;
  for (std::size_t j = 50; j < lk; ++j) padding[lk + j] = true;
  for (std::size_t key : {std::size_t{2}, lk + 100, lk + 280}) {
    in.k[key * 32 + 7] = std::numeric_limits<float>::quiet_NaN();
  }
  ForwardOptions options;
  options.key_padding_mask = {padding, 2 * lk};
  std::vector<float> out(in.q.size()), ref(in.q.size());
  Context context(1);
  mha.Forward(context, in.tq(), in.tk(), in.tv(), {out.data(), 2, 3, 32}, options);
  ReferenceForward(model.config, model.view(), in.tq(), in.tk(), in.tv(), {ref.data(), 2, 3, 32},
                   options);
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_TRUE(std::isfinite(out[i]) && std::isfinite(ref[i]))
        << i << ": " << out[i] << " " << ref[i];
  }
  EXPECT_LE(MaxAbsDiff(out, ref), 4.0 * (2 * 32 + lk) * kFloatEps * BoundScale(ref));
}

// Finite inputs whose scores or projections leave float's range: Forward computes in float,
// as PyTorch does, and the reference, in double, keeps double's precision but float's range, so
// that the rows come out non-finite in both and the others agree. Row 1 is scaled by 1e22 (its
// own scores reach 1e44: infinite, a NaN row wherever one is +inf), row 3 by 1e37 (its
// projections reach 1e37 x |w| x sqrt(d) ~ 1e38, some beyond float), the rest stay normal (their
// scores against rows 1 and 3 reach 1e22 and 1e37, finite).
TEST(AttentionOptionsTest, ValuesBeyondFloatRangeAreInfiniteInTheReferenceToo) {
  const GqaModel model(32, 4, 4, 5);
  const MultiheadAttention mha(model.config, model.view());
  Inputs in(1, 6, 6, 32, 12);
  for (std::size_t c = 0; c < 32; ++c) {
    in.q[1 * 32 + c] *= 1e22f;
    in.q[3 * 32 + c] *= 1e37f;
  }
  std::vector<float> out(in.q.size()), ref(in.q.size());
  Context context(1);
  mha.Forward(context, in.tq(), {out.data(), 1, 6, 32});
  ReferenceForward(model.config, model.view(), in.tq(), in.tq(), in.tq(), {ref.data(), 1, 6, 32});
  std::size_t non_finite_rows = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    bool out_finite = true, ref_finite = true;
    double row_max = 0.0, row_diff = 0.0;
    for (std::size_t c = 0; c < 32; ++c) {
      out_finite = out_finite && std::isfinite(out[i * 32 + c]);
      ref_finite = ref_finite && std::isfinite(ref[i * 32 + c]);
      row_max = std::max(row_max, std::fabs(double(ref[i * 32 + c])));
      row_diff = std::max(row_diff, std::fabs(double(out[i * 32 + c]) - ref[i * 32 + c]));
    }
    EXPECT_EQ(out_finite, ref_finite) << "row " << i << ": " << out[i * 32] << " " << ref[i * 32];
    if (!ref_finite) ++non_finite_rows;
    // A finite row is a softmax-weighted sum of values up to 1e37 x |w| (each rounded in float
    // by Forward), so its error bound is relative to the largest such value in the row.
    if (out_finite && ref_finite) {
      EXPECT_LE(row_diff, 1e-4 * (1.0 + row_max)) << "row " << i;
    }
  }
  EXPECT_GE(non_finite_rows, 1u);  // the case the test is for
}

// The self-attention overload uses the query lengths for the keys too.
TEST(AttentionOptionsTest, SelfAttentionLengthsApplyToKeys) {
  const GqaModel model(32, 4, 2, 3);
  const MultiheadAttention mha(model.config, model.view());
  const Inputs in(2, 20, 20, 32, 4);
  const std::size_t lengths[] = {7, 20};
  ForwardOptions options;
  options.query_lengths = {lengths, 2};
  std::vector<float> out(in.q.size()), ref(in.q.size());
  Context context(2);
  mha.Forward(context, in.tq(), {out.data(), 2, 20, 32}, options);
  options.key_lengths = {lengths, 2};
  ReferenceForward(model.config, model.view(), in.tq(), in.tq(), in.tq(),
                   {ref.data(), 2, 20, 32}, options);
  EXPECT_LE(MaxAbsDiff(out, ref), 1e-5);
}

// Given key lengths of its own, the self-attention overload keeps them: the query lengths stand
// in for the keys' only when none are given.
TEST(AttentionOptionsTest, SelfAttentionKeepsGivenKeyLengths) {
  const GqaModel model(32, 4, 2, 3);
  const MultiheadAttention mha(model.config, model.view());
  const Inputs in(2, 20, 20, 32, 4);
  const std::size_t query_lengths[] = {7, 20}, key_lengths[] = {12, 5};
  ForwardOptions options;
  options.query_lengths = {query_lengths, 2};
  options.key_lengths = {key_lengths, 2};
  std::vector<float> out(in.q.size()), want(in.q.size());
  Context context(2);
  mha.Forward(context, in.tq(), {out.data(), 2, 20, 32}, options);
  mha.Forward(context, in.tq(), in.tq(), in.tq(), {want.data(), 2, 20, 32}, options);
  EXPECT_EQ(out, want);
}

// Grouped-query weights can be given as one in_proj_weight only when there is no grouping.
TEST(AttentionOptionsTest, GroupedQueryNeedsSeparateWeights) {
  const GqaModel model(32, 4, 2, 3);
  std::vector<float> in_proj(3 * 32 * 32);
  WeightsView w;
  w.in_proj_weight = {in_proj.data(), in_proj.size()};
  w.out_proj_weight = {model.wo.data(), model.wo.size()};
  try {
    MultiheadAttention mha(model.config, w);
    ADD_FAILURE() << "built";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs separate q/k/v_proj_weight"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace edgeattn
