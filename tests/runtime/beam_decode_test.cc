// Beams and ragged batches in decoding: Reorder gives what decoding each beam's history from the
// start gives, for permutations, repeats and cycles; sequences of one batch decode at their own
// lengths; speculative decoding (verify k drafted positions in one step, keep the accepted
// prefix with Truncate) gives what one-position-at-a-time decoding gives.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "tests/expect_error.h"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::BoundScale;
using testing_support::ExpectError;
using testing_support::GqaModel;
using testing_support::kFloatEps;
using testing_support::MaxAbsDiff;
using testing_support::RandomNormal;

// Rows [first, first + n) of item b of x [batch, length, d].
const float* Row(const std::vector<float>& x, std::size_t length, std::size_t d, std::size_t b,
                 std::size_t first) {
  return x.data() + (b * length + first) * d;
}

// Items `items` of x [*, length, d], one after another.
std::vector<float> Gather(const std::vector<float>& x, std::size_t length, std::size_t d,
                          const std::vector<std::size_t>& items) {
  std::vector<float> out;
  for (std::size_t m : items) {
    const float* from = Row(x, length, d, m, 0);
    out.insert(out.end(), from, from + length * d);
  }
  return out;
}

// Beams with prompts of their own (decoded `rounds` times over), reordered by `indices`, then
// one token each: equal, bit for bit, to a cache that decoded the chosen beams' prompts from the
// start.
void CheckReorder(Precision precision, const std::vector<std::size_t>& indices,
                  const AttentionMath& math = {}, std::size_t rounds = 1) {
  SCOPED_TRACE(::testing::PrintToString(indices));
  const std::size_t d = 48, beams = indices.size(), prompt = 70;
  const GqaModel model(d, 6, 2, 11);
  Config config = model.with(precision);
  config.math = math;
  const MultiheadAttention mha(config, model.view());
  const std::vector<float> prompts = RandomNormal(beams * prompt * d, 1);
  const std::vector<float> token = RandomNormal(beams * d, 2);
  std::vector<float> prompt_out(prompts.size()), got(token.size()), want(token.size());
  Context context(2);
  // Sequences of different lengths: the lengths move with the keys and values.
  std::vector<std::size_t> lengths(beams);
  for (std::size_t b = 0; b < beams; ++b) lengths[b] = prompt - b % 3;
  const auto decode_prompts = [&](KvCache& cache, const std::vector<float>& x,
                                  const std::vector<std::size_t>& steps) {
    for (std::size_t r = 0; r < rounds; ++r) {
      mha.Decode(context, {x.data(), beams, prompt, d}, cache,
                 {prompt_out.data(), beams, prompt, d}, {steps.data(), beams});
    }
  };
  KvCache reordered(mha, rounds * prompt + 2, beams);
  decode_prompts(reordered, prompts, lengths);
  reordered.Reorder({indices.data(), beams});
  for (std::size_t b = 0; b < beams; ++b) {
    EXPECT_EQ(reordered.length(b), rounds * lengths[indices[b]]);
  }
  mha.Decode(context, {token.data(), beams, 1, d}, reordered, {got.data(), beams, 1, d});

  std::vector<std::size_t> chosen_lengths;
  for (std::size_t i : indices) chosen_lengths.push_back(lengths[i]);
  KvCache fresh(mha, rounds * prompt + 2, beams);
  decode_prompts(fresh, Gather(prompts, prompt, d, indices), chosen_lengths);
  mha.Decode(context, {token.data(), beams, 1, d}, fresh, {want.data(), beams, 1, d});
  EXPECT_EQ(got, want);
}

TEST(BeamDecodeTest, ReorderEqualsDecodingTheChosenBeams) {
  CheckReorder(Precision::kFp32, {0, 1, 2, 3});        // nothing moves
  CheckReorder(Precision::kFp32, {3, 2, 1, 0});        // swaps
  CheckReorder(Precision::kFp32, {1, 2, 0, 0, 3});     // a cycle with a tree hanging on it
  CheckReorder(Precision::kFp32, {2, 2, 2});           // every beam forks from one
  CheckReorder(Precision::kInt8, {1, 2, 3, 4, 0, 5});  // one long cycle
  CheckReorder(Precision::kInt8, {0, 0, 1, 1});
  CheckReorder(Precision::kFp32, {0});
  // Windowed caches whose rings have wrapped (up to 140 positions in 128 slots), with rotary
  // keys: what the rings still hold moves with them.
  AttentionMath windowed;
  windowed.window = 30;
  windowed.rotary = RotaryLayout::kHalves;
  CheckReorder(Precision::kFp32, {2, 0, 0, 1}, windowed, 2);
}

TEST(BeamDecodeTest, ReorderRejectsBadIndicesAndKeepsTheCache) {
  const GqaModel model(32, 4, 4, 3);
  const MultiheadAttention mha(model.config, model.view());
  KvCache cache(mha, 8, 3);
  const std::vector<float> x = RandomNormal(3 * 2 * 32, 4);
  std::vector<float> out(x.size());
  Context context(1);
  const std::vector<std::size_t> steps = {2, 1, 0};
  mha.Decode(context, {x.data(), 3, 2, 32}, cache, {out.data(), 3, 2, 32}, {steps.data(), 3});
  const std::vector<std::size_t> far = {0, 3, 1}, short_list = {0, 1};
  ExpectError(
      [&] {
        cache.Reorder({far.data(), 3});
      },
      {"indices[1]: expected a sequence in [0, 2], got 3"});
  ExpectError(
      [&] {
        cache.Reorder({short_list.data(), 2});
      },
      {"indices: expected 3 values [batch], got 2"});
  ExpectError([&] { cache.Reorder({nullptr, 3}); }, {"indices: expected a buffer, got null"});
  EXPECT_EQ(cache.length(0), 2u);
  EXPECT_EQ(cache.length(1), 1u);
  EXPECT_EQ(cache.length(2), 0u);
  EXPECT_EQ(cache.length(), 2u);
  ExpectError([&] { (void)cache.length(3); }, {"item: expected a sequence in [0, 2], got 3"});
}

// A ragged step stores each item's own positions only, not its padding rows: item 0's step
// fills the cache's last slot while item 1's is longer, and item 0's padding row must not wrap
// onto its first slot.
TEST(BeamDecodeTest, RaggedStepFillingTheCacheKeepsItsFirstPositions) {
  const std::size_t d = 32, capacity = 4;
  const GqaModel model(d, 4, 2, 23);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> first = RandomNormal(2 * 3 * d, 1);
  const std::vector<float> second = RandomNormal(2 * 2 * d, 2);
  const std::size_t first_lengths[] = {3, 1}, second_lengths[] = {1, 2};
  Context context(1);
  KvCache cache(mha, capacity, 2);
  std::vector<float> out1(first.size()), out2(second.size());
  mha.Decode(context, {first.data(), 2, 3, d}, cache, {out1.data(), 2, 3, d}, {first_lengths, 2});
  mha.Decode(context, {second.data(), 2, 2, d}, cache, {out2.data(), 2, 2, d}, {second_lengths, 2});
  // What the second step must give: the causal forward over each item's own positions.
  for (std::size_t b = 0; b < 2; ++b) {
    std::vector<float> sequence(Row(first, 3, d, b, 0), Row(first, 3, d, b, first_lengths[b]));
    sequence.insert(sequence.end(), Row(second, 2, d, b, 0),
                    Row(second, 2, d, b, second_lengths[b]));
    const std::size_t n = sequence.size() / d;
    std::vector<float> full(sequence.size());
    ForwardOptions causal;
    causal.is_causal = true;
    mha.Forward(context, {sequence.data(), 1, n, d}, {full.data(), 1, n, d}, causal);
    const std::vector<float> want(full.begin() + first_lengths[b] * d, full.end());
    const std::vector<float> got(Row(out2, 2, d, b, 0), Row(out2, 2, d, b, second_lengths[b]));
    EXPECT_LE(MaxAbsDiff(got, want), 64 * kFloatEps * BoundScale(want)) << "item " << b;
  }
}

TEST(BeamDecodeTest, RaggedStepsRejectBadLengths) {
  const GqaModel model(32, 4, 2, 3);
  const MultiheadAttention mha(model.config, model.view());
  KvCache cache(mha, 4, 2);
  const std::vector<float> x = RandomNormal(2 * 4 * 32, 4);
  std::vector<float> out(x.size());
  Context context(1);
  const std::vector<std::size_t> uneven = {3, 1};
  mha.Decode(context, {x.data(), 2, 3, 32}, cache, {out.data(), 2, 3, 32}, {uneven.data(), 2});
  const std::vector<std::size_t> past_x = {0, 3}, past_room = {2, 1}, one = {1};
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 2, 2, 32}, cache, {out.data(), 2, 2, 32},
                   {past_x.data(), 2});
      },
      {"step_lengths[1]: expected a length in [0, 2], got 3"});
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 2, 2, 32}, cache, {out.data(), 2, 2, 32},
                   {past_room.data(), 2});
      },
      {"step_lengths[0]: the cache's sequence 0 holds 3 of 4 positions, room for 1, got 2"});
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 2, 1, 32}, cache, {out.data(), 2, 1, 32}, {one.data(), 1});
      },
      {"step_lengths: expected 2 values [batch], got 1"});
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 2, 2, 32}, cache, {out.data(), 2, 2, 32});
      },
      {"x.length: the cache's sequence 0 holds 3 of 4 positions, room for 1, got 2"});
  // The step lengths inside the output buffer.
  std::vector<float> shared(2 * 32 + 8);
  auto* inside = reinterpret_cast<std::size_t*>(shared.data() + 4);
  inside[0] = inside[1] = 1;
  ExpectError(
      [&] {
        mha.Decode(context, {x.data(), 2, 1, 32}, cache, {shared.data(), 2, 1, 32}, {inside, 2});
      },
      {"out: expected a buffer apart from step_lengths, got one that overlaps it"});
  EXPECT_EQ(cache.length(0), 3u);  // refused steps leave the cache as it was
  EXPECT_EQ(cache.length(1), 1u);
  const std::vector<std::size_t> longer = {3, 2};
  ExpectError(
      [&] {
        cache.Truncate({longer.data(), 2});
      },
      {"lengths[1]: expected at most the sequence's cached length 1, got 2"});
  ExpectError(
      [&] {
        cache.Truncate({longer.data(), 1});
      },
      {"lengths: expected 2 values [batch], got 1"});
  ExpectError([&] { cache.Truncate(4); }, {"length: expected at most the cached length 3, got 4"});
  EXPECT_EQ(cache.slots(), 4u);
  cache.Truncate(2);  // keeps at most 2: sequence 1 (1 position) stays
  EXPECT_EQ(cache.length(0), 2u);
  EXPECT_EQ(cache.length(1), 1u);
}

// Speculative decoding: each round verifies k drafted positions of every sequence in one step,
// keeps each sequence's accepted prefix (Truncate per sequence) and goes on from there. The
// outputs of the accepted positions, and of everything after, are those of decoding the final
// sequences one position at a time.
TEST(BeamDecodeTest, SpeculativeDecodingEqualsOnePositionAtATime) {
  for (Precision precision : {Precision::kFp32, Precision::kInt8}) {
    const std::size_t d = 64, batch = 2, k = 4, prompt = 5, rounds = 6;
    const std::size_t total = prompt + rounds * k;
    const GqaModel model(d, 8, 2, 21);
    const MultiheadAttention mha(model.with(precision), model.view());
    // The sequences the target accepts; drafts are right up to a per-round, per-sequence point.
    const std::vector<float> truth = RandomNormal(batch * total * d, 5);
    const std::vector<float> noise = RandomNormal(batch * k * d, 6);
    Context context(2);
    KvCache cache(mha, total, batch);
    std::vector<float> out(batch * total * d);
    std::vector<float> prompts;
    for (std::size_t b = 0; b < batch; ++b) {
      prompts.insert(prompts.end(), Row(truth, total, d, b, 0), Row(truth, total, d, b, prompt));
    }
    mha.Decode(context, {prompts.data(), batch, prompt, d}, cache, {out.data(), batch, prompt, d});
    std::vector<std::vector<float>> accepted_out(batch);  // per sequence, after the prompt
    for (std::size_t round = 0; round < rounds; ++round) {
      std::vector<float> draft(batch * k * d), verified(batch * k * d);
      std::vector<std::size_t> accepted(batch), keep(batch);
      for (std::size_t b = 0; b < batch; ++b) {
        accepted[b] = (round + 2 * b) % (k + 1);  // 0..k accepted drafts
        const float* from = Row(truth, total, d, b, cache.length(b));
        std::memcpy(&draft[b * k * d], from, k * d * sizeof(float));
        for (std::size_t i = accepted[b]; i < k; ++i) {  // the rejected drafts differ
          std::memcpy(&draft[(b * k + i) * d], &noise[(b * k + i) * d], d * sizeof(float));
        }
      }
      mha.Decode(context, {draft.data(), batch, k, d}, cache, {verified.data(), batch, k, d});
      for (std::size_t b = 0; b < batch; ++b) {
        keep[b] = cache.length(b) - k + accepted[b];
        accepted_out[b].insert(accepted_out[b].end(), verified.begin() + b * k * d,
                               verified.begin() + (b * k + accepted[b]) * d);
      }
      cache.Truncate({keep.data(), batch});
    }
    for (std::size_t b = 0; b < batch; ++b) {
      SCOPED_TRACE(b);
      // One position at a time over the sequence the speculative decode accepted.
      const std::size_t length = cache.length(b);
      KvCache single(mha, total);
      std::vector<float> want(length * d);
      for (std::size_t i = 0; i < length; ++i) {
        mha.Decode(context, {Row(truth, total, d, b, i), 1, 1, d}, single,
                   {want.data() + i * d, 1, 1, d});
      }
      const std::vector<float> tail(want.begin() + prompt * d, want.end());
      ASSERT_EQ(accepted_out[b].size(), tail.size());
      // The verify step computes rows with the arithmetic of single steps, but its key tiles
      // end elsewhere: equal to a few float roundings.
      EXPECT_LE(MaxAbsDiff(accepted_out[b], tail), 64 * kFloatEps * BoundScale(tail));
    }
  }
}

// Sequences of one position (and none) move like longer ones: sequence 1 takes sequence 0's
// single position, sequence 2 too, and sequence 0 takes sequence 1's three.
TEST(BeamDecodeTest, ReorderMovesSequencesOfOnePosition) {
  const std::size_t d = 32;
  const GqaModel model(d, 4, 2, 5);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomNormal(3 * 3 * d, 6), token = RandomNormal(3 * d, 7);
  std::vector<float> out(x.size()), got(token.size()), want(token.size());
  Context context(1);
  const std::vector<std::size_t> steps = {1, 3, 0}, indices = {1, 0, 0}, chosen = {3, 1, 1};
  KvCache reordered(mha, 4, 3);
  mha.Decode(context, {x.data(), 3, 3, d}, reordered, {out.data(), 3, 3, d}, {steps.data(), 3});
  reordered.Reorder({indices.data(), 3});
  EXPECT_EQ(reordered.length(1), 1u);
  mha.Decode(context, {token.data(), 3, 1, d}, reordered, {got.data(), 3, 1, d});
  const std::vector<float> chosen_x = Gather(x, 3, d, indices);
  KvCache fresh(mha, 4, 3);
  mha.Decode(context, {chosen_x.data(), 3, 3, d}, fresh, {out.data(), 3, 3, d}, {chosen.data(), 3});
  mha.Decode(context, {token.data(), 3, 1, d}, fresh, {want.data(), 3, 1, d});
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace edgeattn
