// Cross-attention against a CrossAttentionMemory gives what Forward over the encoder output it
// was projected from gives, bit for bit, for beams mapped onto memory items, padded batches,
// either precision, head grouping and any thread count; bad arguments are named errors.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "tests/expect_error.h"
#include "tests/runtime/math_model.h"
#include "tests/runtime/test_model.h"
#include "tests/runtime/throwing_executor.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::ExpectError;
using testing_support::GqaModel;
using testing_support::MathModel;
using testing_support::RandomNormal;
using testing_support::ThrowingExecutor;

// Items `items` of x [batch, length, d], one after another.
std::vector<float> GatherItems(const std::vector<float>& x, std::size_t length, std::size_t d,
                          const std::vector<std::size_t>& items) {
  std::vector<float> out;
  for (std::size_t m : items) {
    out.insert(out.end(), x.begin() + m * length * d, x.begin() + (m + 1) * length * d);
  }
  return out;
}

struct CrossCase {
  std::size_t d, heads, kv_heads, memory_batch, frames, steps;
  std::vector<std::size_t> items;        // memory item of each query item
  std::vector<std::size_t> key_lengths;  // empty: every frame
  Precision precision;
  KvFormat kv_format = KvFormat::kFp32;
};

void CheckCrossSteps(const CrossCase& c) {
  SCOPED_TRACE(::testing::Message() << "d=" << c.d << " heads=" << c.heads << "/" << c.kv_heads
                                    << " frames=" << c.frames << " beams=" << c.items.size()
                                    << (c.precision == Precision::kInt8 ? " int8" : " fp32")
                                    << " K/V " << KvFormatName(c.kv_format));
  const std::size_t d = c.d, beams = c.items.size();
  const GqaModel model(d, c.heads, c.kv_heads, 40 + d);
  Config config = model.with(c.precision);
  config.kv_format = c.kv_format;
  const MultiheadAttention mha(config, model.view());
  const std::vector<float> encoder = RandomNormal(c.memory_batch * c.frames * d, 7);
  const std::vector<float> query = RandomNormal(beams * c.steps * d, 8);
  // What each step must give: Forward over the encoder output of each beam's item.
  const std::vector<float> keys = GatherItems(encoder, c.frames, d, c.items);
  std::vector<std::size_t> beam_lengths;
  for (std::size_t m : c.items) {
    beam_lengths.push_back(c.key_lengths.empty() ? c.frames : c.key_lengths[m]);
  }
  ForwardOptions options;
  if (!c.key_lengths.empty()) options.key_lengths = {beam_lengths.data(), beams};
  std::vector<float> want(query.size());
  Context one(1);
  mha.Forward(one, {query.data(), beams, c.steps, d}, {keys.data(), beams, c.frames, d},
              {keys.data(), beams, c.frames, d}, {want.data(), beams, c.steps, d}, options);

  for (std::size_t threads : {1, 3}) {
    Context context(threads);
    CrossAttentionMemory memory(mha, c.frames + 5, c.memory_batch);
    const Span<const std::size_t> lengths{c.key_lengths.data(), c.key_lengths.size()};
    mha.ProjectMemory(context, {encoder.data(), c.memory_batch, c.frames, d}, memory, lengths);
    ASSERT_EQ(memory.length(), c.frames);
    // One decoder position at a time, as a decoder runs; all beams in one call.
    for (std::size_t t = 0; t < c.steps; ++t) {
      std::vector<float> step(beams * d), out(beams * d);
      for (std::size_t b = 0; b < beams; ++b) {
        std::memcpy(&step[b * d], &query[(b * c.steps + t) * d], d * sizeof(float));
      }
      mha.DecodeCross(context, {step.data(), beams, 1, d}, memory, {out.data(), beams, 1, d},
                      {c.items.data(), beams});
      for (std::size_t b = 0; b < beams; ++b) {
        ASSERT_EQ(0, std::memcmp(&out[b * d], &want[(b * c.steps + t) * d], d * sizeof(float)))
            << "threads " << threads << " step " << t << " beam " << b;
      }
    }
  }
}

TEST(CrossAttentionMemoryTest, StepsEqualForwardOverTheEncoderOutput) {
  CheckCrossSteps({48, 6, 6, 1, 150, 3, {0, 0, 0, 0}, {}, Precision::kFp32});       // beams of one
  CheckCrossSteps({48, 6, 2, 2, 70, 2, {1, 0, 1}, {}, Precision::kFp32});           // GQA, mapped
  CheckCrossSteps({32, 4, 4, 3, 65, 2, {2, 0, 1}, {65, 17, 1}, Precision::kFp32});  // padded
  CheckCrossSteps({64, 8, 8, 2, 129, 2, {0, 1, 1, 0}, {100, 129}, Precision::kInt8});
  CheckCrossSteps({32, 1, 1, 1, 3, 2, {0}, {}, Precision::kInt8});
  // One-position steps of grouped-query heads run each group as one core call's rows; Forward
  // over several positions runs head by head: the same bits in every K/V format.
  for (KvFormat format : {KvFormat::kBf16, KvFormat::kFp16, KvFormat::kInt8}) {
    CheckCrossSteps({48, 6, 2, 2, 70, 2, {1, 0, 1}, {}, Precision::kFp32, format});
  }
  CheckCrossSteps({64, 8, 2, 2, 129, 2, {0, 1, 1, 0}, {100, 129}, Precision::kInt8});
  // Forward reads fp32 values where it projected them, a memory packs them: head widths off a
  // vector's multiple (the core reads past each row's values), padded items, grouped and
  // multi-query heads.
  CheckCrossSteps({51, 3, 3, 2, 70, 2, {1, 0, 1}, {70, 33}, Precision::kFp32});
  CheckCrossSteps({20, 4, 2, 2, 65, 2, {0, 1}, {65, 1}, Precision::kFp32});
  CheckCrossSteps({9, 3, 1, 1, 17, 2, {0, 0}, {}, Precision::kFp32});
}

// One memory in each K/V format (Config::kv_format), projected three times over (the longest
// output, a shorter one, one in between) with per-item lengths that include 0, read by beams
// mapped many to one in steps of 1 to 3 rows: each step equals Forward over the encoder output
// it was last projected from, bit for bit, with grouped-query and multi-query heads.
TEST(CrossAttentionMemoryTest, ReprojectedMemoryInEveryFormatServesManySteps) {
  const std::size_t d = 64, items = 3, max_frames = 300;
  const std::size_t frames[] = {300, 37, 257};
  const std::vector<std::size_t> lengths[] = {{300, 0, 129}, {1, 37, 0}, {256, 257, 64}};
  const std::vector<std::size_t> beam_items[] = {{1, 0, 2, 0, 1}, {2, 2, 0, 1, 1}};
  for (KvFormat format : {KvFormat::kFp32, KvFormat::kBf16, KvFormat::kFp16, KvFormat::kInt8}) {
    for (std::size_t kv_heads : {2, 1}) {
      const GqaModel model(d, 4, kv_heads, 77);
      Config config = model.with(kv_heads == 1 ? Precision::kInt8 : Precision::kFp32);
      config.kv_format = format;
      const MultiheadAttention mha(config, model.view());
      CrossAttentionMemory memory(mha, max_frames, items);
      Context context(2), one(1);
      for (std::size_t p = 0; p < 3; ++p) {
        const std::vector<float> encoder = RandomNormal(items * frames[p] * d, 10 + p);
        mha.ProjectMemory(context, {encoder.data(), items, frames[p], d}, memory,
                          {lengths[p].data(), items});
        for (std::size_t step = 0; step < 4; ++step) {
          const std::vector<std::size_t>& beams = beam_items[step % 2];
          const std::size_t n = step % 3 + 1, b_count = beams.size();
          const std::vector<float> query = RandomNormal(b_count * n * d, 100 + 7 * step + p);
          std::vector<float> got(query.size()), want(query.size());
          mha.DecodeCross(context, {query.data(), b_count, n, d}, memory,
                          {got.data(), b_count, n, d}, {beams.data(), b_count});
          const std::vector<float> keys = GatherItems(encoder, frames[p], d, beams);
          std::vector<std::size_t> beam_lengths;
          for (std::size_t m : beams) beam_lengths.push_back(lengths[p][m]);
          ForwardOptions options;
          options.key_lengths = {beam_lengths.data(), b_count};
          mha.Forward(one, {query.data(), b_count, n, d}, {keys.data(), b_count, frames[p], d},
                      {keys.data(), b_count, frames[p], d}, {want.data(), b_count, n, d}, options);
          ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
              << KvFormatName(format) << " kv_heads " << kv_heads << " projection " << p << " step "
              << step;
        }
      }
    }
  }
}

// Without memory_items: item b reads item b, or a one-item memory serves every query item; a
// step of several positions at once, written over its own query.
TEST(CrossAttentionMemoryTest, DefaultItemsAndInPlaceOutput) {
  const std::size_t d = 32, frames = 40, n = 3;
  const GqaModel model(d, 4, 4, 5);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> encoder = RandomNormal(2 * frames * d, 1);
  std::vector<float> query = RandomNormal(2 * n * d, 2), want(query.size());
  Context context(2);
  mha.Forward(context, {query.data(), 2, n, d}, {encoder.data(), 2, frames, d},
              {encoder.data(), 2, frames, d}, {want.data(), 2, n, d});
  CrossAttentionMemory memory(mha, frames, 2);
  mha.ProjectMemory(context, {encoder.data(), 2, frames, d}, memory);
  std::vector<float> in_place = query;
  mha.DecodeCross(context, {in_place.data(), 2, n, d}, memory, {in_place.data(), 2, n, d});
  EXPECT_EQ(in_place, want);

  CrossAttentionMemory single(mha, frames);
  mha.ProjectMemory(context, {encoder.data(), 1, frames, d}, single);
  std::vector<float> broadcast(query.size()), first(query.size());
  mha.DecodeCross(context, {query.data(), 2, n, d}, single, {broadcast.data(), 2, n, d});
  const std::vector<std::size_t> zeros = {0, 0};
  mha.DecodeCross(context, {query.data(), 2, n, d}, memory, {first.data(), 2, n, d},
                  {zeros.data(), 2});
  EXPECT_EQ(broadcast, first);
  EXPECT_EQ(0, std::memcmp(broadcast.data(), want.data(), n * d * sizeof(float)));
}

// n query rows of 2 items against 2 encoder outputs of `frames` frames: `step`'s DecodeCross
// over a memory it projected gives `forward`'s Forward over the encoder outputs, bit for bit.
void ExpectStepsEqualForward(const MultiheadAttention& step, const MultiheadAttention& forward,
                             std::size_t d, std::size_t frames, std::size_t n) {
  const std::vector<float> encoder = RandomNormal(2 * frames * d, 1);
  const std::vector<float> query = RandomNormal(2 * n * d, 2);
  std::vector<float> got(query.size()), want(query.size());
  Context context(2);
  forward.Forward(context, {query.data(), 2, n, d}, {encoder.data(), 2, frames, d},
                  {encoder.data(), 2, frames, d}, {want.data(), 2, n, d});
  CrossAttentionMemory memory(step, frames, 2);
  step.ProjectMemory(context, {encoder.data(), 2, frames, d}, memory);
  step.DecodeCross(context, {query.data(), 2, n, d}, memory, {got.data(), 2, n, d});
  EXPECT_EQ(got, want);
}

// A windowed operator's window does not apply over a memory (its frames have no decoder
// positions): DecodeCross gives what the same weights give without a window.
TEST(CrossAttentionMemoryTest, WindowDoesNotApplyToTheMemory) {
  const std::size_t d = 32, frames = 40, n = 3;
  const GqaModel model(d, 4, 2, 5);
  Config windowed = model.config;
  windowed.math.window = 4;
  const MultiheadAttention plain(model.config, model.view()), mha(windowed, model.view());
  ExpectStepsEqualForward(mha, plain, d, frames, n);
}

// An operator with Q/K norm normalises the step's query heads too (the memory's keys were
// normalised when projected): DecodeCross gives its Forward over the encoder output.
TEST(CrossAttentionMemoryTest, QkNormAppliesToTheStepsQueries) {
  const std::size_t d = 64, frames = 20, n = 3;
  AttentionMath math;
  math.qk_norm = true;
  const MathModel model(math, false);
  const MultiheadAttention mha(model.config(Precision::kFp32), model.view());
  ExpectStepsEqualForward(mha, mha, d, frames, n);
}

// A memory projected again holds the new encoder output only, shorter ones included.
TEST(CrossAttentionMemoryTest, ProjectingAgainReplacesTheOutput) {
  const std::size_t d = 16;
  const GqaModel model(d, 2, 2, 9);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> long_output = RandomNormal(90 * d, 3),
                           short_output = RandomNormal(7 * d, 4);
  const std::vector<float> query = RandomNormal(d, 5);
  Context context(1);
  CrossAttentionMemory reused(mha, 90), fresh(mha, 7);
  mha.ProjectMemory(context, {long_output.data(), 1, 90, d}, reused);
  mha.ProjectMemory(context, {short_output.data(), 1, 7, d}, reused);
  mha.ProjectMemory(context, {short_output.data(), 1, 7, d}, fresh);
  EXPECT_EQ(reused.length(), 7u);
  EXPECT_EQ(reused.length(0), 7u);
  std::vector<float> got(d), want(d);
  mha.DecodeCross(context, {query.data(), 1, 1, d}, reused, {got.data(), 1, 1, d});
  mha.DecodeCross(context, {query.data(), 1, 1, d}, fresh, {want.data(), 1, 1, d});
  EXPECT_EQ(got, want);
  EXPECT_GT(reused.bytes(), fresh.bytes());
}

// An operator built after the memory's own is destroyed is another operator, though its state
// may well take the freed one's address: glibc's allocator hands the block back in release
// builds, which is the case an address check got wrong; ASan's quarantine never does.
TEST(CrossAttentionMemoryTest, OperatorBuiltAfterTheOwnerIsAnother) {
  const std::size_t d = 32;
  const GqaModel model(d, 4, 2, 1), other(d, 4, 2, 2);
  const std::vector<float> encoder = RandomNormal(10 * d, 1);
  std::vector<float> x(d, 0.5f), out(d);
  Context context(1);
  auto owner = std::make_unique<MultiheadAttention>(model.config, model.view());
  CrossAttentionMemory memory(*owner, 10, 1);
  owner->ProjectMemory(context, {encoder.data(), 1, 10, d}, memory);
  owner.reset();
  const auto next = std::make_unique<MultiheadAttention>(other.config, other.view());
  ExpectError(
      [&] {
        next->DecodeCross(context, {x.data(), 1, 1, d}, memory, {out.data(), 1, 1, d});
      },
      {"memory: made for another operator"});
}

TEST(CrossAttentionMemoryTest, RejectsHostileArguments) {
  const std::size_t d = 32;
  const GqaModel model(d, 4, 2, 1);
  const MultiheadAttention mha(model.config, model.view());
  const MultiheadAttention twin(model.config, model.view());  // same shape, another layer
  const std::vector<float> encoder = RandomNormal(2 * 10 * d, 1);
  std::vector<float> x(3 * d, 0.5f), out(3 * d);
  Context context(1);
  CrossAttentionMemory memory(mha, 10, 2);
  EXPECT_EQ(memory.max_length(), 10u);
  EXPECT_EQ(memory.batch(), 2u);
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 2, 1, d}, memory, {out.data(), 2, 1, d});
      },
      {"memory: holds no encoder output yet (call ProjectMemory first)"});
  ExpectError(
      [&] {
        mha.ProjectMemory(context, {encoder.data(), 2, 11, d}, memory);
      },
      {"encoder_output.length: expected at most the memory's max_length 10, got 11"});
  ExpectError(
      [&] {
        mha.ProjectMemory(context, {encoder.data(), 1, 10, d}, memory);
      },
      {"encoder_output.batch: expected the memory's batch 2, got 1"});
  ExpectError(
      [&] {
        mha.ProjectMemory(context, {encoder.data(), 2, 10, 16}, memory);
      },
      {"encoder_output.features: expected d_model = 32, got 16"});
  const std::vector<std::size_t> too_long = {10, 11};
  ExpectError(
      [&] {
        mha.ProjectMemory(context, {encoder.data(), 2, 10, d}, memory, {too_long.data(), 2});
      },
      {"key_lengths[1]: expected a length in [0, 10], got 11"});
  ExpectError(
      [&] {
        mha.ProjectMemory(context, {encoder.data(), 2, 10, d}, memory, {too_long.data(), 1});
      },
      {"key_lengths: expected 2 values [batch], got 1"});
  ExpectError(
      [&] {
        twin.ProjectMemory(context, {encoder.data(), 2, 10, d}, memory);
      },
      {"memory: made for another operator"});
  mha.ProjectMemory(context, {encoder.data(), 2, 10, d}, memory);
  ExpectError(
      [&] {
        twin.DecodeCross(context, {x.data(), 2, 1, d}, memory, {out.data(), 2, 1, d});
      },
      {"memory: made for another operator"});
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 3, 1, d}, memory, {out.data(), 3, 1, d});
      },
      {"query.batch: expected the memory's batch 2 (or memory_items naming an item per "
       "query item), got 3"});
  // Fewer query items than the memory's are refused too (item 0 alone would read item 0).
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 1, 1, d}, memory, {out.data(), 1, 1, d});
      },
      {"query.batch: expected the memory's batch 2 (or memory_items naming an item per "
       "query item), got 1"});
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 1, 1, 16}, memory, {out.data(), 1, 1, 16});
      },
      {"query.features: expected d_model = 32, got 16"});
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 2, 1, d}, memory, {out.data(), 2, 2, d});
      },
      {"out: expected shape [2, 1, 32] like query, got [2, 2, 32]"});
  const std::vector<std::size_t> items = {0, 2, 1};
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 3, 1, d}, memory, {out.data(), 3, 1, d},
                        {items.data(), 3});
      },
      {"memory_items[1]: expected a memory item in [0, 1], got 2"});
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 3, 1, d}, memory, {out.data(), 3, 1, d},
                        {items.data(), 2});
      },
      {"memory_items: expected 3 values [query.batch], got 2"});
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 3, 1, d}, memory, {out.data(), 3, 1, d}, {nullptr, 3});
      },
      {"memory_items: got a null pointer with size 3"});
  // The items inside the output buffer.
  std::vector<float> shared(3 * d + 8);
  auto* inside = reinterpret_cast<std::size_t*>(shared.data() + 2);
  inside[0] = inside[1] = inside[2] = 0;
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 3, 1, d}, memory, {shared.data(), 3, 1, d},
                        {inside, 3});
      },
      {"out: expected a buffer apart from memory_items, got one that overlaps it"});
  ExpectError([&] { CrossAttentionMemory m(mha, 0); }, {"max_length: expected a value in [1, "});
  ExpectError([&] { CrossAttentionMemory m(mha, 4, 0); }, {"batch: expected a value in [1, "});
  ExpectError([&] { (void)memory.length(2); }, {"item: expected a memory item in [0, 1], got 2"});
  CrossAttentionMemory taken = std::move(memory);
  EXPECT_EQ(taken.length(), 10u);
  // NOLINTNEXTLINE(bugprone-use-after-move): using the moved-from object is the point.
  ExpectError([&] { (void)memory.bytes(); }, {"CrossAttentionMemory: moved-from"});
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 2, 1, d}, memory, {out.data(), 2, 1, d});
      },
      {"CrossAttentionMemory: moved-from"});
  MultiheadAttention gone(model.config, model.view());
  const MultiheadAttention taker = std::move(gone);
  // NOLINTNEXTLINE(bugprone-use-after-move): using the moved-from object is the point.
  ExpectError([&] { CrossAttentionMemory m(gone, 4); }, {"MultiheadAttention: moved-from"});
}

// A projection that fails part-way (the application's pool throws) leaves an empty memory, not
// the last encoder output's keys and values mixed with the new one's: DecodeCross refuses it
// until a projection succeeds, and no item reports valid frames (as before any projection).
TEST(CrossAttentionMemoryTest, FailedProjectionLeavesAnEmptyMemory) {
  const std::size_t d = 64, frames = 100;
  const GqaModel model(d, 4, 2, 3);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> first = RandomNormal(frames * d, 1);
  const std::vector<float> second = RandomNormal(frames * d, 2);
  const std::vector<float> x = RandomNormal(d, 3);
  std::vector<float> got(d), want(d);
  Context context(1);
  CrossAttentionMemory memory(mha, frames);
  mha.ProjectMemory(context, {first.data(), 1, frames, d}, memory);
  ThrowingExecutor failing(0);
  Context failing_context(failing);
  EXPECT_THROW(mha.ProjectMemory(failing_context, {second.data(), 1, frames, d}, memory),
               std::runtime_error);
  EXPECT_EQ(memory.length(), 0u);
  EXPECT_EQ(memory.length(0), 0u);
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 1, 1, d}, memory, {got.data(), 1, 1, d});
      },
      {"memory: holds no encoder output yet"});
  mha.ProjectMemory(context, {second.data(), 1, frames, d}, memory);
  mha.DecodeCross(context, {x.data(), 1, 1, d}, memory, {got.data(), 1, 1, d});
  mha.Forward(context, {x.data(), 1, 1, d}, {second.data(), 1, frames, d},
              {second.data(), 1, frames, d}, {want.data(), 1, 1, d});
  EXPECT_EQ(got, want);
}

// memory_items that overlap the output's first bytes from before it, or its last item, are
// refused as items inside it are: the check spans both buffers whole.
TEST(CrossAttentionMemoryTest, ItemsOverlappingEitherEndOfTheOutputAreRefused) {
  const std::size_t d = 32;
  const GqaModel model(d, 4, 2, 1);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> encoder = RandomNormal(2 * 10 * d, 1);
  const std::vector<float> x(3 * d, 0.5f);
  Context context(1);
  CrossAttentionMemory memory(mha, 10, 2);
  mha.ProjectMemory(context, {encoder.data(), 2, 10, d}, memory);
  std::vector<std::size_t> shared((3 * d + 8) / 2);  // size_t-aligned floats
  float* floats = reinterpret_cast<float*>(shared.data());
  // Items in shared[0, 3), the output from float 4 (the items' last 8 bytes are its first).
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 3, 1, d}, memory, {floats + 4, 3, 1, d},
                        {shared.data(), 3});
      },
      {"out: expected a buffer apart from memory_items, got one that overlaps it"});
  // The output in floats [0, 3d), the items from its last item's last two floats.
  ExpectError(
      [&] {
        mha.DecodeCross(context, {x.data(), 3, 1, d}, memory, {floats, 3, 1, d},
                        {shared.data() + (3 * d - 2) / 2, 3});
      },
      {"out: expected a buffer apart from memory_items, got one that overlaps it"});
}

// A memory holds the keys and values of every key/value head of every item, and little more:
// K and V of max_length frames of kv_heads x head_dim floats per item.
TEST(CrossAttentionMemoryTest, BytesCoverEveryKeyValueHead) {
  for (std::size_t kv_heads : {1, 2, 4}) {
    const GqaModel model(64, 4, kv_heads, 6);
    const MultiheadAttention mha(model.config, model.view());
    const CrossAttentionMemory memory(mha, 100, 3);
    const std::size_t needed = 2 * 3 * 100 * kv_heads * 16 * sizeof(float);
    EXPECT_GE(memory.bytes(), needed) << kv_heads;
    EXPECT_LE(memory.bytes(), needed + needed / 4) << kv_heads;  // rows padded to tiles
  }
}

}  // namespace
}  // namespace edgeattn
