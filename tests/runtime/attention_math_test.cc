// The attention step's maths (AttentionMath, sinks, norm weights): forward calls against the
// float reference for each feature and all together, fp32 and int8, bit-identical for any
// thread count; decoding with them; and their checks (a windowed cache's ring:
// windowed_ring_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/reference.hpp"
#include "tests/expect_error.h"
#include "tests/runtime/math_model.h"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::BoundScale;
using testing_support::CausalForward;
using testing_support::Cosine;
using testing_support::ExpectError;
using testing_support::GqaModel;
using testing_support::kFloatEps;
using testing_support::MathModel;
using testing_support::MaxAbsDiff;
using testing_support::RandomNormal;
using testing_support::Rows;

AttentionMath Rotary(RotaryLayout layout, std::size_t dims) {
  AttentionMath m;
  m.rotary = layout;
  m.rotary_dim = dims;
  m.rotary_base = 500.0f;
  m.rotary_scaling = 2.0f;
  return m;
}

struct MathCase {
  const char* name;
  AttentionMath math;
  bool sinks;
};

std::vector<MathCase> MathCases() {
  std::vector<MathCase> cases;
  AttentionMath m;
  m.score_scale = 0.5f;
  cases.push_back({"score_scale", m, false});
  m = {};
  m.softcap = 2.0f;
  cases.push_back({"softcap", m, false});
  cases.push_back({"sinks", {}, true});
  m = {};
  m.qk_norm = true;
  m.qk_norm_eps = 1e-5f;
  cases.push_back({"qk_norm", m, false});
  cases.push_back({"rotary_halves", Rotary(RotaryLayout::kHalves, 0), false});
  cases.push_back({"rotary_interleaved", Rotary(RotaryLayout::kInterleaved, 0), false});
  cases.push_back({"rotary_partial", Rotary(RotaryLayout::kHalves, 6), false});
  m = {};
  m.window = 37;
  cases.push_back({"window", m, false});
  m = Rotary(RotaryLayout::kHalves, 8);
  m.score_scale = 0.3f;
  m.softcap = 3.0f;
  m.qk_norm = true;
  m.window = 100;
  cases.push_back({"combined", m, true});
  return cases;
}

// One case's inputs and float reference, computed once for every precision and K/V format
// checked against it (the scalar reference is most of the test's time, under qemu and ASan).
struct ForwardCase {
  static constexpr std::size_t kBatch = 2, kLq = 300, kLk = 290, kD = 64;
  const MathCase& c;
  const MathModel model;
  const std::vector<float> q = RandomNormal(kBatch * kLq * kD, 11);
  const std::vector<float> kv = RandomNormal(kBatch * kLk * kD, 12);
  std::vector<std::size_t> positions = std::vector<std::size_t>(kLq);
  std::vector<std::size_t> key_positions = std::vector<std::size_t>(kLk);
  ForwardOptions options;
  std::vector<float> ref = std::vector<float>(q.size());

  ForwardCase(const MathCase& math_case, bool causal)
      : c(math_case), model(math_case.math, math_case.sinks) {
    for (std::size_t i = 0; i < kLq; ++i) positions[i] = 3 * i + 5;
    for (std::size_t j = 0; j < kLk; ++j) key_positions[j] = 2 * j;
    options.is_causal = causal;
    if (c.math.rotary != RotaryLayout::kNone) {
      options.positions = {positions.data(), kLq};
      options.key_positions = {key_positions.data(), kLk};
    }
    ReferenceForward(model.config(Precision::kFp32), model.view(), tq(), tkv(), tkv(),
                     {ref.data(), kBatch, kLq, kD}, options);
  }
  ConstTensor tq() const { return {q.data(), kBatch, kLq, kD}; }
  ConstTensor tkv() const { return {kv.data(), kBatch, kLk, kD}; }
};

// The forward call in this precision and K/V format: bit-identical on 1 and 3 threads, and
// within the format's bound of the reference.
void CheckForward(const ForwardCase& f, Precision precision, KvFormat kv_format) {
  constexpr std::size_t batch = ForwardCase::kBatch, lq = ForwardCase::kLq, d = ForwardCase::kD;
  SCOPED_TRACE(::testing::Message()
               << f.c.name << (f.options.is_causal ? " causal " : " ") << PrecisionName(precision)
               << " K/V " << KvFormatName(kv_format));
  Config config = f.model.config(precision);
  config.kv_format = kv_format;
  const MultiheadAttention mha(config, f.model.view());
  std::vector<float> one(f.q.size()), three(f.q.size());
  Context single(1), several(3);
  mha.Forward(single, f.tq(), f.tkv(), f.tkv(), {one.data(), batch, lq, d}, f.options);
  mha.Forward(several, f.tq(), f.tkv(), f.tkv(), {three.data(), batch, lq, d}, f.options);
  ASSERT_EQ(0, std::memcmp(one.data(), three.data(), one.size() * sizeof(float)));
  if (kv_format != KvFormat::kFp32) {
    EXPECT_GE(Cosine(one, f.ref), kv_format == KvFormat::kInt8 ? 0.9995 : 0.9999);
  } else if (precision == Precision::kFp32) {
    EXPECT_LE(MaxAbsDiff(one, f.ref),
              4.0 * (2 * d + ForwardCase::kLk) * kFloatEps * BoundScale(f.ref));
  } else {
    EXPECT_GE(Cosine(one, f.ref), 0.999);
  }
}

TEST(AttentionMathTest, ForwardMatchesReference) {
  for (const MathCase& c : MathCases()) {
    for (bool causal : {false, true}) {
      const ForwardCase f(c, causal);
      for (Precision precision : {Precision::kFp32, Precision::kInt8}) {
        CheckForward(f, precision, KvFormat::kFp32);
      }
    }
  }
}

// Every K/V format with every feature of the step (windows, soft caps, sinks, rotary keys).
TEST(AttentionMathTest, ForwardOnCompactKeysValuesMeetsTheBounds) {
  for (const MathCase& c : MathCases()) {
    for (bool causal : {false, true}) {
      const ForwardCase f(c, causal);
      for (KvFormat format : {KvFormat::kBf16, KvFormat::kFp16, KvFormat::kInt8}) {
        CheckForward(f, Precision::kFp32, format);
      }
    }
  }
}

// Each feature changes the result: none of them is silently ignored.
TEST(AttentionMathTest, EachFeatureChangesTheOutput) {
  const MathModel plain({}, false);
  const std::size_t lq = 40, d = 64;
  const std::vector<float> x = RandomNormal(lq * d, 3);
  Context context(1);
  const auto run = [&](const MathModel& model) {
    std::vector<float> y(x.size());
    MultiheadAttention(model.config(Precision::kFp32), model.view())
        .Forward(context, {x.data(), 1, lq, d}, {y.data(), 1, lq, d});
    return y;
  };
  const std::vector<float> base = run(plain);
  for (const MathCase& c : MathCases()) {
    EXPECT_GT(MaxAbsDiff(run(MathModel(c.math, c.sinks)), base), 1e-4) << c.name;
  }
}

// qk_norm's eps against the reference where it matters: at 4 it is larger than the heads' mean
// square, which the MathCases' 1e-5 is not (dropping eps there moves the output by less than the
// tolerance).
TEST(AttentionMathTest, LargeQkNormEpsMatchesReference) {
  constexpr std::size_t kLq = 9, kLk = 13, kD = 64;
  AttentionMath math;
  math.qk_norm = true;
  math.qk_norm_eps = 4.0f;
  const MathModel model(math, false);
  const std::vector<float> q = RandomNormal(kLq * kD, 31);
  const std::vector<float> kv = RandomNormal(kLk * kD, 32);
  std::vector<float> ref(q.size()), out(q.size()), small_eps(q.size());
  ReferenceForward(model.config(Precision::kFp32), model.view(), {q.data(), 1, kLq, kD},
                   {kv.data(), 1, kLk, kD}, {kv.data(), 1, kLk, kD}, {ref.data(), 1, kLq, kD});
  Context context(1);
  MultiheadAttention(model.config(Precision::kFp32), model.view())
      .Forward(context, {q.data(), 1, kLq, kD}, {kv.data(), 1, kLk, kD}, {kv.data(), 1, kLk, kD},
               {out.data(), 1, kLq, kD});
  EXPECT_LE(MaxAbsDiff(out, ref), 4.0 * (2 * kD + kLk) * kFloatEps * BoundScale(ref));
  math.qk_norm_eps = 1e-5f;
  const MathModel small(math, false);
  MultiheadAttention(small.config(Precision::kFp32), small.view())
      .Forward(context, {q.data(), 1, kLq, kD}, {kv.data(), 1, kLk, kD}, {kv.data(), 1, kLk, kD},
               {small_eps.data(), 1, kLq, kD});
  EXPECT_GT(MaxAbsDiff(out, small_eps), 1e-3);  // eps changes the output here
}

// Decoding step by step gives the causal forward's rows, with every feature on.
void CheckDecode(const AttentionMath& math, bool sinks, Precision precision,
                 const std::vector<std::size_t>& steps) {
  const MathModel model(math, sinks, 32, 2);
  const std::size_t d = 32;
  std::size_t length = 0;
  for (std::size_t n : steps) length += n;
  const MultiheadAttention mha(model.config(precision), model.view());
  const std::vector<float> x = RandomNormal(length * d, 21);
  const std::vector<float> full = CausalForward(mha, x, 1, length, d);
  Context context(2);
  KvCache cache(mha, length, 1);
  const std::size_t bytes = cache.bytes();
  std::size_t first = 0;
  for (std::size_t n : steps) {
    const std::vector<float> in = Rows(x, d, first, n);
    std::vector<float> out(in.size());
    mha.Decode(context, {in.data(), 1, n, d}, cache, {out.data(), 1, n, d});
    const std::vector<float> want = Rows(full, d, first, n);
    // The same arithmetic as the forward call but other key tiles (and the ring's order).
    ASSERT_LE(MaxAbsDiff(out, want), 256 * kFloatEps * BoundScale(want)) << "step at " << first;
    first += n;
  }
  EXPECT_EQ(cache.bytes(), bytes);
}

TEST(AttentionMathTest, DecodeMatchesCausalForward) {
  for (const MathCase& c : MathCases()) {
    SCOPED_TRACE(c.name);
    for (Precision precision : {Precision::kFp32, Precision::kInt8}) {
      CheckDecode(c.math, c.sinks, precision, {1, 3, 70, 1, 1, 29, 5, 64, 2, 1, 90, 7});
    }
  }
}

TEST(AttentionMathTest, HostileOptionsAreNamedErrors) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto build = [](const AttentionMath& math, bool sinks = false) {
    const MathModel model(math, sinks);
    MultiheadAttention(model.config(Precision::kFp32), model.view());
  };
  AttentionMath m;
  m.score_scale = nan;
  ExpectError([&] { build(m); }, {"Config.math.score_scale", "finite positive", "NaN"});
  m = {};
  m.score_scale = -1.0f;
  ExpectError([&] { build(m); }, {"Config.math.score_scale", "got -1"});
  m = {};
  m.softcap = inf;
  ExpectError([&] { build(m); }, {"Config.math.softcap", "inf"});
  m = {};
  m.window = kMaxPosition + 1;
  ExpectError([&] { build(m); }, {"Config.math.window", "16777217"});
  m = Rotary(RotaryLayout::kHalves, 7);
  ExpectError([&] { build(m); }, {"Config.math.rotary_dim", "even", "got 7"});
  m = Rotary(RotaryLayout::kInterleaved, 18);
  ExpectError([&] { build(m); }, {"Config.math.rotary_dim", "[2, 16]", "got 18"});
  m = Rotary(RotaryLayout::kHalves, 0);
  m.rotary_base = 1.0f;
  ExpectError([&] { build(m); }, {"Config.math.rotary_base", "above 1"});
  m.rotary_base = 10000.0f;
  m.rotary_scaling = 0.0f;
  ExpectError([&] { build(m); }, {"Config.math.rotary_scaling", "got 0"});
  m = {};
  m.rotary_dim = 4;
  ExpectError([&] { build(m); }, {"Config.math.rotary_dim", "without a rotary layout"});
  // rotary_dim left at 0 on an odd head width: the head count made it odd, not rotary_dim.
  GqaModel odd_heads(12, 4, 4, 3);
  odd_heads.config.math = Rotary(RotaryLayout::kHalves, 0);
  ExpectError([&] { MultiheadAttention(odd_heads.config, odd_heads.view()); },
              {"Config.math.rotary:", "even head_dim (d_model / num_heads)", "got head_dim 3"});
  m = {};
  m.rotary = static_cast<RotaryLayout>(7);
  ExpectError([&] { build(m); }, {"Config.math.rotary", "got 7"});
  m = {};
  m.qk_norm = true;
  m.qk_norm_eps = 0.0f;
  ExpectError([&] { build(m); }, {"Config.math.qk_norm_eps", "got 0"});

  // Weights: sinks of the wrong size or not finite, norm weights without the norm.
  MathModel model({}, true);
  model.sinks.push_back(0.0f);
  ExpectError([&] { MultiheadAttention(model.config(Precision::kFp32), model.view()); },
              {"sinks", "expected 4 floats", "got 5"});
  model.sinks = {0.0f, nan, 1.0f, 2.0f};
  ExpectError([&] { MultiheadAttention(model.config(Precision::kFp32), model.view()); },
              {"sinks[1]", "finite", "NaN"});
  model.with_sinks = false;
  WeightsView w = model.view();
  w.q_norm_weight = {model.q_norm.data(), model.q_norm.size()};
  ExpectError([&] { MultiheadAttention(model.config(Precision::kFp32), w); },
              {"q_norm_weight", "Config.math.qk_norm", "off"});
  AttentionMath norm;
  norm.qk_norm = true;
  MathModel normed(norm, false);
  w = normed.view();
  w.k_norm_weight = {};
  ExpectError([&] { MultiheadAttention(normed.config(Precision::kFp32), w); },
              {"k_norm_weight", "expected 16 floats", "got none"});

  // Positions: only with a rotary embedding, one per row, below kMaxPosition.
  const std::size_t d = 64, lq = 5;
  const std::vector<float> x = RandomNormal(lq * d, 1);
  std::vector<float> y(x.size());
  std::vector<std::size_t> positions = {0, 1, 2, 3, kMaxPosition};
  Context context(1);
  ForwardOptions options;
  options.positions = {positions.data(), positions.size()};
  const MultiheadAttention plain(model.config(Precision::kFp32), model.view());
  ExpectError(
      [&] {
        plain.Forward(context, {x.data(), 1, lq, d}, {y.data(), 1, lq, d}, options);
      },
      {"positions", "no rotary embedding"});
  const MathModel rotary(Rotary(RotaryLayout::kHalves, 0), false);
  const MultiheadAttention rotated(rotary.config(Precision::kFp32), rotary.view());
  ExpectError(
      [&] {
        rotated.Forward(context, {x.data(), 1, lq, d}, {y.data(), 1, lq, d}, options);
      },
      {"positions[4]", "below 16777216", "got 16777216"});
  options.positions = {positions.data(), 4};
  ExpectError(
      [&] {
        rotated.Forward(context, {x.data(), 1, lq, d}, {y.data(), 1, lq, d}, options);
      },
      {"positions", "expected 5 positions", "got 4"});
}

}  // namespace
}  // namespace edgeattn
