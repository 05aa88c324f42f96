// The forward pass reproduces PyTorch's nn.MultiheadAttention on models it exported, with its
// masks and attention weights, and the generator's own grouped-query / causal reference
// (also replayed as KV-cache decode steps); checkpoint cases load one layer of a whole model
// (nn.TransformerEncoder, Hugging Face BERT, Whisper, Qwen2 layouts) by its prefix.
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/npy.hpp"
#include "tests/golden_cases.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::GoldenCase;
using testing_support::MaxAbs;
using testing_support::MaxAbsDiff;

ConstTensor View(const NpyArray& a) {
  return a.shape.size() == 2 ? ConstTensor{a.data.data(), 1, a.shape[0], a.shape[1]}
                             : ConstTensor{a.data.data(), a.shape[0], a.shape[1], a.shape[2]};
}

// PyTorch computes in float32 too, in another order: agreement to 1e-5 of the output's
// magnitude is what float32 allows for these widths.
void ExpectClose(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_LE(MaxAbsDiff(got, want), 1e-5 * MaxAbs(want));
}

// The case's masks as forward options; the arrays they point to live in `masks`.
struct Masks {
  NpyArray key_padding, attn_mask;
  std::unique_ptr<bool[]> padding;
};

ForwardOptions MaskOptions(const GoldenCase& c, Masks* m) {
  ForwardOptions options;
  options.is_causal = c.causal;
  if (c.key_padding_mask) {
    m->key_padding = ReadNpy(c.Path("_key_padding_mask.npy"));
    EXPECT_EQ(m->key_padding.dtype, NpyDType::kBool);
    m->padding = NpyBools(m->key_padding);
    options.key_padding_mask = {m->padding.get(), m->key_padding.data.size()};
  }
  if (c.attn_mask) {
    m->attn_mask = ReadNpy(c.Path("_attn_mask.npy"));
    BoolMaskToAdditive(&m->attn_mask);
    options.attn_mask = {m->attn_mask.data.data(), m->attn_mask.data.size()};
  }
  return options;
}

TEST(GoldenTest, MatchesPyTorch) {
  const std::vector<GoldenCase> cases = testing_support::LoadGoldenCases();
  ASSERT_GE(cases.size(), 18u);
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(c.name);
    LoadOptions load;
    load.num_heads = c.heads;
    load.prefix = c.prefix;
    const MultiheadAttention mha = MultiheadAttention::Load(c.Path(".safetensors"), load);
    const NpyArray query = ReadNpy(c.Path("_query.npy"));
    const NpyArray expected = ReadNpy(c.Path("_output.npy"));
    const NpyArray key = c.cross ? ReadNpy(c.Path("_key.npy")) : query;
    const NpyArray value = c.cross ? ReadNpy(c.Path("_value.npy")) : query;
    const ConstTensor q = View(query);
    const ConstTensor k = View(key);
    const std::size_t d = mha.config().d_model;
    Masks masks;
    ForwardOptions options = MaskOptions(c, &masks);
    NpyArray want_weights;
    std::vector<float> weights;
    if (!c.weights.empty()) {
      want_weights = ReadNpy(c.Path("_weights.npy"));
      weights.resize(want_weights.data.size());
      options.need_weights =
          c.weights == "per_head" ? AttentionWeights::kPerHead : AttentionWeights::kAveraged;
      options.attn_weights = {weights.data(), weights.size()};
    }
    std::vector<float> out(expected.data.size());
    for (std::size_t threads : {1, 2}) {
      Context context(threads);
      mha.Forward(context, q, k, View(value), {out.data(), q.batch, q.length, d}, options);
      ExpectClose(out, expected.data);
      if (!weights.empty()) {
        EXPECT_LE(MaxAbsDiff(weights, want_weights.data), 1e-6);
      }
    }
    if (!c.lengths.empty()) {
      // The same batch as lengths: valid rows as PyTorch, padded rows zeros.
      ForwardOptions by_length;
      by_length.query_lengths = {c.lengths.data(), c.lengths.size()};
      Context context(2);
      mha.Forward(context, q, {out.data(), q.batch, q.length, d}, by_length);
      std::vector<float> want = expected.data;
      for (std::size_t b = 0; b < q.batch; ++b) {
        for (std::size_t i = c.lengths[b]; i < q.length; ++i) {
          for (std::size_t col = 0; col < d; ++col) want[(b * q.length + i) * d + col] = 0.0f;
        }
      }
      ExpectClose(out, want);
    }
    if (!c.decode_steps.empty()) {
      KvCache cache(mha, q.length, q.batch);
      Context context(2);
      std::size_t first = 0;
      for (std::size_t n : c.decode_steps) {
        ASSERT_EQ(q.batch, 1u);
        std::vector<float> step(n * d);
        mha.Decode(context, {query.data.data() + first * d, 1, n, d}, cache,
                   {step.data(), 1, n, d});
        const std::vector<float> want(expected.data.begin() + first * d,
                                      expected.data.begin() + (first + n) * d);
        EXPECT_LE(MaxAbsDiff(step, want), 1e-5 * MaxAbs(expected.data)) << "step at " << first;
        first += n;
      }
    }
  }
}

}  // namespace
}  // namespace edgeattn
