// The edgeattn program's run command end to end: PyTorch golden models, the errors it names,
// and the files it writes, keeps or refuses to touch.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "edgeattn/npy.hpp"
#include "tests/golden_cases.h"
#include "tests/scratch_dir.h"
#include "tests/test_support.h"
#include "tests/tools/cli_runner.h"

namespace edgeattn {
namespace {

using cli_test::Result;
using cli_test::RunCli;

TEST(CliTest, RunReproducesPyTorch) {
  for (const auto& c : testing_support::LoadGoldenCases()) {
    SCOPED_TRACE(c.name);
    const std::string out = ::testing::TempDir() + "cli_" + c.name + ".npy";
    std::string args = "run --weights " + c.Path(".safetensors") + " --heads " +
                       std::to_string(c.heads) + " --input " + c.Path("_query.npy") + " --output " +
                       out + " --threads 2";
    if (c.cross) args += " --key " + c.Path("_key.npy") + " --value " + c.Path("_value.npy");
    if (c.causal) args += " --causal";
    if (!c.prefix.empty()) args += " --prefix " + c.prefix;
    if (c.key_padding_mask) args += " --key-padding-mask " + c.Path("_key_padding_mask.npy");
    if (c.attn_mask) args += " --attn-mask " + c.Path("_attn_mask.npy");
    const std::string weights_out = ::testing::TempDir() + "cli_" + c.name + "_weights.npy";
    if (!c.weights.empty()) {
      args += " --weights-output " + weights_out;
      if (c.weights == "per_head") args += " --per-head-weights";
    }
    const Result r = RunCli(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const NpyArray got = ReadNpy(out);
    const NpyArray expected = ReadNpy(c.Path("_output.npy"));
    EXPECT_EQ(got.shape, expected.shape);
    EXPECT_LE(testing_support::MaxAbsDiff(got.data, expected.data),
              1e-5 * testing_support::MaxAbs(expected.data));
    std::remove(out.c_str());
    if (!c.weights.empty()) {
      const NpyArray weights = ReadNpy(weights_out);
      const NpyArray want = ReadNpy(c.Path("_weights.npy"));
      EXPECT_EQ(weights.shape, want.shape);
      EXPECT_LE(testing_support::MaxAbsDiff(weights.data, want.data), 1e-6);
      std::remove(weights_out.c_str());
    }
  }
}

// The attention step's flags reproduce the PyTorch goldens (tools/make_step_golden.py; the
// layer's sinks and norm weights read from its file), and are checked.
TEST(CliTest, RunStepMathReproducesPyTorch) {
  const std::string dir = std::string(testing_support::TestDataDir()) + "/golden/";
  const struct {
    const char* name;
    const char* flags;
  } cases[] = {
      {"step_window", "--causal --window 9"},
      {"step_softcap", "--causal --softcap 1.5"},
      {"step_score_scale", "--score-scale 0.25"},
      // The largest window the library takes is accepted (and is no window at this length).
      {"step_score_scale", "--score-scale 0.25 --window 16777216"},
      {"step_rotary_interleaved", "--causal --rotary-layout interleaved"},
      {"step_combined",
       "--causal --score-scale 0.3 --softcap 3 --window 12 --qk-norm-eps 1e-6 "
       "--rotary-layout halves --rotary-dim 6 --rotary-base 1000"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string out = ::testing::TempDir() + "cli_" + c.name + ".npy";
    const Result r = RunCli("run --weights " + dir + c.name + ".safetensors --heads 4 --input " +
                            dir + c.name + "_query.npy --output " + out + " " + c.flags);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const NpyArray got = ReadNpy(out);
    const NpyArray want = ReadNpy(dir + c.name + "_output.npy");
    EXPECT_LE(testing_support::MaxAbsDiff(got.data, want.data),
              2e-5 * testing_support::BoundScale(want.data));
    std::remove(out.c_str());
  }
  const std::string base = "run --weights " + dir + "step_window.safetensors --heads 4 --input " +
                           dir + "step_window_query.npy --output " + ::testing::TempDir() +
                           "never.npy ";
  const struct {
    const char* flags;
    const char* error;
  } bad[] = {
      {"--softcap nan", "--softcap: expected 0 (off) or a finite positive number, got nan"},
      {"--softcap inf", "--softcap: expected 0 (off) or a finite positive number, got inf"},
      {"--rotary-layout halves --rotary-scaling inf",
       "--rotary-scaling: expected a finite positive number, got inf"},
      {"--window ''", "--window: expected a whole number below 2^64, got ''"},
      {"--score-scale -2", "--score-scale: expected 0 (off) or a finite positive number"},
      {"--window 99999999", "--window: expected 0 (off) or at most 16777216, got 99999999"},
      {"--rotary-dim 4", "--rotary-layout halves or interleaved, got --rotary-layout none"},
      {"--rotary-layout halves --rotary-dim 3", "--rotary-dim: expected an even number"},
      {"--rotary-layout halves --rotary-dim 10",
       "--rotary-dim: expected 0 (= head_dim) or an even count in [2, 8] (head_dim), got 10"},
      {"--rotary-layout halves --rotary-base 1", "--rotary-base: expected a finite number above 1"},
      {"--rotary-layout sideways", "--rotary-layout"},
  };
  for (const auto& b : bad) {
    const Result r = RunCli(base + b.flags);
    EXPECT_NE(r.exit_code, 0) << b.flags;
    EXPECT_NE(r.output.find(b.error), std::string::npos) << b.flags << ": " << r.output;
  }
}

TEST(CliTest, RunErrorsNameTheArgument) {
  const auto c = testing_support::LoadGoldenCases().front();
  const std::string base = "run --weights " + c.Path(".safetensors") + " --input " +
                           c.Path("_query.npy") + " --output " + ::testing::TempDir() + "x.npy";
  Result r = RunCli(base + " --heads 3");
  EXPECT_EQ(r.exit_code, 1);
  const std::string heads_error = "--heads: expected a divisor of d_model 16 (from "
                                  "'out_proj.weight' in '" + c.Path(".safetensors") + "'), got 3";
  EXPECT_NE(r.output.find(heads_error), std::string::npos) << r.output;
  r = RunCli(base + " --heads 17");
  EXPECT_NE(r.output.find("--heads: expected a divisor of d_model 16"), std::string::npos)
      << r.output;
  r = RunCli(base + " --heads 4 --key " + c.Path("_query.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--key and --value"), std::string::npos) << r.output;
  r = RunCli("run --weights /nonexistent.safetensors --heads 1 --input x --output y");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("/nonexistent.safetensors"), std::string::npos) << r.output;
  r = RunCli(base + " --heads 4 --precision fp8");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--precision"), std::string::npos) << r.output;
  // Mask files of the wrong dtype or shape (the first case is [7, 16], 4 heads).
  r = RunCli(base + " --heads 4 --key-padding-mask " + c.Path("_query.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--key-padding-mask"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("expected bool [7] (true = ignore the key), got float32 [7, 16]"),
            std::string::npos)
      << r.output;
  r = RunCli(base + " --heads 4 --attn-mask " + c.Path("_query.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--attn-mask"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("expected [7, 7] or [4, 7, 7] [batch * heads, Lq, Lk], got [7, 16]"),
            std::string::npos)
      << r.output;
  r = RunCli(base + " --heads 4 --threads 300");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--threads: expected 0 (one per hardware thread) or a count in [1, "
                          "256], got 300"),
            std::string::npos)
      << r.output;
  // Counts are whole numbers as written: CLI11 alone would read -1 as 2^64 - 1, and a number
  // past 2^64 as 2^64 - 1, and the messages would show those.
  for (const char* bad : {"--threads -1", "--heads -4", "--window -5", "--int8-block +8",
                          "--heads 99999999999999999999999"}) {
    r = RunCli(base + " --heads 4 " + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    const std::string option(bad, std::string(bad).find(' '));
    const std::string value = std::string(bad).substr(option.size() + 1);
    EXPECT_NE(r.output.find(option + ": expected a whole number below 2^64, got '" + value + "'"),
              std::string::npos)
        << r.output;
  }
  r = RunCli(base + " --heads 4 --precision int8 --int8-block 6");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--int8-block: expected a multiple of 4"), std::string::npos) << r.output;
  // A failed run writes no output file.
  const std::string never = ::testing::TempDir() + "never_written.npy";
  std::remove(never.c_str());
  r = RunCli("run --weights " + c.Path(".safetensors") + " --heads 3 --input " +
             c.Path("_query.npy") + " --output " + never);
  EXPECT_EQ(r.exit_code, 1);
  std::FILE* f = std::fopen(never.c_str(), "rb");
  EXPECT_EQ(f, nullptr) << "a failed run left " << never;
  if (f != nullptr) std::fclose(f);
  // A file that is not safetensors.
  r = RunCli("run --weights " + c.Path("_query.npy") + " --heads 1 --input " +
             c.Path("_query.npy") + " --output " + ::testing::TempDir() + "x.npy");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("safetensors"), std::string::npos) << r.output;
}

// The options whose values become the layer's Config (and the Context's threads) are named as
// typed, never by the library's names (Config.int8_block, LoadOptions.num_heads, Context:
// threads), in run and quantize alike.
TEST(CliTest, RunAndQuantizeErrorsNameTheOptionNotTheField) {
  const auto c = testing_support::LoadGoldenCases().front();  // d_model 16, 4 heads
  const std::string dir = ::testing::TempDir();
  const std::string run = "run --weights " + c.Path(".safetensors") + " --input " +
                          c.Path("_query.npy") + " --output " + dir + "x.npy ";
  const std::string quantize =
      "quantize --weights " + c.Path(".safetensors") + " --output " + dir + "q4.safetensors ";
  const struct {
    std::string args, message;
  } cases[] = {
      {run + "--heads 3", "--heads: expected a divisor of d_model 16 (from 'out_proj.weight'"},
      {run + "--heads 4 --precision int8 --int8-block 6",
       "--int8-block: expected a multiple of 4 in [4, 65536], got 6"},
      // Unused by fp32, but a value the library would refuse is a mistake all the same.
      {run + "--heads 4 --int8-block 0",
       "--int8-block: expected a multiple of 4 in [4, 65536], got 0"},
      {run + "--heads 4 --qk-norm-eps 1e-6",
       "q_norm_weight: expected 4 floats [head_dim = 4] with --qk-norm-eps, got none"},
      {run + "--heads 4 --threads 257",
       "--threads: expected 0 (one per hardware thread) or a count in [1, 256], got 257"},
      {quantize + "--heads 3", "--heads: expected a divisor of d_model 16"},
      {quantize + "--heads 4 --int8-block 65540",
       "--int8-block: expected a multiple of 4 in [4, 65536], got 65540"},
  };
  for (const auto& t : cases) {
    const Result r = RunCli(t.args);
    EXPECT_EQ(r.exit_code, 1) << t.args << "\n" << r.output;
    EXPECT_NE(r.output.find(t.message), std::string::npos) << t.args << "\n" << r.output;
    for (const char* field : {"Config.", "LoadOptions.", "num_heads", "Context:"}) {
      EXPECT_EQ(r.output.find(field), std::string::npos) << t.args << "\n" << r.output;
    }
  }
  // An int8 file records its heads; a different --heads is named as the option.
  ASSERT_EQ(RunCli(quantize + "--heads 4").exit_code, 0);
  const Result r = RunCli("run --weights " + dir + "q4.safetensors --heads 2 --input " +
                          c.Path("_query.npy") + " --output " + dir + "x.npy");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--heads: the int8 file '" + dir + "q4.safetensors' was quantized for "
                          "4 heads, got 2"),
            std::string::npos)
      << r.output;
}

// An empty file name or number is refused, not read as none (no weights file, no soft-capping).
TEST(CliTest, RunEmptyValuesAreRefused) {
  const auto c = testing_support::LoadGoldenCases().front();
  const std::string out = ::testing::TempDir() + "empty_value.npy";
  std::remove(out.c_str());
  for (const std::string option : {"--weights-output", "--softcap", "--rotary-scaling"}) {
    const Result r = RunCli("run --weights " + c.Path(".safetensors") + " --heads 4 --input " +
                            c.Path("_query.npy") + " --output " + out + " " + option + " ''");
    EXPECT_NE(r.exit_code, 0) << option << "\n" << r.output;
    EXPECT_NE(r.output.find(option + ": expected "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("got an empty value"), std::string::npos) << r.output;
    EXPECT_FALSE(std::ifstream(out).good()) << option << " wrote " << out;
  }
}

// Half-precision weights from a float file: close to PyTorch's output.
TEST(CliTest, RunWithHalfWeights) {
  const auto cases = testing_support::LoadGoldenCases();
  const auto& c = cases[1];  // self_batched
  const std::string out = ::testing::TempDir() + "half.npy";
  const NpyArray expected = ReadNpy(c.Path("_output.npy"));
  for (const char* precision : {"bf16", "fp16"}) {
    const Result r = RunCli("run --weights " + c.Path(".safetensors") + " --heads " +
                            std::to_string(c.heads) + " --precision " + precision + " --input " +
                            c.Path("_query.npy") + " --output " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_GT(testing_support::Cosine(ReadNpy(out).data, expected.data), 0.9999) << precision;
  }
}

// Every K/V format of a forward call meets the bounds against PyTorch's output; a format
// outside the list is refused by name.
TEST(CliTest, RunWithKvFormats) {
  const auto cases = testing_support::LoadGoldenCases();
  const auto& c = cases[1];  // self_batched
  const std::string out = ::testing::TempDir() + "kv_format.npy";
  const NpyArray expected = ReadNpy(c.Path("_output.npy"));
  for (const char* format : {"fp32", "bf16", "fp16", "int8"}) {
    const Result r =
        RunCli("run --weights " + c.Path(".safetensors") + " --heads " + std::to_string(c.heads) +
               " --kv-format " + format + " --input " + c.Path("_query.npy") + " --output " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const double bound = std::string(format) == "int8" ? 0.9995 : 0.9999;
    EXPECT_GT(testing_support::Cosine(ReadNpy(out).data, expected.data), bound) << format;
  }
  // auto: this CPU's choice, within the int8 bound.
  const Result automatic = RunCli(
      "run --weights " + c.Path(".safetensors") + " --heads " + std::to_string(c.heads) +
      " --precision auto --kv-format auto --input " + c.Path("_query.npy") + " --output " + out);
  ASSERT_EQ(automatic.exit_code, 0) << automatic.output;
  EXPECT_GT(testing_support::Cosine(ReadNpy(out).data, expected.data), 0.9995);
  const Result r =
      RunCli("run --weights " + c.Path(".safetensors") + " --heads " + std::to_string(c.heads) +
             " --kv-format int4 --input " + c.Path("_query.npy") + " --output " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--kv-format"), std::string::npos) << r.output;
}

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Every output path is checked before the run and both files replace nothing until both are
// written: a failed run leaves every existing file as it was.
TEST(CliTest, FailedRunsLeaveOutputsAlone) {
  const auto c = testing_support::LoadGoldenCases()[10];  // weights_per_head: 2 heads
  ASSERT_EQ(c.name, "weights_per_head");
  testing_support::ScratchDir dir;
  const std::string keep = dir.Path("keep.npy");
  std::ofstream(keep) << "keep me";
  const std::string run = "run --weights " + c.Path(".safetensors") + " --heads 2 --input " +
                          c.Path("_query.npy") + " --output " + keep;
  const auto expect_fails = [&](const std::string& extra, const std::string& fragment) {
    const Result r = RunCli(run + extra);
    EXPECT_EQ(r.exit_code, 1) << extra;
    EXPECT_NE(r.output.find(fragment), std::string::npos) << r.output;
    EXPECT_EQ(Contents(keep), "keep me") << extra;
  };
  expect_fails(
      " --weights-output /nonexistent/w.npy",
      "--weights-output '/nonexistent/w.npy': the directory '/nonexistent/' does not exist");
  expect_fails(" --weights-output " + keep, "names the same file as --output");
  expect_fails(" --weights-output " + dir.path() + "/./keep.npy", "names the same file");
  ASSERT_EQ(::mkdir(dir.Path("sub").c_str(), 0755), 0);
  expect_fails(" --weights-output " + dir.Path("sub/../keep.npy"), "names the same file");
  expect_fails(" --weights-output " + dir.Path("sub"), "expected a file, got a directory");
  // Failures while loading and while reading inputs, with a valid second output.
  expect_fails(" --prefix nope. --weights-output " + dir.Path("w.npy"), "prefix 'nope.'");
  expect_fails(" --attn-mask " + c.Path("_query.npy") + " --weights-output " + dir.Path("w.npy"),
               "--attn-mask");
  // A run that works replaces both.
  const Result ok = RunCli(run + " --weights-output " + dir.Path("w.npy"));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(ReadNpy(keep).shape, ReadNpy(c.Path("_output.npy")).shape);
  EXPECT_EQ(ReadNpy(dir.Path("w.npy")).shape, (std::vector<std::size_t>{1, 6, 6}));
  std::vector<std::string> names = dir.Names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"keep.npy", "sub", "w.npy"}));  // no temporaries
}

// No output replaces a file the command reads, however the two are spelled: the inputs are
// refused as outputs before anything runs, and stay as they were.
TEST(CliTest, OutputsNeverReplaceInputs) {
  const auto c = testing_support::LoadGoldenCases()[10];  // weights_per_head: 2 heads
  testing_support::ScratchDir dir;
  const std::string weights = dir.Path("w.safetensors"), input = dir.Path("x.npy");
  std::ofstream(weights, std::ios::binary) << Contents(c.Path(".safetensors"));
  std::ofstream(input, std::ios::binary) << Contents(c.Path("_query.npy"));
  const std::string before_weights = Contents(weights), before_input = Contents(input);
  const std::string run = "run --weights " + weights + " --heads 2 --input " + input;
  const auto expect_refused = [&](const std::string& command, const std::string& fragment) {
    const Result r = RunCli(command);
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_NE(r.output.find(fragment), std::string::npos) << r.output;
    EXPECT_EQ(Contents(weights), before_weights) << command;
    EXPECT_EQ(Contents(input), before_input) << command;
  };
  expect_refused(run + " --output " + weights,
                 "--output '" + weights + "': names the file --weights '" + weights + "' reads");
  expect_refused(run + " --output " + dir.path() + "/./x.npy", "names the file --input");
  expect_refused(run + " --output " + dir.Path("y.npy") + " --weights-output " + input,
                 "--weights-output '" + input + "': names the file --input");
  ASSERT_EQ(::symlink(input.c_str(), dir.Path("link.npy").c_str()), 0);
  expect_refused("run --weights " + weights + " --heads 2 --input " + dir.Path("link.npy") +
                     " --output " + input,
                 "names the file --input");
  expect_refused("run --weights " + weights + " --heads 2 --input " + input + " --key " + input +
                     " --value " + dir.Path("link.npy") + " --output " + input,
                 "names the file --input");
  expect_refused("quantize --weights " + weights + " --heads 2 --output " + weights,
                 "--output '" + weights + "': names the file --weights");
  // Writing over a symlink to an input replaces the link, not the input: allowed.
  const Result ok = RunCli(run + " --output " + dir.Path("link.npy"));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(Contents(input), before_input);
}

// The old writer went through a fixed <output>.tmp: a symlink planted there redirected it.
TEST(CliTest, PlantedTemporaryIsNotFollowed) {
  const auto c = testing_support::LoadGoldenCases().front();
  testing_support::ScratchDir dir;
  std::ofstream(dir.Path("victim")) << "precious";
  ASSERT_EQ(::symlink(dir.Path("victim").c_str(), dir.Path("y.npy.tmp").c_str()), 0);
  const Result r = RunCli("run --weights " + c.Path(".safetensors") + " --heads 4 --input " +
                          c.Path("_query.npy") + " --output " + dir.Path("y.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Contents(dir.Path("victim")), "precious");
  EXPECT_EQ(ReadNpy(dir.Path("y.npy")).shape, ReadNpy(c.Path("_output.npy")).shape);
}

// [L, d] input is one unbatched sequence: its key padding mask is [Lk], its weights [Lq, Lk]
// (or [heads, Lq, Lk]), and it computes what the same rows as [1, L, d] compute.
TEST(CliTest, RunUnbatchedInputTakesUnbatchedMasksAndWeights) {
  const auto c = testing_support::LoadGoldenCases().front();  // self_unbatched: [7, 16], 4 heads
  ASSERT_EQ(c.name, "self_unbatched");
  testing_support::ScratchDir dir;
  const NpyArray x = ReadNpy(c.Path("_query.npy"));
  ASSERT_EQ(x.shape, (std::vector<std::size_t>{7, 16}));
  NpyArray batched = x;
  batched.shape.insert(batched.shape.begin(), 1);
  WriteNpy(dir.Path("x3.npy"), batched);
  NpyArray mask;
  mask.dtype = NpyDType::kBool;
  mask.shape = {7};
  mask.data = {0, 0, 1, 0, 0, 1, 0};
  WriteNpy(dir.Path("mask1.npy"), mask);
  mask.shape = {1, 7};
  WriteNpy(dir.Path("mask2.npy"), mask);
  const std::string run = "run --threads 1 --weights " + c.Path(".safetensors") + " --heads 4 ";
  for (const bool per_head : {false, true}) {
    SCOPED_TRACE(per_head ? "per head" : "averaged");
    const std::string flags = per_head ? " --per-head-weights" : "";
    Result r = RunCli(run + "--input " + c.Path("_query.npy") + " --key-padding-mask " +
                      dir.Path("mask1.npy") + " --output " + dir.Path("y2.npy") +
                      " --weights-output " + dir.Path("w2.npy") + flags);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = RunCli(run + "--input " + dir.Path("x3.npy") + " --key-padding-mask " +
               dir.Path("mask2.npy") + " --output " + dir.Path("y3.npy") + " --weights-output " +
               dir.Path("w3.npy") + flags);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const NpyArray y2 = ReadNpy(dir.Path("y2.npy")), y3 = ReadNpy(dir.Path("y3.npy"));
    EXPECT_EQ(y2.shape, (std::vector<std::size_t>{7, 16}));
    EXPECT_EQ(y3.shape, (std::vector<std::size_t>{1, 7, 16}));
    EXPECT_EQ(y2.data, y3.data);
    const NpyArray w2 = ReadNpy(dir.Path("w2.npy")), w3 = ReadNpy(dir.Path("w3.npy"));
    EXPECT_EQ(w2.shape, per_head ? (std::vector<std::size_t>{4, 7, 7})
                                 : (std::vector<std::size_t>{7, 7}));
    EXPECT_EQ(w3.shape, per_head ? (std::vector<std::size_t>{1, 4, 7, 7})
                                 : (std::vector<std::size_t>{1, 7, 7}));
    EXPECT_EQ(w2.data, w3.data);
    // The padded keys get no weight.
    for (std::size_t i = 0; i < w2.data.size(); ++i) {
      if (mask.data[i % 7] != 0.0f) {
        EXPECT_EQ(w2.data[i], 0.0f) << i;
      }
    }
  }
  // --key and --value of another rank than --input are refused, whichever of the two it is.
  const std::string rank2 = c.Path("_query.npy"), rank3 = dir.Path("x3.npy");
  for (const std::string& kv : {"--key " + rank3 + " --value " + rank2,
                                "--key " + rank2 + " --value " + rank3}) {
    const Result r =
        RunCli(run + "--input " + rank2 + " " + kv + " --output " + dir.Path("never.npy"));
    EXPECT_EQ(r.exit_code, 1) << kv;
    EXPECT_NE(r.output.find("--key and --value: expected the same rank as --input (2)"),
              std::string::npos)
        << kv << ": " << r.output;
    EXPECT_FALSE(std::ifstream(dir.Path("never.npy")).good()) << kv;
  }
}

TEST(CliTest, InputsAndLayersAreChecked) {
  const auto cases = testing_support::LoadGoldenCases();
  const auto& mha = cases.front();
  const std::string out = " --output " + ::testing::TempDir() + "x.npy";
  // A float file without --heads asks for it.
  Result r = RunCli("run --weights " + mha.Path(".safetensors") + " --input " +
                    mha.Path("_query.npy") + out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("pass it (edgeattn run --heads N)"), std::string::npos) << r.output;
  // A bool .npy is a mask, not an input.
  const auto& masked = cases[9];  // weights_averaged: bool key_padding_mask [2, 300]
  ASSERT_TRUE(masked.key_padding_mask);
  r = RunCli("run --weights " + mha.Path(".safetensors") + " --heads 4 --input " +
             masked.Path("_key_padding_mask.npy") + out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("expected float32 [L, d] or [B, L, d], got a bool array"),
            std::string::npos)
      << r.output;
  // A checkpoint needs the layer's prefix; the error lists them.
  const auto& encoder = cases[14];
  ASSERT_EQ(encoder.name, "torch_encoder");
  const std::string base = "run --weights " + encoder.Path(".safetensors") + " --heads 4 --input " +
                           encoder.Path("_query.npy") + out;
  r = RunCli(base);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("'layers.0.self_attn.' (torch), 'layers.1.self_attn.' (torch)"),
            std::string::npos)
      << r.output;
  r = RunCli(base + " --prefix layers.1.self_attn --no-bias");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no_bias (bias=False) expects no bias tensors"), std::string::npos)
      << r.output;
  EXPECT_EQ(RunCli(base + " --prefix layers.1.self_attn --no-bias --non-strict").exit_code, 0);
}


}  // namespace
}  // namespace edgeattn
