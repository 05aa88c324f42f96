// Decode scenarios against an independent answer: every sequence's history is kept as its input
// rows, and each step's output rows must be the last rows of a causal (windowed) forward call
// over that history. Rings that wrap several times, rollbacks at the wrap, beams reordered with
// repeats and drops, ragged steps with empty and long items, rotary positions, grouped-query
// heads and every cache format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "tests/expect_error.h"
#include "tests/runtime/math_model.h"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::BoundScale;
using testing_support::Cosine;
using testing_support::GqaModel;
using testing_support::kFloatEps;
using testing_support::MaxAbs;
using testing_support::MaxAbsDiff;
using testing_support::RandomNormal;
using testing_support::TestRandom;

// A cache and the input rows each of its sequences holds.
struct ScenarioDecoder {
  const MultiheadAttention* op;  // the operator of the next steps (and of their forward)
  KvCache cache;
  Context context{2};
  std::vector<std::vector<float>> history;
  TestRandom rng{99};
  std::size_t steps = 0;
  bool in_place = false;  // out written over x
  float padding = 0.0f;   // 0: random rows past the step lengths, else this value
  float scale = 1.0f;     // of the random rows

  ScenarioDecoder(const MultiheadAttention& m, std::size_t max_length, std::size_t batch,
                  const KvCacheOptions& options)
      : op(&m), cache(m, max_length, batch, options), history(batch) {}

  std::size_t d() const { return op->config().d_model; }

  // The causal forward over sequence b's history: what its decode steps must reproduce. With a
  // window, over the rows its last n rows see only, at their positions in the sequence.
  std::vector<float> Want(std::size_t b, std::size_t n) {
    const std::size_t length = history[b].size() / d(), window = op->config().math.window;
    const std::size_t first = window != 0 && length > n + window ? length - n - window : 0;
    std::vector<std::size_t> positions(length - first);
    for (std::size_t i = 0; i < positions.size(); ++i) positions[i] = first + i;
    ForwardOptions causal;
    causal.is_causal = true;
    if (op->config().math.rotary != RotaryLayout::kNone) {
      causal.positions = {positions.data(), positions.size()};
      causal.key_positions = causal.positions;
    }
    const ConstTensor rows{history[b].data() + first * d(), 1, positions.size(), d()};
    std::vector<float> full(positions.size() * d());
    Context one(1);
    op->Forward(one, rows, {full.data(), 1, positions.size(), d()}, causal);
    return std::vector<float>(full.end() - n * d(), full.end());
  }

  // One step of lengths[b] new rows per sequence, x.length = the longest (+ pad), checked.
  void Step(const std::vector<std::size_t>& lengths, std::size_t pad = 0, bool ragged = true) {
    ++steps;
    const std::size_t batch = lengths.size();
    const std::size_t n = *std::max_element(lengths.begin(), lengths.end()) + pad;
    std::vector<float> x(batch * n * d());
    for (float& v : x) v = static_cast<float>(rng.Normal()) * scale;
    if (padding != 0.0f) {
      for (std::size_t b = 0; b < batch; ++b) {
        std::fill(x.begin() + (b * n + lengths[b]) * d(), x.begin() + (b + 1) * n * d(), padding);
      }
    }
    const std::vector<float> input = x;
    std::vector<float> separate(x.size(), std::numeric_limits<float>::quiet_NaN());
    std::vector<float>& out = in_place ? x : separate;
    if (ragged) {
      op->Decode(context, {x.data(), batch, n, d()}, cache, {out.data(), batch, n, d()},
                 {lengths.data(), batch});
    } else {
      op->Decode(context, {x.data(), batch, n, d()}, cache, {out.data(), batch, n, d()});
    }
    for (std::size_t b = 0; b < batch; ++b) {
      const float* rows = input.data() + b * n * d();
      history[b].insert(history[b].end(), rows, rows + lengths[b] * d());
      ASSERT_EQ(cache.length(b), history[b].size() / d()) << "step " << steps << " item " << b;
      const std::vector<float> got(out.begin() + b * n * d(),
                                   out.begin() + (b * n + lengths[b]) * d());
      const std::vector<float> zeros(out.begin() + (b * n + lengths[b]) * d(),
                                     out.begin() + (b + 1) * n * d());
      for (float v : zeros) ASSERT_EQ(v, 0.0f) << "step " << steps << " item " << b << " padding";
      if (lengths[b] == 0) continue;
      const std::vector<float> want = Want(b, lengths[b]);
      if (cache.format() == KvFormat::kFp32 && op->config().precision == Precision::kFp32) {
        // Relative to the output's size when the rows are scaled down.
        const double size = scale < 1.0f ? MaxAbs(want) : BoundScale(want);
        ASSERT_LE(MaxAbsDiff(got, want), 256 * kFloatEps * size)
            << "step " << steps << " item " << b << " at " << cache.length(b);
      } else {
        const double bound = cache.format() == KvFormat::kInt8 ? 0.999 : 0.9995;
        ASSERT_GE(Cosine(got, want), bound)
            << "step " << steps << " item " << b << " at " << cache.length(b) << " "
            << KvFormatName(cache.format());
      }
    }
  }

  void Truncate(const std::vector<std::size_t>& keep) {
    cache.Truncate({keep.data(), keep.size()});
    for (std::size_t b = 0; b < keep.size(); ++b) history[b].resize(keep[b] * d());
  }

  void Reorder(const std::vector<std::size_t>& indices) {
    cache.Reorder({indices.data(), indices.size()});
    std::vector<std::vector<float>> moved;
    for (std::size_t i : indices) moved.push_back(history[i]);
    history = moved;
  }

  void Clear() {
    cache.Clear();
    for (auto& h : history) h.clear();
  }
};

Config ScenarioConfig(const GqaModel& model, std::size_t window, RotaryLayout rotary) {
  Config c = model.config;
  c.math.window = window;
  c.math.rotary = rotary;
  c.math.rotary_base = 500.0f;
  return c;
}

KvCacheOptions InFormat(KvFormat format) {
  KvCacheOptions options;
  options.format = format;
  return options;
}

constexpr KvFormat kEveryFormat[] = {KvFormat::kFp32, KvFormat::kBf16, KvFormat::kFp16,
                                     KvFormat::kInt8};

// A ring (window 40: 128 slots) wrapped three times, then speculative steps verified and
// rejected exactly at the wrap point (length 384 = 3 x 128), accepted up to it, then on.
TEST(DecodeScenarioTest, SpeculativeRollbackAtTheRingsWrap) {
  const GqaModel model(64, 4, 2, 31);
  const MultiheadAttention mha(ScenarioConfig(model, 40, RotaryLayout::kHalves), model.view());
  for (KvFormat format : kEveryFormat) {
    SCOPED_TRACE(KvFormatName(format));
    const KvCacheOptions options = InFormat(format);
    ScenarioDecoder s(mha, 2000, 2, options);
    ASSERT_EQ(s.cache.slots(), 128u);
    while (s.cache.length(0) + 89 <= 384) s.Step({89, 89});
    s.Step({384 - s.cache.length(0), 384 - s.cache.length(1)});
    ASSERT_EQ(s.cache.length(0), 384u);
    for (std::size_t k : {1, 5, 40, 89}) {  // rejected wholly: back to the wrap point
      s.Step({k, k});
      s.Truncate({384, 384});
      if (HasFatalFailure()) return;
    }
    s.Step({3, 7});  // 387, 391
    s.Truncate({384, 385});
    s.Step({1, 1});  // 385, 386
    s.Step({89, 89});
    // Accepted exactly up to the next wrap (512) from a step across it.
    s.Step({512 - s.cache.length(0) + 6, 512 - s.cache.length(1) + 6});
    s.Truncate({512, 512});
    for (int i = 0; i < 10; ++i) s.Step({1, 2});
    s.Truncate({s.cache.length(0) - 9, s.cache.length(1) - 20});
    for (int i = 0; i < 5; ++i) s.Step({13, 1});
    if (HasFatalFailure()) return;
  }
}

// Beams reordered (repeats and drops) after the ring wrapped, in every format, on grouped-query
// and multi-query heads with rotary keys: each beam continues its own history and positions.
TEST(DecodeScenarioTest, BeamsAfterTheRingWrapped) {
  for (std::size_t kv_heads : {2, 1}) {
    const GqaModel model(64, 4, kv_heads, 33);
    const MultiheadAttention mha(ScenarioConfig(model, 40, RotaryLayout::kInterleaved),
                                 model.view());
    for (KvFormat format : kEveryFormat) {
      SCOPED_TRACE(::testing::Message() << KvFormatName(format) << " kv_heads " << kv_heads);
      const KvCacheOptions options = InFormat(format);
      ScenarioDecoder s(mha, 2000, 4, options);
      s.Step({80, 50, 0, 89});
      s.Step({89, 0, 30, 89});
      s.Step({60, 89, 89, 2});  // 229, 139, 119, 180: rings 0, 1, 3 wrapped
      s.Reorder({3, 3, 0, 1});  // 2 dropped, 3 forked
      for (int i = 0; i < 3; ++i) s.Step({1, 1, 1, 1});
      s.Truncate(
          {s.cache.length(0) - 2, s.cache.length(1), s.cache.length(2) - 3, s.cache.length(3) - 1});
      s.Reorder({2, 0, 2, 3});
      s.Step({5, 1, 7, 0});
      s.Reorder({1, 2, 3, 0});  // a cycle
      for (int i = 0; i < 4; ++i) s.Step({20, 3, 1, 89});
      if (HasFatalFailure()) return;
    }
  }
}

// Ragged steps where one item runs far ahead (its ring wraps many times) while another stays
// empty, then joins: its first step sees only its own rows.
TEST(DecodeScenarioTest, RaggedItemsAcrossWraps) {
  const GqaModel model(64, 8, 2, 35);
  const MultiheadAttention mha(ScenarioConfig(model, 100, RotaryLayout::kHalves), model.view());
  for (KvFormat format : kEveryFormat) {
    SCOPED_TRACE(KvFormatName(format));
    const KvCacheOptions options = InFormat(format);
    ScenarioDecoder s(mha, 5000, 3, options);
    ASSERT_EQ(s.cache.slots(), 192u);
    for (int i = 0; i < 12; ++i) s.Step({93, i % 4 == 0 ? std::size_t{1} : 0, 0}, i % 3);
    s.Step({93, 5, 93});
    s.Step({1, 1, 1}, 0, false);
    s.Step({0, 93, 0}, 2);
    s.Reorder({2, 0, 0});
    s.Step({93, 93, 1});
    if (HasFatalFailure()) return;
  }
}

// An fp16 cache refuses a ragged step whose one item overflows fp16, before anything is stored:
// every sequence, wrapped or not, then decodes on as if the step had never been tried.
TEST(DecodeScenarioTest, Fp16RefusalInARaggedBatchLeavesEveryItem) {
  const GqaModel model(64, 4, 2, 41);
  const MultiheadAttention mha(ScenarioConfig(model, 40, RotaryLayout::kHalves), model.view());
  const KvCacheOptions options = InFormat(KvFormat::kFp16);
  ScenarioDecoder s(mha, 1000, 3, options);
  for (int i = 0; i < 3; ++i) s.Step({89, 5, 0});
  const std::size_t d = 64, n = 89;
  const std::size_t lengths[3] = {89, 89, 1};
  std::vector<float> x = RandomNormal(3 * n * d, 4), out(x.size());
  for (std::size_t i = 0; i < d; ++i) x[2 * n * d + i] *= 1e6f;  // item 2's only row
  testing_support::ExpectError(
      [&] {
        s.op->Decode(s.context, {x.data(), 3, n, d}, s.cache, {out.data(), 3, n, d}, {lengths, 3});
      },
      {"x", "fp16"});
  EXPECT_EQ(s.cache.length(0), 267u);
  s.Truncate({267 - 128 + 39, 15, 0});  // as far back as item 0's ring allows
  s.Step({89, 89, 3});
}

// Operators of the same weights with narrower windows (and none, on a ring that never wraps)
// take turns on one cache: each step attends its own operator's window over the same keys.
TEST(DecodeScenarioTest, NarrowerWindowsShareTheRing) {
  const GqaModel model(64, 4, 2, 43);
  const MultiheadAttention wide(ScenarioConfig(model, 40, RotaryLayout::kHalves), model.view()),
      narrow(ScenarioConfig(model, 16, RotaryLayout::kHalves), model.view()),
      one(ScenarioConfig(model, 1, RotaryLayout::kHalves), model.view()),
      none(ScenarioConfig(model, 0, RotaryLayout::kHalves), model.view());
  for (KvFormat format : kEveryFormat) {
    SCOPED_TRACE(KvFormatName(format));
    const KvCacheOptions options = InFormat(format);
    ScenarioDecoder s(wide, 1000, 2, options);
    const MultiheadAttention* turns[] = {&wide, &narrow, &one, &narrow};
    for (int i = 0; i < 12; ++i) {
      s.op = turns[i % 4];
      s.Step({89, std::size_t(i % 3) * 40});
      if (i == 6) s.Truncate({s.cache.length(0) - 89, s.cache.length(1) - 50});
    }
    s.op = &wide;
    s.Reorder({1, 0});
    s.Step({1, 1});
    // A windowed cache whose slots hold max_length never wraps: any operator reads it.
    ScenarioDecoder flat(narrow, 101, 2, options);  // odd: int8 pairs a last position with none
    ASSERT_EQ(flat.cache.slots(), 101u);
    const MultiheadAttention* flat_turns[] = {&none, &narrow, &wide, &one};
    for (int i = 0; i < 10; ++i) {
      flat.op = flat_turns[i % 4];
      flat.Step({9, std::size_t(i % 2) * 10});
      if (i == 4) flat.Truncate({flat.cache.length(0) - 12, 3});
    }
    if (HasFatalFailure()) return;
  }
}

// A cleared cache that held wrapped, ragged and reordered sequences decodes a new batch as a
// fresh one does.
TEST(DecodeScenarioTest, ClearedCacheDecodesAgain) {
  const GqaModel model(64, 4, 2, 37);
  const MultiheadAttention mha(ScenarioConfig(model, 40, RotaryLayout::kHalves), model.view());
  for (KvFormat format : kEveryFormat) {
    SCOPED_TRACE(KvFormatName(format));
    const KvCacheOptions options = InFormat(format);
    ScenarioDecoder s(mha, 1000, 3, options);
    for (int i = 0; i < 4; ++i) s.Step({89, 17, 0});
    s.Reorder({1, 0, 0});
    s.Clear();
    s.Step({3, 0, 1});
    s.Step({1, 1, 1});
    s.Truncate({1, 0, 0});
    s.Step({50, 60, 70});
    if (HasFatalFailure()) return;
  }
}

// Without a window: a plain cache with odd lengths, rollbacks to odd lengths (int8 values are
// stored as pairs of positions), beams and long multi-position steps.
TEST(DecodeScenarioTest, PlainCacheOddRollbacksAndBeams) {
  const GqaModel model(64, 4, 1, 39);
  const MultiheadAttention mha(ScenarioConfig(model, 0, RotaryLayout::kHalves), model.view());
  for (KvFormat format : kEveryFormat) {
    SCOPED_TRACE(KvFormatName(format));
    const KvCacheOptions options = InFormat(format);
    ScenarioDecoder s(mha, 1201, 3, options);
    s.Step({65, 1, 0});
    s.Step({1, 64, 129});
    s.Truncate({65, 63, 127});
    s.Step({1, 1, 1});
    s.Reorder({2, 2, 1});
    s.Step({255, 2, 3});
    s.Truncate({s.cache.length(0) - 1, s.cache.length(1) - 3, s.cache.length(2)});
    s.Step({256, 257, 1});
    s.Step({s.cache.max_length() - s.cache.length(0), 1, 0});
    // A full sequence (its last panel partly filled) copied onto others, then rolled back.
    s.Reorder({0, 0, 1});
    s.Truncate({s.cache.max_length() - 1, s.cache.max_length() - 3, s.cache.length(2) - 1});
    s.Step({1, 3, 2});
    if (HasFatalFailure()) return;
  }
}

// Which position each ring slot of one sequence holds (-1: none), as the docs describe the ring:
// position p lives in slot p % slots; a rollback to L is possible when L is 0 or the ring holds
// every position the step from L sees (L - window + 1 .. L - 1).
struct RingModel {
  std::size_t slots, window;
  std::vector<long> held;
  RingModel(std::size_t s, std::size_t w) : slots(s), window(w), held(s, -1) {}
  void Write(std::size_t from, std::size_t n) {
    for (std::size_t p = from; p < from + n; ++p) held[p % slots] = static_cast<long>(p);
  }
  bool CanTruncateTo(std::size_t length) const {
    if (length == 0) return true;
    const std::size_t first = length >= window ? length - window + 1 : 0;
    for (std::size_t p = first; p < length; ++p) {
      if (held[p % slots] != static_cast<long>(p)) return false;
    }
    return true;
  }
  void Reset() { std::fill(held.begin(), held.end(), -1); }
};

// Random ragged steps, per-sequence rollbacks (accepted exactly when the ring model says the
// ring holds what the next step needs), Truncate(0), Reorder and Clear, every step against the
// causal windowed forward over each sequence's own history.
void FuzzRing(const MultiheadAttention& mha, KvFormat format, std::uint64_t seed, int ops) {
  const std::size_t window = mha.config().math.window;
  SCOPED_TRACE(::testing::Message() << KvFormatName(format) << " window " << window << " kv_heads "
                                    << mha.config().num_kv_heads << " "
                                    << PrecisionName(mha.config().precision) << " seed " << seed);
  const std::size_t batch = 3;
  const KvCacheOptions options = InFormat(format);
  ScenarioDecoder s(mha, 100000, batch, options);
  const std::size_t slots = s.cache.slots();
  const std::size_t most = std::min<std::size_t>(slots - window + 1, 150);
  std::vector<RingModel> rings(batch, RingModel(slots, window));
  TestRandom rng(seed);
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng.Next() % n); };
  for (int op = 0; op < ops; ++op) {
    const std::size_t kind = pick(10);
    if (kind < 5) {  // a ragged step
      std::vector<std::size_t> lengths(batch);
      for (std::size_t b = 0; b < batch; ++b) {
        const std::size_t r = pick(4);
        lengths[b] = r == 0 ? 0 : r == 1 ? 1 : r == 2 ? 1 + pick(most) : most;
        if (s.cache.length(b) == 0) lengths[b] = std::min(lengths[b], slots);
      }
      const std::size_t pad = pick(3);
      s.Step(lengths, *std::max_element(lengths.begin(), lengths.end()) == 0 ? pad + 1 : pad);
      for (std::size_t b = 0; b < batch; ++b) {
        rings[b].Write(s.cache.length(b) - lengths[b], lengths[b]);
      }
    } else if (kind < 8) {  // roll one sequence back
      const std::size_t b = pick(batch), length = s.cache.length(b);
      const std::size_t back = pick(3) == 0 ? pick(length + 1) : pick(std::min(length, most) + 1);
      std::vector<std::size_t> keep(batch);
      for (std::size_t i = 0; i < batch; ++i) keep[i] = s.cache.length(i);
      keep[b] = length - back;
      const bool expect = rings[b].CanTruncateTo(keep[b]);
      bool accepted = true;
      try {
        s.Truncate(keep);
      } catch (const Error&) {
        accepted = false;
      }
      ASSERT_EQ(accepted, expect) << "op " << op << ": Truncate sequence " << b << " from "
                                  << length << " to " << keep[b];
      if (accepted && keep[b] == 0) rings[b].Reset();
    } else if (kind < 9) {
      std::vector<std::size_t> indices(batch);
      for (std::size_t& i : indices) i = pick(batch);
      s.Reorder(indices);
      std::vector<RingModel> moved;
      for (std::size_t i : indices) moved.push_back(rings[i]);
      rings = moved;
    } else if (pick(4) == 0) {
      s.Clear();
      for (RingModel& r : rings) r.Reset();
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
}

void FuzzRing(KvFormat format, std::size_t window, std::size_t kv_heads, std::uint64_t seed,
              int ops, Precision precision = Precision::kFp32) {
  const GqaModel model(32, 4, kv_heads, 50 + seed);
  Config config = ScenarioConfig(model, window, RotaryLayout::kHalves);
  config.precision = precision;
  FuzzRing(MultiheadAttention(config, model.view()), format, seed, ops);
}

TEST(DecodeScenarioTest, RandomRingOperationsFollowTheForward) {
  std::uint64_t seed = 1;
  for (KvFormat format : kEveryFormat) {
    for (std::size_t window : {1, 40, 64, 65}) {
      FuzzRing(format, window, window % 2 + 1, seed++, 120);
      if (HasFatalFailure()) return;
    }
  }
}

// Steps written over their input, padding rows of NaN or past fp16's range (never projected
// into the cache, never range-checked), int8 projections.
TEST(DecodeScenarioTest, InPlaceStepsAndHostilePadding) {
  const GqaModel model(64, 4, 2, 45);
  for (Precision precision : {Precision::kFp32, Precision::kInt8}) {
    Config config = ScenarioConfig(model, 40, RotaryLayout::kHalves);
    config.precision = precision;
    const MultiheadAttention mha(config, model.view());
    for (KvFormat format : kEveryFormat) {
      for (float padding : {std::numeric_limits<float>::quiet_NaN(), 1e30f}) {
        SCOPED_TRACE(::testing::Message() << KvFormatName(format) << " " << PrecisionName(precision)
                                          << " padding " << padding);
        const KvCacheOptions options = InFormat(format);
        ScenarioDecoder s(mha, 1000, 3, options);
        s.padding = padding;
        for (int i = 0; i < 6; ++i) {
          s.in_place = i % 2 == 1;
          s.Step({89, std::size_t(i) * 7, i % 3 == 0 ? std::size_t{1} : 0}, 3);
          if (HasFatalFailure()) return;
        }
        s.Reorder({2, 0, 1});
        s.in_place = true;
        s.Step({1, 89, 30}, 1);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Inputs far from 1 (no biases, Q/K norm keeping the scores finite): values near 1e-30 take the
// int8 P V's scaled path for tiny products, values near 1e30 the formats' range, through a ring.
TEST(DecodeScenarioTest, TinyAndHugeValuesThroughTheRing) {
  AttentionMath math;
  math.qk_norm = true;
  math.window = 40;
  math.rotary = RotaryLayout::kHalves;
  testing_support::MathModel model(math, false, 64, 4);
  for (auto* bias : {&model.base.bq, &model.base.bk, &model.base.bv, &model.base.bo}) {
    std::fill(bias->begin(), bias->end(), 0.0f);
  }
  const MultiheadAttention mha(model.config(Precision::kFp32), model.view());
  for (float scale : {1e-36f, 1e-33f, 1e-30f, 1e-20f, 1e20f, 1e30f, 1e33f}) {
    for (KvFormat format : {KvFormat::kFp32, KvFormat::kBf16, KvFormat::kInt8}) {
      SCOPED_TRACE(::testing::Message() << KvFormatName(format) << " scale " << scale);
      const KvCacheOptions options = InFormat(format);
      ScenarioDecoder s(mha, 1000, 2, options);
      s.scale = scale;
      for (int i = 0; i < 5; ++i) s.Step({89, std::size_t(i) * 20});
      s.Truncate({s.cache.length(0) - 50, 0});
      s.Reorder({1, 0});
      s.Step({1, 89});
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace edgeattn
