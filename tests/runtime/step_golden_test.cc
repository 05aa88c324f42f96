// The attention step's features match PyTorch (tests/golden/step_cases.json, written by
// tools/make_step_golden.py): score scale, softcap, sinks, RMS norm of Q and K, rotary
// embeddings (halves, interleaved, partial, given positions), a sliding window and all of them
// together, as forward calls and, where the case says, as KV-cache decode steps. fp32 to
// float32's agreement, int8 by cosine; every thread count bit for bit.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/npy.hpp"
#include "edgeattn/safetensors.hpp"
#include "simd/half_float.h"
#include "tests/expect_error.h"
#include "tests/golden_cases.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::BoundScale;
using testing_support::Cosine;
using testing_support::MaxAbsDiff;
using testing_support::TestDataDir;

RotaryLayout ToLayout(const std::string& name) {
  if (name == "halves") return RotaryLayout::kHalves;
  if (name == "interleaved") return RotaryLayout::kInterleaved;
  ADD_FAILURE() << "unknown rotary layout " << name;
  return RotaryLayout::kNone;
}

AttentionMath ToMath(const nlohmann::json& m) {
  AttentionMath math;
  math.score_scale = m.value("score_scale", 0.0f);
  math.softcap = m.value("softcap", 0.0f);
  math.window = m.value("window", std::size_t{0});
  math.qk_norm = m.value("qk_norm", false);
  math.qk_norm_eps = m.value("qk_norm_eps", 1e-6f);
  if (m.contains("rotary")) math.rotary = ToLayout(m.at("rotary").get<std::string>());
  math.rotary_dim = m.value("rotary_dim", std::size_t{0});
  math.rotary_base = m.value("rotary_base", 10000.0f);
  math.rotary_scaling = m.value("rotary_scaling", 1.0f);
  return math;
}

// One case: its operator built from the file's tensors (sinks and norm weights included).
struct StepCase {
  nlohmann::json json;
  std::map<std::string, std::vector<float>> tensors;

  std::string name() const { return json.at("name").get<std::string>(); }
  std::string Path(const std::string& suffix) const {
    return TestDataDir() + "/golden/" + name() + suffix;
  }
  FloatSpan Span(const std::string& tensor) const {
    const auto it = tensors.find(tensor);
    if (it == tensors.end()) return {};
    return {it->second.data(), it->second.size()};
  }
  // The case's mask and rotary positions (read into *positions).
  ForwardOptions Options(std::vector<std::size_t>* positions) const {
    ForwardOptions options;
    options.is_causal = json.at("causal").get<bool>();
    if (json.value("positions", false)) {
      for (float p : ReadNpy(Path("_positions.npy")).data) positions->push_back(std::size_t(p));
      options.positions = {positions->data(), positions->size()};
      options.key_positions = options.positions;
    }
    return options;
  }
  MultiheadAttention Build(Precision precision) const {
    const std::size_t heads = json.at("heads").get<std::size_t>();
    Config config{Span("o_proj.bias").size, heads, precision, kDefaultInt8Block,
                  json.at("kv_heads").get<std::size_t>()};
    config.math = ToMath(json.at("math"));
    WeightsView w;
    w.q_proj_weight = Span("q_proj.weight");
    w.k_proj_weight = Span("k_proj.weight");
    w.v_proj_weight = Span("v_proj.weight");
    w.q_proj_bias = Span("q_proj.bias");
    w.k_proj_bias = Span("k_proj.bias");
    w.v_proj_bias = Span("v_proj.bias");
    w.out_proj_weight = Span("o_proj.weight");
    w.out_proj_bias = Span("o_proj.bias");
    w.sinks = Span("sinks");
    w.q_norm_weight = Span("q_norm.weight");
    w.k_norm_weight = Span("k_norm.weight");
    return MultiheadAttention(config, w);
  }
};

std::vector<StepCase> LoadCases() {
  std::ifstream in(TestDataDir() + "/golden/step_cases.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<StepCase> cases;
  for (const nlohmann::json& c : doc.at("cases")) {
    StepCase step{c, {}};
    const SafetensorsFile file = SafetensorsFile::Read(step.Path(".safetensors"));
    for (const auto& [name, info] : file.tensors()) step.tensors[name] = file.ReadFloat(name);
    cases.push_back(std::move(step));
  }
  return cases;
}

void ExpectStepMatches(const std::vector<float>& got, const std::vector<float>& want,
                   Precision precision) {
  if (precision == Precision::kFp32) {
    EXPECT_LE(MaxAbsDiff(got, want), 2e-5 * BoundScale(want));
  } else {
    EXPECT_GE(Cosine(got, want), 0.999);
  }
}

class StepGoldenTest : public ::testing::TestWithParam<Precision> {};

TEST_P(StepGoldenTest, ForwardMatchesPyTorch) {
  const std::vector<StepCase> cases = LoadCases();
  ASSERT_EQ(cases.size(), 9u);
  for (const StepCase& c : cases) {
    SCOPED_TRACE(c.name());
    const MultiheadAttention mha = c.Build(GetParam());
    const NpyArray x = ReadNpy(c.Path("_query.npy"));
    const NpyArray want = ReadNpy(c.Path("_output.npy"));
    const std::size_t batch = x.shape[0], length = x.shape[1], d = x.shape[2];
    std::vector<std::size_t> positions;
    const ForwardOptions options = c.Options(&positions);
    Context one(1), three(3);
    std::vector<float> out(x.data.size()), out3(x.data.size());
    mha.Forward(one, {x.data.data(), batch, length, d}, {out.data(), batch, length, d}, options);
    mha.Forward(three, {x.data.data(), batch, length, d}, {out3.data(), batch, length, d}, options);
    EXPECT_EQ(out, out3);
    ExpectStepMatches(out, want.data, GetParam());
  }
}

TEST_P(StepGoldenTest, DecodeStepsMatchPyTorch) {
  std::size_t decoded = 0;
  for (const StepCase& c : LoadCases()) {
    if (!c.json.contains("decode_steps")) continue;
    SCOPED_TRACE(c.name());
    ++decoded;
    const MultiheadAttention mha = c.Build(GetParam());
    const NpyArray x = ReadNpy(c.Path("_query.npy"));
    const NpyArray want = ReadNpy(c.Path("_output.npy"));
    const std::size_t batch = x.shape[0], length = x.shape[1], d = x.shape[2];
    const auto steps = c.json.at("decode_steps").get<std::vector<std::size_t>>();
    for (std::size_t threads : {1, 2}) {
      Context context(threads);
      KvCache cache(mha, length, batch);
      std::vector<float> out(x.data.size());
      std::size_t first = 0;
      for (std::size_t n : steps) {
        std::vector<float> in, got(batch * n * d);
        for (std::size_t b = 0; b < batch; ++b) {
          const float* rows = x.data.data() + (b * length + first) * d;
          in.insert(in.end(), rows, rows + n * d);
        }
        mha.Decode(context, {in.data(), batch, n, d}, cache, {got.data(), batch, n, d});
        for (std::size_t b = 0; b < batch; ++b) {
          std::copy(got.begin() + b * n * d, got.begin() + (b + 1) * n * d,
                    out.begin() + (b * length + first) * d);
        }
        first += n;
      }
      ExpectStepMatches(out, want.data, GetParam());
    }
  }
  EXPECT_EQ(decoded, 5u);
}

// Loaded from the file (Llama names: sinks and Q/K norm weights read along), the same.
TEST_P(StepGoldenTest, LoadedLayersMatchPyTorch) {
  for (const StepCase& c : LoadCases()) {
    SCOPED_TRACE(c.name());
    LoadOptions load;
    load.num_heads = c.json.at("heads").get<std::size_t>();
    load.precision = GetParam();
    load.math = ToMath(c.json.at("math"));
    const MultiheadAttention mha = MultiheadAttention::Load(c.Path(".safetensors"), load);
    const NpyArray x = ReadNpy(c.Path("_query.npy"));
    const NpyArray want = ReadNpy(c.Path("_output.npy"));
    std::vector<std::size_t> positions;
    const ForwardOptions options = c.Options(&positions);
    Context context(2);
    std::vector<float> out(x.data.size());
    mha.Forward(context, {x.data.data(), x.shape[0], x.shape[1], x.shape[2]},
                {out.data(), x.shape[0], x.shape[1], x.shape[2]}, options);
    ExpectStepMatches(out, want.data, GetParam());
  }
}

// Norm weights in a file change the result: strict loading wants math.qk_norm for them; and
// int8 files, which hold projections only, are refused for an operator with learned parts.
TEST(StepGoldenTest, LearnedTensorsAreNotDroppedSilently) {
  const std::string path = TestDataDir() + "/golden/step_combined.safetensors";
  LoadOptions load;
  load.num_heads = 4;
  testing_support::ExpectError([&] { MultiheadAttention::Load(path, load); },
                               {"q_norm.weight", "LoadOptions.math.qk_norm"});
  load.strict = false;
  EXPECT_NO_THROW(MultiheadAttention::Load(path, load));
  load.strict = true;
  load.math.qk_norm = true;
  load.precision = Precision::kInt8;
  const MultiheadAttention int8 = MultiheadAttention::Load(path, load);
  testing_support::ExpectError([&] { int8.SaveInt8(::testing::TempDir() + "never.safetensors"); },
                               {"SaveInt8", "sinks or Q/K norm weights"});
}

// A layer whose projections are stored as BF16 or F16 loads them as they are (the half path),
// with its sinks and Q/K norm weights: the same operator as the F32 file loaded at that
// precision, whose weights are rounded to it when built.
TEST(StepGoldenTest, LearnedTensorsLoadWithHalfWeights) {
  const std::string path = TestDataDir() + "/golden/step_combined.safetensors";
  const SafetensorsFile f32 = SafetensorsFile::Read(path);
  LoadOptions load;
  load.num_heads = 4;
  const std::vector<float> x = testing_support::RandomNormal(7 * 32, 3);
  const auto run = [&](const MultiheadAttention& mha) {
    Context context(1);
    std::vector<float> out(x.size());
    mha.Forward(context, {x.data(), 1, 7, 32}, {out.data(), 1, 7, 32});
    return out;
  };
  for (Precision precision : {Precision::kBf16, Precision::kFp16}) {
    SafetensorsWriter writer;
    std::vector<std::vector<std::uint16_t>> halves;
    for (const auto& [name, info] : f32.tensors()) {
      const std::vector<float> values = f32.ReadFloat(name);
      if (name.find("proj.weight") == std::string::npos) {
        writer.Add(name, DType::kF32, info.shape, values.data());
        continue;
      }
      std::vector<std::uint16_t>& half = halves.emplace_back(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) {
        half[i] = precision == Precision::kBf16 ? simd::Bf16FromF32(values[i])
                                                : simd::F16FromF32(values[i]);
      }
      writer.Add(name, precision == Precision::kBf16 ? DType::kBF16 : DType::kF16, info.shape,
                 half.data());
    }
    const std::vector<std::uint8_t> bytes = writer.Serialize();
    load.precision = precision;
    // With the norms, and with the sinks alone (non-strict loading passes over the norms).
    for (bool norm : {true, false}) {
      load.math.qk_norm = load.strict = norm;
      const MultiheadAttention from_half =
          MultiheadAttention::LoadFromMemory(bytes.data(), bytes.size(), load);
      EXPECT_EQ(run(from_half), run(MultiheadAttention::Load(path, load)))
          << PrecisionName(precision) << (norm ? " with norms" : " sinks only");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, StepGoldenTest,
                         ::testing::Values(Precision::kFp32, Precision::kInt8));

}  // namespace
}  // namespace edgeattn
