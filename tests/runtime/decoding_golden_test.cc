// Decoding matches PyTorch (tests/golden/decoding_cases.json, written by
// tools/make_decoding_golden.py): cross-attention steps through a CrossAttentionMemory shared by
// beams, beam search reordering a KV cache between steps, and a ragged batch appending different
// numbers of positions per sequence. fp32 to float32's agreement, int8 by cosine; every thread
// count bit for bit.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/npy.hpp"
#include "tests/golden_cases.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::Cosine;
using testing_support::MaxAbs;
using testing_support::MaxAbsDiff;
using testing_support::TestDataDir;

struct DecodingCase {
  nlohmann::json json;
  std::string name() const { return json.at("name").get<std::string>(); }
  std::string Path(const std::string& suffix) const {
    return TestDataDir() + "/golden/" + name() + suffix;
  }
  std::vector<std::size_t> Sizes(const char* key) const {
    return json.at(key).get<std::vector<std::size_t>>();
  }
  MultiheadAttention Load(Precision precision) const {
    LoadOptions load;
    load.num_heads = json.at("heads").get<std::size_t>();
    load.precision = precision;
    return MultiheadAttention::Load(Path(".safetensors"), load);
  }
};

DecodingCase FindCase(const std::string& kind) {
  std::ifstream in(TestDataDir() + "/golden/decoding_cases.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  for (const nlohmann::json& c : doc.at("cases")) {
    if (c.at("kind").get<std::string>() == kind) return {c};
  }
  ADD_FAILURE() << "no case of kind " << kind;
  return {};
}

// fp32: PyTorch computes in float32 in another order; int8: the projections' quantization.
void ExpectMatches(const std::vector<float>& got, const std::vector<float>& want,
                   Precision precision) {
  if (precision == Precision::kFp32) {
    EXPECT_LE(MaxAbsDiff(got, want), 1e-5 * MaxAbs(want));
  } else {
    EXPECT_GE(Cosine(got, want), 0.999);
  }
}

// Runs `decode(context)` for 1 and 2 threads: it returns everything it computed, which must
// agree bit for bit.
template <class Decode>
std::vector<float> SameForThreadCounts(const Decode& decode) {
  Context one(1), two(2);
  const std::vector<float> first = decode(one);
  EXPECT_EQ(first, decode(two));
  return first;
}

class DecodingGoldenTest : public ::testing::TestWithParam<Precision> {};

TEST_P(DecodingGoldenTest, CrossAttentionMemoryMatchesPyTorch) {
  const DecodingCase c = FindCase("cross_memory");
  const MultiheadAttention mha = c.Load(GetParam());
  const NpyArray encoder = ReadNpy(c.Path("_encoder.npy"));
  const NpyArray query = ReadNpy(c.Path("_query.npy"));
  const NpyArray want = ReadNpy(c.Path("_output.npy"));
  const std::vector<std::size_t> lengths = c.Sizes("key_lengths"), items = c.Sizes("memory_items");
  const std::size_t d = mha.config().d_model, frames = encoder.shape[1];
  const std::size_t beams = query.shape[0], steps = query.shape[1];
  const std::vector<float> got = SameForThreadCounts([&](Context& context) {
    CrossAttentionMemory memory(mha, frames, lengths.size());
    mha.ProjectMemory(context, {encoder.data.data(), lengths.size(), frames, d}, memory,
                      {lengths.data(), lengths.size()});
    std::vector<float> out(query.data.size());
    mha.DecodeCross(context, {query.data.data(), beams, steps, d}, memory,
                    {out.data(), beams, steps, d}, {items.data(), beams});
    return out;
  });
  ExpectMatches(got, want.data, GetParam());
}

TEST_P(DecodingGoldenTest, BeamsReorderedBetweenStepsMatchPyTorch) {
  const DecodingCase c = FindCase("beams");
  const MultiheadAttention mha = c.Load(GetParam());
  const NpyArray prompt = ReadNpy(c.Path("_prompt.npy"));
  const NpyArray tokens = ReadNpy(c.Path("_tokens.npy"));
  const NpyArray prompt_want = ReadNpy(c.Path("_prompt_output.npy"));
  const NpyArray tokens_want = ReadNpy(c.Path("_tokens_output.npy"));
  const auto reorders = c.json.at("reorders").get<std::vector<std::vector<std::size_t>>>();
  const std::size_t d = mha.config().d_model, beams = prompt.shape[0], n = prompt.shape[1];
  std::vector<float> prompt_out(prompt.data.size());
  const std::vector<float> got = SameForThreadCounts([&](Context& context) {
    KvCache cache(mha, n + reorders.size(), beams);
    mha.Decode(context, {prompt.data.data(), beams, n, d}, cache, {prompt_out.data(), beams, n, d});
    std::vector<float> out(tokens.data.size());
    for (std::size_t t = 0; t < reorders.size(); ++t) {
      cache.Reorder({reorders[t].data(), beams});
      mha.Decode(context, {tokens.data.data() + t * beams * d, beams, 1, d}, cache,
                 {out.data() + t * beams * d, beams, 1, d});
    }
    return out;
  });
  ExpectMatches(prompt_out, prompt_want.data, GetParam());
  ExpectMatches(got, tokens_want.data, GetParam());
}

TEST_P(DecodingGoldenTest, RaggedBatchMatchesPyTorch) {
  const DecodingCase c = FindCase("ragged");
  const MultiheadAttention mha = c.Load(GetParam());
  const auto steps = c.json.at("step_lengths").get<std::vector<std::vector<std::size_t>>>();
  const std::size_t d = mha.config().d_model, batch = steps[0].size();
  std::vector<NpyArray> x, want;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    x.push_back(ReadNpy(c.Path("_x" + std::to_string(s) + ".npy")));
    want.push_back(ReadNpy(c.Path("_out" + std::to_string(s) + ".npy")));
  }
  for (std::size_t s = 0; s < steps.size(); ++s) {
    SCOPED_TRACE(s);
    const std::vector<float> got = SameForThreadCounts([&](Context& context) {
      KvCache cache(mha, 16, batch);
      std::vector<float> out;
      for (std::size_t i = 0; i <= s; ++i) {
        out.assign(x[i].data.size(), -1.0f);
        mha.Decode(context, {x[i].data.data(), batch, x[i].shape[1], d}, cache,
                   {out.data(), batch, x[i].shape[1], d}, {steps[i].data(), batch});
      }
      return out;
    });
    ExpectMatches(got, want[s].data, GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, DecodingGoldenTest,
                         ::testing::Values(Precision::kFp32, Precision::kInt8),
                         [](const ::testing::TestParamInfo<Precision>& p) {
                           return p.param == Precision::kFp32 ? "fp32" : "int8";
                         });

}  // namespace
}  // namespace edgeattn
