// A windowed operator's KV cache, a ring of the window's positions: long decodes keep the
// window, Truncate rolls back within what the ring holds (and after a failed step), wrapped rings
// restart from nothing, wider and narrower windows, ragged batches and Reorder.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/executor.hpp"
#include "tests/expect_error.h"
#include "tests/runtime/math_model.h"
#include "tests/runtime/throwing_executor.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::BoundScale;
using testing_support::CausalForward;
using testing_support::ExpectError;
using testing_support::kFloatEps;
using testing_support::MathModel;
using testing_support::MaxAbsDiff;
using testing_support::RandomNormal;
using testing_support::Rows;
using testing_support::ThrowingExecutor;

// The proof: 4,096 single-token steps with a window of 512 hold the cache at the
// window's size (a ring of 576 slots) and match a windowed causal forward.
TEST(WindowedRingTest, WindowedDecodeOf4096StepsKeepsTheWindow) {
  AttentionMath math;
  math.window = 512;
  const MathModel model(math, false, 32, 2);
  const std::size_t d = 32, length = 4096;
  const MultiheadAttention mha(model.config(Precision::kFp32), model.view());
  const std::vector<float> x = RandomNormal(length * d, 8);
  const std::vector<float> full = CausalForward(mha, x, 1, length, d);
  Context context(2);
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
    ASSERT_LE(MaxAbsDiff(out, want), 256 * kFloatEps * BoundScale(want)) << "step " << i;
  }
  EXPECT_EQ(cache.length(), length);
  EXPECT_EQ(cache.bytes(), bytes);
}

// A ring's slots: the window plus 63, rounded up to a multiple of 64, or max_length if smaller.
TEST(WindowedRingTest, RingSlotsAreTheWindowPlus63RoundedUpTo64) {
  const std::size_t d = 32;
  const std::size_t cases[][3] = {{1, 1000, 64},   {2, 1000, 128},  {64, 1000, 128},
                                  {65, 1000, 128}, {66, 1000, 192}, {129, 1000, 192},
                                  {130, 1000, 256}, {65, 100, 100}};
  for (const auto& c : cases) {
    AttentionMath math;
    math.window = c[0];
    const MathModel model(math, false, d, 2);
    const MultiheadAttention mha(model.config(Precision::kFp32), model.view());
    EXPECT_EQ(KvCache(mha, c[1], 1).slots(), c[2]) << "window " << c[0] << " max_length " << c[1];
  }
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
TEST(WindowedRingTest, WindowedTruncateRollsBackWithinTheRing) {
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

// The earliest rollback is exactly the window before the oldest position the ring holds (267
// here), and a step taken after a rollback never brings back what the ring lost: the limit stays.
TEST(WindowedRingTest, TruncateLimitIsExactAndOnlyRises) {
  const WindowOf100 w;
  const std::size_t d = WindowOf100::kD;
  const MultiheadAttention& mha = w.mha;
  const std::vector<float>& x = w.x;
  Context context(1);
  std::vector<float> out(93 * d);
  const auto fill = [&](KvCache& cache) {  // holds positions 168..359
    for (std::size_t first = 0; first < 360; first += 90) {
      mha.Decode(context, {x.data() + first * d, 1, 90, d}, cache, {out.data(), 1, 90, d});
    }
  };
  KvCache cache(mha, 600, 1);
  fill(cache);
  ExpectError([&] { cache.Truncate(266); }, {"length", "at least 267", "ring of 192 slots"});
  EXPECT_EQ(cache.length(), 360u);
  cache.Truncate(267);  // the step from 267 sees 168..267
  std::vector<float> got(93 * d);
  mha.Decode(context, {x.data() + 267 * d, 1, 93, d}, cache, {got.data(), 1, 93, d});
  const std::vector<float> full = CausalForward(mha, x, 1, 600, d);
  const std::vector<float> want = Rows(full, d, 267, 93);
  EXPECT_LE(MaxAbsDiff(got, want), 256 * kFloatEps * BoundScale(want));

  // Rolled back to 300, one step to 301 overwrites nothing older: the ring still starts at 168.
  KvCache again(mha, 600, 1);
  fill(again);
  again.Truncate(300);
  mha.Decode(context, {x.data() + 300 * d, 1, 1, d}, again, {out.data(), 1, 1, d});
  ExpectError([&] { again.Truncate(250); }, {"length", "at least 267", "ring of 192 slots"});
  EXPECT_EQ(again.length(), 301u);
}

// A step that does not reach the ring's last slot, in a ring that has wrapped: the slots after it
// still hold positions its first rows see (a step of 93 from 256 writes slots 64..156, and its
// first row sees position 157 in slot 157). 600 positions in steps of up to 93.
TEST(WindowedRingTest, StepInsideAWrappedRingKeepsTheSlotsAfterIt) {
  const WindowOf100 w;
  const std::size_t d = WindowOf100::kD;
  const std::vector<float> full = CausalForward(w.mha, w.x, 1, 600, d);
  Context context(1);
  KvCache cache(w.mha, 600, 1);
  std::vector<float> out(93 * d);
  std::size_t first = 0;
  for (std::size_t n : {90, 90, 76, 93, 93, 93, 65}) {
    out.resize(n * d);
    w.mha.Decode(context, {w.x.data() + first * d, 1, n, d}, cache, {out.data(), 1, n, d});
    const std::vector<float> want = Rows(full, d, first, n);
    ASSERT_LE(MaxAbsDiff(out, want), 256 * kFloatEps * BoundScale(want)) << "step at " << first;
    first += n;
  }
  EXPECT_EQ(cache.length(), 600u);
}

// Clear starts every ring again, as a fresh cache: a rollback within the new positions is
// allowed, and the steps after it give what a fresh cache gives.
TEST(WindowedRingTest, ClearedWrappedRingStartsAgain) {
  const WindowOf100 w;
  const std::size_t d = WindowOf100::kD;
  Context context(1);
  KvCache cache(w.mha, 600, 1), fresh(w.mha, 600, 1);
  std::vector<float> out(90 * d), got(30 * d), want(30 * d);
  for (std::size_t first = 0; first < 360; first += 90) {  // wrapped: holds 168..359
    w.mha.Decode(context, {w.x.data() + first * d, 1, 90, d}, cache, {out.data(), 1, 90, d});
  }
  cache.Clear();
  EXPECT_EQ(cache.length(), 0u);
  for (KvCache* c : {&cache, &fresh}) {
    w.mha.Decode(context, {w.x.data(), 1, 90, d}, *c, {out.data(), 1, 90, d});
    c->Truncate(50);
  }
  w.mha.Decode(context, {w.x.data() + 50 * d, 1, 30, d}, cache, {got.data(), 1, 30, d});
  w.mha.Decode(context, {w.x.data() + 50 * d, 1, 30, d}, fresh, {want.data(), 1, 30, d});
  EXPECT_EQ(got, want);
}

// Reorder moves what each ring still holds with its sequence: a short sequence that becomes a
// copy of a wrapped one can no longer roll back past that ring's window.
TEST(WindowedRingTest, ReorderedSequenceTakesTheRingsLimit) {
  const WindowOf100 w;
  const std::size_t d = WindowOf100::kD;
  Context context(1);
  KvCache cache(w.mha, 600, 2);
  std::vector<float> in(2 * 90 * d), out(2 * 90 * d);
  for (std::size_t step = 0; step < 4; ++step) {  // sequence 0: 360 positions, sequence 1: 10
    const std::size_t lengths[2] = {90, step == 0 ? std::size_t{10} : 0};
    std::memcpy(in.data(), w.x.data() + step * 90 * d, 90 * d * sizeof(float));
    w.mha.Decode(context, {in.data(), 2, 90, d}, cache, {out.data(), 2, 90, d}, {lengths, 2});
  }
  const std::size_t indices[2] = {0, 0};
  cache.Reorder({indices, 2});
  ASSERT_EQ(cache.length(1), 360u);
  const std::size_t far[2] = {360, 266};
  ExpectError([&] { cache.Truncate({far, 2}); },
              {"lengths[1]", "at least 267", "ring of 192 slots"});
  EXPECT_EQ(cache.length(1), 360u);
}

// A step that fails keeps the cache's length, but once it has written its ring slots the
// positions they held are gone: Truncate refuses a rollback whose window needs them (it accepted
// it, and the next steps read the failed step's keys in their place), and whatever it accepts
// decodes as a cache that never saw the failure. (The executor failing at call n fails a step
// after its phases before it, the K/V pack among them from some n on.)
TEST(WindowedRingTest, FailedStepForgetsWhatItsRingSlotsHeld) {
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

// A step refused before it writes a slot (an fp16 cache's range check on the projected keys)
// leaves the ring as it was: Truncate rolls back as far as before, and the steps after decode
// as on a cache that never saw the refused one.
TEST(WindowedRingTest, StepRefusedBeforeWritingLeavesTheRing) {
  const WindowOf100 w;
  const std::size_t d = WindowOf100::kD;
  KvCacheOptions fp16;
  fp16.format = KvFormat::kFp16;
  Context context(1);
  std::vector<float> out(93 * d), want(60 * d), again(60 * d);
  const auto fill_and_roll_back = [&](KvCache& cache) {  // to 300: the window needs 201..299
    for (std::size_t first = 0; first < 360; first += 90) {
      w.mha.Decode(context, {w.x.data() + first * d, 1, 90, d}, cache, {out.data(), 1, 90, d});
    }
  };
  KvCache reference(w.mha, 600, 1, fp16), cache(w.mha, 600, 1, fp16);
  fill_and_roll_back(reference);
  fill_and_roll_back(cache);
  std::vector<float> huge(w.x.begin() + 360 * d, w.x.begin() + 453 * d);
  for (float& v : huge) v *= 1e6f;  // keys and values past fp16's 65504
  ExpectError(
      [&] {
        w.mha.Decode(context, {huge.data(), 1, 93, d}, cache, {out.data(), 1, 93, d});
      },
      {"x", "fp16"});
  EXPECT_EQ(cache.length(), 360u);
  reference.Truncate(300);
  cache.Truncate(300);
  w.mha.Decode(context, {w.x.data() + 300 * d, 1, 60, d}, reference, {want.data(), 1, 60, d});
  w.mha.Decode(context, {w.x.data() + 300 * d, 1, 60, d}, cache, {again.data(), 1, 60, d});
  EXPECT_EQ(MaxAbsDiff(again, want), 0.0);
}

// A step longer than an empty ring names what the ring takes, and an operator that sees more
// than the ring's window (none, or a wider one) is refused the cache; a narrower one decodes.
TEST(WindowedRingTest, WindowedCacheLimitsAreNamed) {
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
TEST(WindowedRingTest, WrappedRingTruncatedToNothingStartsAgain) {
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
  // Sequence 0, truncated to nothing per sequence, started again too: it rolls back within its
  // new positions while sequence 1 keeps its length.
  const std::size_t steps[] = {20, 0};
  std::vector<float> step(2 * 20 * d), out(2 * 20 * d);
  mha.Decode(context, {step.data(), 2, 20, d}, cache, {out.data(), 2, 20, d}, {steps, 2});
  const std::size_t back[] = {10, 154};
  cache.Truncate({back, 2});
  EXPECT_EQ(cache.length(0), 10u);
  EXPECT_EQ(cache.length(1), 154u);
}

// A windowed cache whose slots hold its max_length never wraps: it serves an operator with no
// window or a wider one as a plain cache does.
TEST(WindowedRingTest, RingThatNeverWrapsServesWiderWindows) {
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
TEST(WindowedRingTest, WindowedRaggedDecodeAndReorder) {
  AttentionMath math = Rotary(RotaryLayout::kHalves, 0);
  math.window = 40;  // 128 slots
  const MathModel model(math, true, 32, 2);
  const std::size_t d = 32, length = 400;
  const MultiheadAttention mha(model.config(Precision::kFp32), model.view());
  const std::vector<float> x = RandomNormal(2 * length * d, 30);
  const std::vector<float> full = CausalForward(mha, x, 2, length, d);
  Context context(2);
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
      ASSERT_LE(MaxAbsDiff(got, want), 256 * kFloatEps * BoundScale(want))
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

}  // namespace
}  // namespace edgeattn
