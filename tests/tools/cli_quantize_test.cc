// The edgeattn program's quantize command: the int8 file it writes, what it records, and runs of
// that file.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "edgeattn/npy.hpp"
#include "edgeattn/safetensors.hpp"
#include "tests/golden_cases.h"
#include "tests/scratch_dir.h"
#include "tests/test_support.h"
#include "tests/tools/cli_runner.h"

namespace edgeattn {
namespace {

using cli_test::Result;
using cli_test::RunCli;

// quantize writes int8 weights that run loads directly (no --heads: the file records it) and
// that reproduce the on-the-fly int8 result bit for bit; both stay close to PyTorch.
TEST(CliTest, QuantizeThenRunInt8) {
  const auto cases = testing_support::LoadGoldenCases();
  const auto& c = cases[1];  // self_batched
  const std::string dir = ::testing::TempDir();
  Result r = RunCli("quantize --weights " + c.Path(".safetensors") + " --heads " +
                    std::to_string(c.heads) + " --output " + dir + "q.safetensors");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunCli("run --weights " + dir + "q.safetensors --input " + c.Path("_query.npy") +
             " --output " + dir + "from_file.npy");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunCli("run --weights " + c.Path(".safetensors") + " --heads " + std::to_string(c.heads) +
             " --precision int8 --input " + c.Path("_query.npy") + " --output " + dir +
             "on_the_fly.npy");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const NpyArray from_file = ReadNpy(dir + "from_file.npy");
  const NpyArray on_the_fly = ReadNpy(dir + "on_the_fly.npy");
  const NpyArray expected = ReadNpy(c.Path("_output.npy"));
  EXPECT_EQ(from_file.data, on_the_fly.data);
  EXPECT_GT(testing_support::Cosine(from_file.data, expected.data), 0.999);
  // int8 and auto, named, run the int8 file as it is; only the float precisions are refused.
  for (const char* precision : {"int8", "auto"}) {
    r = RunCli("run --weights " + dir + "q.safetensors --precision " + precision + " --input " +
               c.Path("_query.npy") + " --output " + dir + "named.npy");
    ASSERT_EQ(r.exit_code, 0) << precision << ": " << r.output;
    EXPECT_EQ(ReadNpy(dir + "named.npy").data, from_file.data) << precision;
  }
  r = RunCli("run --weights " + dir + "q.safetensors --heads 3 --input " + c.Path("_query.npy") +
             " --output " + dir + "x.npy");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("quantized for 8 heads, got 3"), std::string::npos) << r.output;
  r = RunCli("run --weights " + dir + "q.safetensors --precision fp32 --input " +
             c.Path("_query.npy") + " --output " + dir + "x.npy");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("holds int8 weights"), std::string::npos) << r.output;
  r = RunCli("run --weights " + dir + "q.safetensors --precision bf16 --input " +
             c.Path("_query.npy") + " --output " + dir + "x.npy");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--precision bf16"), std::string::npos) << r.output;
}

// quantize says what it wrote, and the file records it: d_model, heads and the activation block
// asked for, which a run of the file then uses.
TEST(CliTest, QuantizeRecordsItsConfig) {
  const auto c = testing_support::LoadGoldenCases()[1];  // self_batched: d_model 32, 8 heads
  testing_support::ScratchDir dir;
  const std::string q = dir.Path("q32.safetensors");
  Result r = RunCli("quantize --weights " + c.Path(".safetensors") + " --heads 8 --int8-block 32 " +
                    "--output " + q);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output,
            "wrote " + q + ": int8 weights for d_model 32, 8 heads, activation block 32\n");
  const std::map<std::string, std::string> metadata = SafetensorsFile::Read(q).metadata();
  EXPECT_EQ(metadata.at("d_model"), "32");
  EXPECT_EQ(metadata.at("num_heads"), "8");
  EXPECT_EQ(metadata.at("int8_block"), "32");
}

// A Llama layer that stores its rotary frequencies (base 10000, head_dim 4: 1 and 0.01): quantize
// and run check them against the rotary flags, and their errors name the flags.
TEST(CliTest, StoredRotaryFrequenciesAreCheckedAgainstTheFlags) {
  testing_support::ScratchDir dir;
  const std::string weights = dir.Path("llama.safetensors");
  const std::vector<float> w = testing_support::RandomNormal(16 * 16, 5, 0.25f);
  const std::vector<float> inv_freq = {1.0f, 0.01f};
  SafetensorsWriter writer;
  for (const char* name : {"q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight"}) {
    writer.Add(name, DType::kF32, {16, 16}, w.data());
  }
  writer.Add("rotary_emb.inv_freq", DType::kF32, {2}, inv_freq.data());
  writer.Write(weights);
  const std::string input = dir.Path("x.npy");
  WriteNpy(input, NpyArray{{3, 16}, testing_support::RandomNormal(3 * 16, 6)});
  const std::string quantize =
      "quantize --weights " + weights + " --heads 4 --output " + dir.Path("q.safetensors") + " ";
  const struct {
    std::string args, message;
  } refused[] = {
      {quantize, "holds rotary frequencies: expected --rotary-layout (or --non-strict, which"},
      {quantize + "--rotary-layout halves --rotary-base 500",
       "'rotary_emb.inv_freq'[1]: expected rotary_base^(-2i / rotary_dim) = 0.0447213612 for "
       "--rotary-base 500 and 4 rotated dims, got 0.00999999978"},
      {"run --weights " + weights + " --heads 4 --rotary-layout halves --rotary-dim 2 --input " +
           input + " --output " + dir.Path("y.npy"),
       "expected [1], one frequency per pair of the 2 rotated dims (--rotary-dim), got [2]"},
  };
  for (const auto& t : refused) {
    const Result r = RunCli(t.args);
    EXPECT_EQ(r.exit_code, 1) << t.args << "\n" << r.output;
    EXPECT_NE(r.output.find(t.message), std::string::npos) << t.args << "\n" << r.output;
    EXPECT_EQ(r.output.find("LoadOptions."), std::string::npos) << r.output;
  }
  const Result r = RunCli(quantize + "--rotary-layout halves");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace edgeattn
