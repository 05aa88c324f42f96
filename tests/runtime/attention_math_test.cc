// The attention step's maths (AttentionMath, sinks, norm weights): forward calls against the
// float reference for each feature and all together, fp32 and int8, bit-identical for any
// thread count; decoding with them (a windowed cache's ring, its Truncate); and their checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/executor.hpp"
#include "edgeattn/reference.hpp"
#include "tests/expect_error.h"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::Cosine;
using testing_support::ExpectError;
using testing_support::GqaModel;
using testing_support::kFloatEps;
using testing_support::MaxAbs;
using testing_support::MaxAbsDiff;
using testing_support::RandomNormal;

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
              4.0 * (2 * d + ForwardCase::kLk) * kFloatEps * (1.0 + MaxAbs(f.ref)));
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

// Rows of x [length, d] from `first`.
std::vector<float> Rows(const std::vector<float>& x, std::size_t d, std::size_t first,
                        std::size_t n) {
  return std::vector<float>(x.begin() + first * d, x.begin() + (first + n) * d);
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
  ForwardOptions causal;
  causal.is_causal = true;
  std::vector<float> full(x.size());
  Context context(2);
  mha.Forward(context, {x.data(), 1, length, d}, {full.data(), 1, length, d}, causal);
  KvCache cache(mha, length, 1);
  const std::size_t bytes = cache.bytes();
  std::size_t first = 0;
  for (std::size_t n : steps) {
    const std::vector<float> in = Rows(x, d, first, n);
    std::vector<float> out(in.size());
    mha.Decode(context, {in.data(), 1, n, d}, cache, {out.data(), 1, n, d});
    const std::vector<float> want = Rows(full, d, first, n);
    // The same arithmetic as the forward call but other key tiles (and the ring's order).
    ASSERT_LE(MaxAbsDiff(out, want), 256 * kFloatEps * (1.0 + MaxAbs(want))) << "step at " << first;
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

// The proof: 4,096 single-token steps with a window of 512 hold the cache at the
// window's size (a ring of 576 slots) and match a windowed causal forward.
TEST(AttentionMathTest, WindowedDecodeOf4096StepsKeepsTheWindow) {
  AttentionMath math;
  math.window = 512;
  const MathModel model(math, false, 32, 2);
  const std::size_t d = 32, length = 4096;
  const MultiheadAttention mha(model.config(Precision::kFp32), model.view());
  const std::vector<float> x = RandomNormal(length * d, 8);
  ForwardOptions causal;
  causal.is_causal = true;
  std::vector<float> full(x.size());
  Context context(2);
  mha.Forward(context, {x.data(), 1, length, d}, {full.data(), 1, length, d}, causal);
  KvCache cache(mha, length, 1);
  EXPECT_EQ(cache.slots(), 576u);
  const std::size_t bytes = cache.bytes();
  Config unwindowed = model.base.config;
  unwindowed.math = {};
  EXPECT_LT(bytes, KvCache(MultiheadAttention(unwindowed, model.view()), length).bytes() / 7);
  std::vector<float> out(d);
  for (std::size_t i = 0; i < length; ++i) {
    mha.Decode(context, {x.data() + i * d, 1, 1, d}, cache, {out.data(), 1, 1, d});
    const std::vector<float> want = Rows(full, d, i, 1);
    ASSERT_LE(MaxAbsDiff(out, want), 256 * kFloatEps * (1.0 + MaxAbs(want))) << "step " << i;
  }
  EXPECT_EQ(cache.length(), length);
  EXPECT_EQ(cache.bytes(), bytes);
}

// A window of 100 positions: its cache is a ring of 192 slots, taking steps of up to 93
// positions once full; 600 positions of input.
struct WindowOf100 {
  static constexpr std::size_t kD = 32;
  static AttentionMath Math() {
    AttentionMath math;
    math.window = 100;
    return math;
  }
  MathModel model{Math(), false, kD, 2};
  MultiheadAttention mha{model.config(Precision::kFp32), model.view()};
  std::vector<float> x = RandomNormal(600 * kD, 9);
};

// Truncate rolls back within what the ring holds, and the re-decoded steps are the same;
// further back is an error naming the first length it still could roll back to.
TEST(AttentionMathTest, WindowedTruncateRollsBackWithinTheRing) {
  const WindowOf100 w;
  const std::size_t d = WindowOf100::kD;
  const MultiheadAttention& mha = w.mha;
  const std::vector<float>& x = w.x;
  Context context(1);
  KvCache cache(mha, 600, 1);
  std::vector<float> out(93 * d), again(93 * d);
  std::size_t length = 0;
  for (std::size_t n : {90, 90, 90, 90}) {
    mha.Decode(context, {x.data() + length * d, 1, n, d}, cache, {out.data(), 1, n, d});
    length += n;
  }
  // Holds positions 168..359; the step after a rollback to 300 needs 201..299.
  cache.Truncate(300);
  mha.Decode(context, {x.data() + 300 * d, 1, 60, d}, cache, {again.data(), 1, 60, d});
  const std::vector<float> last(out.begin() + 30 * d, out.begin() + 90 * d);
  EXPECT_EQ(MaxAbsDiff(std::vector<float>(again.begin(), again.begin() + 60 * d), last), 0.0);
  ExpectError([&] { cache.Truncate(250); }, {"length", "at least 267", "ring of 192 slots"});
  EXPECT_EQ(cache.length(), 360u);
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 1, 94, d}, cache, {out.data(), 1, 94, d});
      },
      {"x.length", "at most 93", "got 94"});
}

// An application executor of two workers (one is run inline, never through it) that throws
// from its fail_at-th RunWorkers call: a decode step then fails after the phases before it, the
// K/V pack among them from some call on.
class ThrowingExecutor final : public Executor {
 public:
  explicit ThrowingExecutor(std::size_t fail_at) : fail_at_(fail_at) {}
  std::size_t workers() const override { return 2; }
  void RunWorkers(WorkerFn fn) override {
    if (calls_++ == fail_at_) throw std::runtime_error("the application's pool failed");
    fn(0);
    fn(1);
  }

 private:
  std::size_t fail_at_;
  std::size_t calls_ = 0;
};

// A step that fails keeps the cache's length, but once it has written its ring slots the
// positions they held are gone: Truncate refuses a rollback whose window needs them (it accepted
// it, and the next steps read the failed step's keys in their place), and whatever it accepts
// decodes as a cache that never saw the failure.
TEST(AttentionMathTest, FailedStepForgetsWhatItsRingSlotsHeld) {
  const WindowOf100 w;
  const std::size_t d = WindowOf100::kD;
  const MultiheadAttention& mha = w.mha;
  const std::vector<float>& x = w.x;
  Context context(1);
  std::vector<float> out(93 * d), want(60 * d);
  const auto fill = [&](KvCache& cache) {  // holds positions 168..359
    for (std::size_t first = 0; first < 360; first += 90) {
      mha.Decode(context, {x.data() + first * d, 1, 90, d}, cache, {out.data(), 1, 90, d});
    }
  };
  KvCache reference(mha, 600, 1);
  fill(reference);
  reference.Truncate(300);
  mha.Decode(context, {x.data() + 300 * d, 1, 60, d}, reference, {want.data(), 1, 60, d});
  std::size_t refused = 0;
  for (std::size_t fail_at = 0;; ++fail_at) {
    KvCache cache(mha, 600, 1);
    fill(cache);
    ThrowingExecutor failing(fail_at);
    Context failing_context(failing);
    try {
      mha.Decode(failing_context, {x.data() + 360 * d, 1, 93, d}, cache, {out.data(), 1, 93, d});
      break;  // fail_at is past the step's last phase
    } catch (const std::runtime_error&) {
    }
    EXPECT_EQ(cache.length(), 360u) << "failing at phase " << fail_at;
    try {
      cache.Truncate(300);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ring of 192 slots"), std::string::npos) << e.what();
      ++refused;
      continue;
    }
    std::vector<float> again(60 * d);
    mha.Decode(context, {x.data() + 300 * d, 1, 60, d}, cache, {again.data(), 1, 60, d});
    EXPECT_EQ(MaxAbsDiff(again, want), 0.0) << "failing at phase " << fail_at;
  }
  EXPECT_GT(refused, 0u) << "no failed step had written the ring";
}

// A step longer than an empty ring names what the ring takes, and an operator that sees more
// than the ring's window (none, or a wider one) is refused the cache; a narrower one decodes.
TEST(AttentionMathTest, WindowedCacheLimitsAreNamed) {
  AttentionMath math;
  math.window = 40;  // 128 slots; steps of up to 89 positions once full
  const std::size_t d = 32;
  const MathModel model(math, false, d, 2);
  const MultiheadAttention mha(model.config(Precision::kFp32), model.view());
  const std::vector<float> x = RandomNormal(129 * d, 3);
  std::vector<float> out(129 * d);
  Context context(1);
  KvCache cache(mha, 300, 1);
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 1, 129, d}, cache, {out.data(), 1, 129, d});
      },
      {"x.length", "holding 0 positions adds at most 128 (89 once the ring is full), got 129"});
  mha.Decode(context, {x.data(), 1, 128, d}, cache, {out.data(), 1, 128, d});
  const auto with_window = [&](std::size_t window) {
    AttentionMath other = math;
    other.window = window;
    const MathModel m(other, false, d, 2);
    return MultiheadAttention(m.config(Precision::kFp32), model.view());
  };
  const char* kRing = "cache: a ring made for a window of 40 positions (128 slots); this operator";
  ExpectError(
      [&] {
        with_window(0).Decode(context, {x.data(), 1, 1, d}, cache, {out.data(), 1, 1, d});
      },
      {kRing, "attends every position (no window)"});
  ExpectError(
      [&] {
        with_window(41).Decode(context, {x.data(), 1, 1, d}, cache, {out.data(), 1, 1, d});
      },
      {kRing, "attends a window of 41"});
  EXPECT_EQ(cache.length(), 128u);
  with_window(16).Decode(context, {x.data(), 1, 1, d}, cache, {out.data(), 1, 1, d});
  EXPECT_EQ(cache.length(), 129u);
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 1, 90, d}, cache, {out.data(), 1, 90, d});
      },
      {"x.length", "holding 129 positions adds at most 89, got 90"});
}

// A wrapped ring truncated to nothing starts again: the next steps need no earlier key, and give
// what a fresh cache gives, bit for bit (per sequence too, beside one that keeps its ring).
TEST(AttentionMathTest, WrappedRingTruncatedToNothingStartsAgain) {
  AttentionMath math;
  math.window = 40;  // 128 slots
  const std::size_t d = 32;
  const MathModel model(math, false, d, 2);
  const MultiheadAttention mha(model.config(Precision::kFp32), model.view());
  const std::vector<float> x = RandomNormal(2 * 174 * d, 7);
  std::vector<float> got(2 * 30 * d), want(2 * 30 * d);
  Context context(1);
  KvCache cache(mha, 300, 2), fresh(mha, 300, 2);
  const auto decode = [&](KvCache& c, std::size_t rows, std::vector<float>& out) {
    std::vector<float> step(2 * rows * d);
    for (std::size_t b = 0; b < 2; ++b) {
      std::copy(x.begin() + b * 174 * d, x.begin() + (b * 174 + rows) * d,
                step.begin() + b * rows * d);
    }
    mha.Decode(context, {step.data(), 2, rows, d}, c, {out.data(), 2, rows, d});
  };
  std::vector<float> scratch(2 * 58 * d);
  for (int i = 0; i < 3; ++i) decode(cache, 58, scratch);  // 174 positions: wrapped
  cache.Truncate(0);
  EXPECT_EQ(cache.length(), 0u);
  decode(cache, 30, got);
  decode(fresh, 30, want);
  EXPECT_EQ(got, want);
  // The ring holds the new positions from 0 again: rolling back within them is allowed.
  cache.Truncate(10);
  EXPECT_EQ(cache.length(), 10u);
  // Per sequence: sequence 0 back to nothing, sequence 1 keeps its wrapped ring.
  for (int i = 0; i < 3; ++i) decode(cache, 48, scratch);  // 154
  const std::size_t lengths[] = {0, 154};
  cache.Truncate({lengths, 2});
  EXPECT_EQ(cache.length(0), 0u);
  EXPECT_EQ(cache.length(1), 154u);
  ExpectError([&] { cache.Truncate(5); }, {"length: expected at least"});
}

// A windowed cache whose slots hold its max_length never wraps: it serves an operator with no
// window or a wider one as a plain cache does.
TEST(AttentionMathTest, RingThatNeverWrapsServesWiderWindows) {
  AttentionMath math;
  math.window = 40;
  const std::size_t d = 32, length = 100;
  const MathModel model(math, false, d, 2);
  const MultiheadAttention narrow(model.config(Precision::kFp32), model.view());
  AttentionMath none = math;
  none.window = 0;
  const MathModel plain(none, false, d, 2);
  const MultiheadAttention wide(plain.config(Precision::kFp32), model.view());
  const std::vector<float> x = RandomNormal(length * d, 5);
  std::vector<float> got(length * d), want(length * d);
  Context context(1);
  KvCache ring(narrow, length, 1), cache(wide, length, 1);
  ASSERT_EQ(ring.slots(), length);
  for (std::size_t t = 0; t < length; t += 25) {
    // Half way, a step past the room names the room, not a ring's step limit (61 here).
    if (t == 50) {
      ExpectError(
          [&] {
            wide.Decode(context, {x.data(), 1, 62, d}, ring, {got.data(), 1, 62, d});
          },
          {"x.length: the cache holds 50 of 100 positions, room for 50, got 62"});
    }
    wide.Decode(context, {x.data() + t * d, 1, 25, d}, ring, {got.data() + t * d, 1, 25, d});
    wide.Decode(context, {x.data() + t * d, 1, 25, d}, cache, {want.data() + t * d, 1, 25, d});
  }
  EXPECT_EQ(got, want);
}

// Ragged steps and Reorder on a windowed cache: each sequence's ring wraps on its own, and a
// reordered sequence carries what its ring holds.
TEST(AttentionMathTest, WindowedRaggedDecodeAndReorder) {
  AttentionMath math = Rotary(RotaryLayout::kHalves, 0);
  math.window = 40;  // 128 slots
  const MathModel model(math, true, 32, 2);
  const std::size_t d = 32, length = 400;
  const MultiheadAttention mha(model.config(Precision::kFp32), model.view());
  const std::vector<float> x = RandomNormal(2 * length * d, 30);
  ForwardOptions causal;
  causal.is_causal = true;
  std::vector<float> full(x.size());
  Context context(2);
  mha.Forward(context, {x.data(), 2, length, d}, {full.data(), 2, length, d}, causal);
  KvCache cache(mha, length, 2);
  std::size_t done[2] = {0, 0};
  const std::size_t n = 30;
  std::vector<float> in(2 * n * d), out(2 * n * d);
  for (int step = 0; done[0] + n <= length && done[1] + n <= length; ++step) {
    const std::size_t lengths[2] = {n, step % 3 == 0 ? std::size_t{7} : n};
    for (std::size_t b = 0; b < 2; ++b) {
      std::memcpy(in.data() + b * n * d, x.data() + (b * length + done[b]) * d,
                  lengths[b] * d * sizeof(float));
    }
    mha.Decode(context, {in.data(), 2, n, d}, cache, {out.data(), 2, n, d}, {lengths, 2});
    for (std::size_t b = 0; b < 2; ++b) {
      const std::vector<float> got(out.begin() + b * n * d, out.begin() + (b * n + lengths[b]) * d);
      const std::vector<float> want(full.begin() + (b * length + done[b]) * d,
                                    full.begin() + (b * length + done[b] + lengths[b]) * d);
      ASSERT_LE(MaxAbsDiff(got, want), 256 * kFloatEps * (1.0 + MaxAbs(want)))
          << "sequence " << b << " at " << done[b];
      done[b] += lengths[b];
    }
  }
  // Sequence 1 becomes sequence 0's copy: a rollback then follows sequence 0's ring.
  const std::size_t indices[2] = {0, 0};
  cache.Reorder({indices, 2});
  EXPECT_EQ(cache.length(1), done[0]);
  ExpectError([&] { cache.Truncate(done[0] - 100); }, {"length", "ring of 128 slots"});
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
