// The edgeattn program end to end: run on PyTorch golden models, bench, info, --help, errors.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "edgeattn/cpu_dispatch.hpp"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/npy.hpp"
#include "tests/golden_cases.h"
#include "tests/scratch_dir.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr
};

// Runs the program; `redirect` says what the result's output holds (default: stdout and stderr).
Result RunCli(const std::string& args, const std::string& redirect = "2>&1") {
  const std::string command = std::string(EDGEATTN_CLI_PATH) + " " + args + " " + redirect;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  Result result{0, ""};
  char buf[4096];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), pipe)) > 0) result.output.append(buf, got);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Runs a shell command with stderr on a pseudo-terminal and returns what it wrote there.
std::string RunOnTerminal(const std::string& command) {
  int terminal = -1, child_side = -1;
  if (openpty(&terminal, &child_side, nullptr, nullptr, nullptr) != 0) return "openpty failed";
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(child_side, STDERR_FILENO);
    close(terminal);
    close(child_side);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(child_side);
  std::string out;
  char buf[4096];
  ssize_t got;
  // read fails (EIO) once the child's side is closed.
  while ((got = read(terminal, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(got));
  close(terminal);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

TEST(CliTest, RunReproducesPyTorch) {
  for (const auto& c : testing_support::LoadGoldenCases()) {
    SCOPED_TRACE(c.name);
    const std::string out = ::testing::TempDir() + "cli_" + c.name + ".npy";
    std::string args = "run --weights " + c.Path(".safetensors") + " --heads " +
                       std::to_string(c.heads) + " --input " + c.Path("_query.npy") +
                       " --output " + out + " --threads 2";
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
      {"step_rotary_interleaved", "--causal --rotary-layout interleaved"},
      {"step_combined", "--causal --score-scale 0.3 --softcap 3 --window 12 --qk-norm-eps 1e-6 "
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
              2e-5 * (1.0 + testing_support::MaxAbs(want.data)));
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
      {"--score-scale -2", "--score-scale: expected 0 (off) or a finite positive number"},
      {"--window 99999999", "--window: expected 0 (off) or at most 16777216, got 99999999"},
      {"--rotary-dim 4", "--rotary-layout halves or interleaved, got --rotary-layout none"},
      {"--rotary-layout halves --rotary-dim 3", "--rotary-dim: expected an even number"},
      {"--rotary-layout halves --rotary-dim 10", "rotary_dim: expected 0 (= head_dim) or an "
                                                 "even count in [2, 8]"},
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
  EXPECT_NE(r.output.find("multiple of num_heads (3)"), std::string::npos) << r.output;
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
            std::string::npos) << r.output;
  r = RunCli(base + " --heads 4 --attn-mask " + c.Path("_query.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--attn-mask"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("expected [7, 7] or [4, 7, 7] [batch * heads, Lq, Lk], got [7, 16]"),
            std::string::npos) << r.output;
  r = RunCli(base + " --heads 4 --threads -1");  // reaches the library as SIZE_MAX
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("threads: expected 0 (one per hardware thread) or a count in [1, 256]"),
            std::string::npos) << r.output;
  r = RunCli(base + " --heads 4 --precision int8 --int8-block 6");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("int8_block: expected a multiple of 4"), std::string::npos) << r.output;
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

// Half-precision weights from a float file: close to PyTorch's output.
TEST(CliTest, RunWithHalfWeights) {
  const auto cases = testing_support::LoadGoldenCases();
  const auto& c = cases[1];  // self_batched
  const std::string out = ::testing::TempDir() + "half.npy";
  const NpyArray expected = ReadNpy(c.Path("_output.npy"));
  for (const char* precision : {"bf16", "fp16"}) {
    const Result r = RunCli("run --weights " + c.Path(".safetensors") + " --heads " +
                            std::to_string(c.heads) + " --precision " + precision +
                            " --input " + c.Path("_query.npy") + " --output " + out);
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
    const Result r = RunCli("run --weights " + c.Path(".safetensors") + " --heads " +
                            std::to_string(c.heads) + " --kv-format " + format + " --input " +
                            c.Path("_query.npy") + " --output " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const double bound = std::string(format) == "int8" ? 0.9995 : 0.9999;
    EXPECT_GT(testing_support::Cosine(ReadNpy(out).data, expected.data), bound) << format;
  }
  // auto: this CPU's choice, within the int8 bound.
  const Result automatic =
      RunCli("run --weights " + c.Path(".safetensors") + " --heads " + std::to_string(c.heads) +
             " --precision auto --kv-format auto --input " + c.Path("_query.npy") + " --output " +
             out);
  ASSERT_EQ(automatic.exit_code, 0) << automatic.output;
  EXPECT_GT(testing_support::Cosine(ReadNpy(out).data, expected.data), 0.9995);
  const Result r = RunCli("run --weights " + c.Path(".safetensors") + " --heads " +
                          std::to_string(c.heads) + " --kv-format int4 --input " +
                          c.Path("_query.npy") + " --output " + out);
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
  expect_fails(" --weights-output /nonexistent/w.npy",
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
            std::string::npos) << r.output;
  // A checkpoint needs the layer's prefix; the error lists them.
  const auto& encoder = cases[14];
  ASSERT_EQ(encoder.name, "torch_encoder");
  const std::string base = "run --weights " + encoder.Path(".safetensors") + " --heads 4 --input " +
                           encoder.Path("_query.npy") + out;
  r = RunCli(base);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("'layers.0.self_attn.' (torch), 'layers.1.self_attn.' (torch)"),
            std::string::npos) << r.output;
  r = RunCli(base + " --prefix layers.1.self_attn --no-bias");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no_bias (bias=False) expects no bias tensors"), std::string::npos)
      << r.output;
  EXPECT_EQ(RunCli(base + " --prefix layers.1.self_attn --no-bias --non-strict").exit_code, 0);
}

TEST(CliTest, InfoListsTheLayersOfACheckpoint) {
  const auto cases = testing_support::LoadGoldenCases();
  const auto& qwen = cases[17];
  ASSERT_EQ(qwen.name, "hf_qwen2");
  Result r = RunCli("info --weights " + qwen.Path(".safetensors"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* line : {"2 attention layers", "layer 'model.layers.1.self_attn.': llama",
                           "d_model 32, kv dim 16, heads not recorded",
                           "biases: q_proj.bias, k_proj.bias, v_proj.bias", "dtype: F32",
                           "k_proj.weight                F32   [16, 32]"}) {
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  }
  r = RunCli("info --weights " + cases[16].Path(".safetensors"));  // hf_whisper_cross
  EXPECT_NE(r.output.find("'model.decoder.layers.0.encoder_attn.': whisper"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("biases: q_proj.bias, v_proj.bias, out_proj.bias"), std::string::npos)
      << r.output;
  // An int8 file records its heads.
  testing_support::ScratchDir dir;
  ASSERT_EQ(RunCli("quantize --weights " + qwen.Path(".safetensors") +
                   " --prefix model.layers.1.self_attn. --heads 4 --output " + dir.Path("q8"))
                .exit_code,
            0);
  r = RunCli("info --weights " + dir.Path("q8"));
  EXPECT_NE(r.output.find("edgeattn-int8"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("d_model 32, kv dim 16, heads 4"), std::string::npos) << r.output;
  r = RunCli("info --weights " + qwen.Path("_query.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("safetensors"), std::string::npos) << r.output;
}

// The JSON objects among a command's output lines.
std::vector<nlohmann::json> JsonLines(const std::string& output) {
  std::vector<nlohmann::json> lines;
  std::size_t start = 0;
  while (start < output.size()) {
    const std::size_t end = output.find('\n', start);
    const std::string line = output.substr(start, end - start);
    if (!line.empty() && line[0] == '{') lines.push_back(nlohmann::json::parse(line));
    start = end == std::string::npos ? output.size() : end + 1;
  }
  return lines;
}

std::vector<std::string> Lines(const std::string& output) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < output.size()) {
    const std::size_t end = output.find('\n', start);
    lines.push_back(output.substr(start, end - start));
    start = end == std::string::npos ? output.size() : end + 1;
  }
  return lines;
}

// A small custom shape measured quickly; the options under test come after it.
const std::string kSmallBench = "bench --d-model 24 --heads 3 --min-time 0.01 --min-calls 3 ";

// The rows of a small bench run that must succeed, as JSON.
std::vector<nlohmann::json> SmallBenchRows(const std::string& args) {
  const Result r = RunCli(kSmallBench + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return JsonLines(r.output);
}

TEST(CliTest, BenchJsonLines) {
  const std::vector<nlohmann::json> lines = SmallBenchRows("--seq 9 --threads 1,2");
  // reference, then fp32, int8 and auto (named by what it resolved to) at 1 and 2 threads; the
  // K/V format is the mode's own: fp32, and auto's choice for auto
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0]["mode"], "reference");
  EXPECT_EQ(lines[0]["reference"], "measured");
  EXPECT_EQ(lines[1]["kv_format"], "fp32");
  EXPECT_EQ(lines[3]["mode"], "int8");
  EXPECT_EQ(lines[3]["kv_format"], "fp32");
  EXPECT_GT(lines[3]["cosine"].get<double>(), 0.999);
  EXPECT_NE(lines[5]["mode"], "auto");
  EXPECT_NE(lines[5]["kv_format"], "auto");
  EXPECT_GT(lines[5]["cosine"].get<double>(), 0.999);
  for (const auto& line : lines) {
    // The keys tools/peers/summarize.py and tools/plot_bench.py read, and what was measured.
    for (const char* key :
         {"peer", "shape", "mode", "threads", "median_ms", "p90_ms", "p99_ms", "stddev_ms",
          "gflops", "max_abs_err", "cosine", "version", "cpu", "time", "batch", "seq", "key_len",
          "d_model", "heads", "kv_heads", "mask", "highway_version", "highway_target", "kernel",
          "calls", "warmup", "peak_rss_bytes", "workspace_bytes", "load_average"}) {
      EXPECT_TRUE(line.contains(key)) << key;
    }
    EXPECT_EQ(line["peer"], "edgeattn");
    EXPECT_EQ(line["version"], EDGEATTN_VERSION_STRING);
    EXPECT_EQ(line["shape"], "custom");
    EXPECT_EQ(line["seq"], 9);
    EXPECT_EQ(line["key_len"], 9);
    EXPECT_EQ(line["d_model"], 24);
    EXPECT_EQ(line["heads"], 3);
    EXPECT_EQ(line["kv_heads"], 3);
    EXPECT_EQ(line["mask"], "none");
    EXPECT_FALSE(line["cpu"].get<std::string>().empty());
    EXPECT_GT(line["median_ms"].get<double>(), 0.0);
    EXPECT_GE(line["p90_ms"].get<double>(), line["median_ms"].get<double>());
    EXPECT_GE(line["p99_ms"].get<double>(), line["p90_ms"].get<double>());
    EXPECT_GE(line["max_ms"].get<double>(), line["p99_ms"].get<double>());
    EXPECT_LE(line["min_ms"].get<double>(), line["median_ms"].get<double>());
    EXPECT_GE(line["stddev_ms"].get<double>(), 0.0);
  }
  EXPECT_EQ(lines[1]["warmup"], 2);
  EXPECT_GE(lines[1]["calls"].get<int>(), 3);
  EXPECT_EQ(lines[2]["threads"], 2);
  EXPECT_LT(lines[1]["max_abs_err"].get<double>(), 1e-4);
  EXPECT_GT(lines[1]["cosine"].get<double>(), 0.99999);
  EXPECT_FALSE(lines[1]["highway_target"].get<std::string>().empty());
  EXPECT_EQ(lines[1]["highway_version"], HighwayVersion());
  EXPECT_TRUE(lines[0]["highway_version"].is_null());  // the reference ran no kernel
  EXPECT_TRUE(lines[0]["kernel"].is_null());  // the reference
  EXPECT_EQ(lines[1]["kernel"], ProjectionKernels(Precision::kFp32).front());
  EXPECT_EQ(lines[3]["kernel"], ProjectionKernels(Precision::kInt8).front());
  EXPECT_EQ(lines[3]["attention_kernel"], AttentionKernels().front());
  EXPECT_EQ(lines[3]["int8_block"], kDefaultInt8Block);
  EXPECT_GT(lines[1]["workspace_bytes"].get<double>(), 0.0);
  EXPECT_GT(lines[1]["peak_rss_bytes"].get<double>(), 0.0);
  EXPECT_GE(lines[1]["load_average"].get<double>(), 0.0);
}

// Batch, cross-attention, causal, grouped-query heads, exact repetitions and warm-up.
TEST(CliTest, BenchShapeOptions) {
  const std::vector<nlohmann::json> lines =
      SmallBenchRows("--seq 5 --key-len 11 --batch 2 --causal --kv-heads 1 --threads 1 "
                     "--precision fp32 --warmup 1 --repetitions 4");
  ASSERT_EQ(lines.size(), 2u);
  for (const auto& line : lines) {
    EXPECT_EQ(line["batch"], 2);
    EXPECT_EQ(line["seq"], 5);
    EXPECT_EQ(line["key_len"], 11);
    EXPECT_EQ(line["cross"], true);
    EXPECT_EQ(line["mask"], "causal");
    EXPECT_EQ(line["kv_heads"], 1);
    EXPECT_EQ(line["case"], "forward");
  }
  EXPECT_EQ(lines[1]["mode"], "fp32");
  EXPECT_EQ(lines[1]["warmup"], 1);
  EXPECT_EQ(lines[1]["calls"], 4);
  EXPECT_LT(lines[1]["max_abs_err"].get<double>(), 1e-4);
}

// Decode steps against a cache of each length of a sweep; their error is against the causal
// reference over the whole sequence.
// --kv-format applies to forward rows too: each row names its format and prints its accuracy.
TEST(CliTest, BenchForwardKvFormats) {
  const std::vector<nlohmann::json> lines =
      SmallBenchRows("--seq 33 --threads 1 --precision fp32 --kv-format fp32,bf16,int8");
  ASSERT_EQ(lines.size(), 4u);  // reference, then fp32 projections with each K/V format
  EXPECT_TRUE(lines[0]["kv_format"].is_null());
  const char* formats[] = {"fp32", "bf16", "int8"};
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(lines[i]["case"], "forward");
    EXPECT_EQ(lines[i]["kv_format"], formats[i - 1]);
    EXPECT_EQ(lines[i]["attention_kernel"],
              AttentionKernels(i == 1 ? KvFormat::kFp32
                                      : i == 2 ? KvFormat::kBf16 : KvFormat::kInt8)
                  .front());
    EXPECT_GT(lines[i]["cosine"].get<double>(), 0.9995) << formats[i - 1];
  }
  // auto rows name what auto resolved to.
  const std::vector<nlohmann::json> automatic =
      SmallBenchRows("--seq 9 --threads 1 --precision auto --kv-format auto --reference never");
  ASSERT_EQ(automatic.size(), 1u);
  EXPECT_EQ(automatic[0]["mode"], PrecisionName(AutoChoiceForThisCpu().precision));
  EXPECT_EQ(automatic[0]["kv_format"], KvFormatName(AutoChoiceForThisCpu().kv_format));
}

TEST(CliTest, BenchDecodeSweep) {
  const std::vector<nlohmann::json> lines =
      SmallBenchRows("--seq 2 --decode 4:16:x2 --threads 1 --precision fp32,int8 "
                     "--reference always");
  ASSERT_EQ(lines.size(), 9u);  // caches 4, 8, 16: reference, fp32, int8
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t cache = std::size_t{4} << (i / 3);
    EXPECT_EQ(lines[i]["case"], "decode");
    EXPECT_EQ(lines[i]["cache_len"], cache);
    EXPECT_EQ(lines[i]["key_len"], cache + 2);
    EXPECT_EQ(lines[i]["mask"], "causal");
  }
  EXPECT_LT(lines[1]["max_abs_err"].get<double>(), 1e-4);
  EXPECT_GT(lines[2]["cosine"].get<double>(), 0.999);
  EXPECT_GT(lines[1]["cache_bytes"].get<double>(), 0.0);
}

// The decode shape's rows: the self-attention step, 4 beams reordering the cache before each
// step, Whisper-tiny's cross-attention step with a memory and re-projecting the frames, then
// the windowed cache; the memory's bytes are the row's cache bytes.
TEST(CliTest, BenchDecodeShapeRows) {
  const Result r = RunCli("bench --shape decode --threads 1 --precision fp32 --repetitions 1 "
                          "--warmup 0 --reference never --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<nlohmann::json> lines = JsonLines(r.output);
  ASSERT_EQ(lines.size(), 5u);
  const char* cases[] = {"decode", "beams", "xmem", "xproj", "decode"};
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i]["case"], cases[i]);
  EXPECT_EQ(lines[1]["batch"], 4);
  EXPECT_EQ(lines[1]["cache_len"], 512);
  for (std::size_t i : {2, 3}) {
    EXPECT_EQ(lines[i]["key_len"], 1500);
    EXPECT_EQ(lines[i]["d_model"], 384);
    EXPECT_EQ(lines[i]["mask"], "none");
  }
  EXPECT_GT(lines[2]["cache_bytes"].get<double>(), 1500.0 * 2 * 384 * sizeof(float) - 1);
  EXPECT_EQ(lines[3]["cache_bytes"], 0);
  EXPECT_EQ(lines[4]["window"], 512);
  EXPECT_EQ(lines[4]["cache_len"], 4096);
  // A ring of 576 slots: 12 heads of 64 dims, keys and values in float.
  EXPECT_LT(lines[4]["cache_bytes"].get<double>(), 577.0 * 2 * 768 * sizeof(float));
  EXPECT_GT(lines[4]["cache_bytes"].get<double>(), 576.0 * 2 * 768 * sizeof(float) - 1);
}

// A windowed decode row: its cache holds a ring of the window, not the context; the step
// maths' flags reach the operator and the reference alike.
TEST(CliTest, BenchWindowedDecodeAndStepMath) {
  // The reference always runs: auto decides by a timed probe, which a loaded machine can slow.
  const std::string decode =
      "--seq 1 --decode 1000 --threads 1 --precision fp32 --reference always";
  const std::vector<nlohmann::json> plain = SmallBenchRows(decode);
  const std::vector<nlohmann::json> windowed = SmallBenchRows(decode + " --window 16");
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_EQ(windowed.size(), 2u);
  EXPECT_EQ(windowed[1]["window"], 16);
  EXPECT_LT(windowed[1]["max_abs_err"].get<double>(), 1e-4);
  EXPECT_LT(windowed[1]["cache_bytes"].get<double>(), plain[1]["cache_bytes"].get<double>() / 3);
  const std::vector<nlohmann::json> maths = SmallBenchRows(
      "--seq 1 --decode 70 --threads 1 --precision fp32 --reference always --rotary-layout halves "
      "--rotary-dim 4 --softcap 5 --score-scale 0.2 --qk-norm-eps 1e-6");
  ASSERT_EQ(maths.size(), 2u);
  EXPECT_LT(maths[1]["max_abs_err"].get<double>(), 1e-4);
  const Result r = RunCli(kSmallBench + "--seq 4 --softcap inf");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--softcap"), std::string::npos) << r.output;
}

// Lists and sweeps of L and threads give one group per L and one row per thread count.
TEST(CliTest, BenchSequenceAndThreadSweeps) {
  const std::vector<nlohmann::json> lines =
      SmallBenchRows("--seq 4:16:x2,20 --threads 1:2 --precision int8 --reference never");
  ASSERT_EQ(lines.size(), 8u);
  const int seqs[] = {4, 8, 16, 20};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["seq"], seqs[i / 2]);
    EXPECT_EQ(lines[i]["threads"], 1 + i % 2);
    EXPECT_EQ(lines[i]["reference"], "never");
    EXPECT_TRUE(lines[i]["cosine"].is_null());
  }
}

// --reference auto skips a reference that would take longer than the rows it serves, and the
// rows say so; always runs it anyway.
TEST(CliTest, BenchReferencePolicy) {
  // A float reference of 13 GFLOP: seconds, where the one int8 call takes milliseconds.
  const std::string big = "bench --d-model 512 --heads 8 --seq 2048 --threads 1 --precision "
                          "int8 --min-time 0 --min-calls 1 --warmup 0 --json";
  Result r = RunCli(big);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<nlohmann::json> lines = JsonLines(r.output);
  ASSERT_EQ(lines.size(), 2u) << r.output;
  EXPECT_EQ(lines[0]["reference"], "skipped");
  EXPECT_TRUE(lines[0]["median_ms"].is_null());
  EXPECT_GT(lines[0]["reference_estimate_ms"].get<double>(), 1000.0);
  EXPECT_EQ(lines[1]["reference"], "skipped");
  EXPECT_TRUE(lines[1]["max_abs_err"].is_null());
  EXPECT_GT(lines[1]["median_ms"].get<double>(), 0.0);
  lines = SmallBenchRows("--seq 8 --threads 1 --precision fp32 --reference always");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["reference"], "measured");
  EXPECT_TRUE(lines[1]["reference_estimate_ms"].is_null());
  EXPECT_LT(lines[1]["max_abs_err"].get<double>(), 1e-4);
}

// The table and Markdown carry the environment line and the same columns; CSV has a header
// and one line per row with as many fields.
TEST(CliTest, BenchTableCsvMarkdown) {
  const std::string args = kSmallBench + "--seq 8 --threads 1 --precision fp32,int8 ";
  Result r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> lines = Lines(r.output);
  ASSERT_EQ(lines.size(), 5u) << r.output;  // environment, header, reference, fp32, int8
  EXPECT_EQ(lines[0].rfind(std::string("edgeattn ") + EDGEATTN_VERSION_STRING + ", CPU ", 0), 0u)
      << lines[0];
  // "Highway 1.0.3 target AVX3_DL": the version, then the target dispatch chose.
  EXPECT_NE(lines[0].find("Highway " + HighwayVersion() + " target "), std::string::npos)
      << lines[0];
  for (const char* column : {"shape", "B", "Lk", "d/h/kv", "mask", "p50 ms", "p90 ms", "p99 ms",
                             "sd ms", "max abs err", "cosine", "peak MiB", "load", "kernels"}) {
    EXPECT_NE(lines[1].find(column), std::string::npos) << column;
  }
  EXPECT_NE(lines[3].find("24/3/3"), std::string::npos) << lines[3];
  EXPECT_NE(lines[4].find("int8 "), std::string::npos) << lines[4];

  r = RunCli(args + "--format markdown");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  lines = Lines(r.output);
  ASSERT_EQ(lines.size(), 7u) << r.output;  // environment, blank, header, rule, 3 rows
  EXPECT_TRUE(lines[1].empty());
  EXPECT_EQ(lines[2].rfind("| shape | case |", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3].rfind("| --- | --- | ---: |", 0), 0u) << lines[3];
  const auto bars = [](const std::string& s) { return std::count(s.begin(), s.end(), '|'); };
  for (std::size_t i = 3; i < lines.size(); ++i) EXPECT_EQ(bars(lines[i]), bars(lines[2]));

  r = RunCli(args + "--format csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  lines = Lines(r.output);
  ASSERT_EQ(lines.size(), 4u) << r.output;
  EXPECT_EQ(lines[0].rfind("peer,version,cpu,time,load_average,shape,", 0), 0u) << lines[0];
  // The CPU name may hold commas: count fields outside quotes.
  const auto fields = [](const std::string& s) {
    std::size_t n = 1;
    bool quoted = false;
    for (char c : s) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++n;
    }
    return n;
  };
  for (const std::string& line : lines) EXPECT_EQ(fields(line), fields(lines[0])) << line;
  EXPECT_NE(lines[2].find(",fp32,"), std::string::npos) << lines[2];
}

// --kernel measures each named kernel in its own row, whatever its precision.
TEST(CliTest, BenchKernelsByName) {
  const std::string fp32 = ProjectionKernels(Precision::kFp32).front();
  const std::vector<std::string> int8 = ProjectionKernels(Precision::kInt8);
  const std::string names = fp32 + "," + int8.back() + "," + int8.front();
  const std::vector<nlohmann::json> rows =
      SmallBenchRows("--seq 9 --threads 1 --reference never --kernel " + names);
  const std::size_t want = int8.size() == 1 ? 2 : 3;  // a name given twice is one row
  ASSERT_EQ(rows.size(), want);
  EXPECT_EQ(rows[0]["kernel"], fp32);
  EXPECT_EQ(rows[0]["mode"], "fp32");
  EXPECT_EQ(rows[1]["kernel"], int8.back());
  EXPECT_EQ(rows[1]["mode"], "int8");
  EXPECT_EQ(rows.back()["kernel"], int8.front());
}

TEST(CliTest, BenchOptionErrorsNameTheOption) {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"--seq 9:3", "--seq: sweep '9:3' starts above its end"},
      {"--seq 4:64:x1", "--seq: sweep '4:64:x1' never advances"},
      {"--seq 4:64:+0", "never advances"},
      {"--seq 1:5000", "--seq: expected at most 1000 values"},
      {"--seq 8,abc", "--seq: expected a number, a list such as 64,128 or a sweep"},
      {"--seq 0", "--seq: expected values in [1, 1048576], got 0"},
      {"--seq 8 --threads 1,5000", "--threads: expected values in [0, 256], got 5000"},
      {"--seq 8 --kernel f32_nope", "--kernel: expected one of the kernels this CPU runs"},
      {"--seq 8 --batch 0", "--batch: expected a value in [1, 65536], got 0"},
      {"--seq 8 --kv-heads 4", "--kv-heads: expected a divisor of the heads (3), got 4"},
      {"--seq 8 --kv-heads 2", "Config.num_kv_heads"},
      {"--seq 8 --decode 4 --key-len 3", "--key-len: decode steps attend to their cache"},
      {"--seq 8 --int8-block 6", "int8_block: expected a multiple of 4"},
      {"--seq 1048576 --batch 65536", "needs"},
      {"--seq 8 --json --format csv", "--json and --format csv"},
  };
  for (const auto& c : cases) {
    const Result r = RunCli(kSmallBench + c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
    // Nothing but the error: no table header before it.
    EXPECT_EQ(r.output.find("edgeattn 0"), std::string::npos) << c.args << "\n" << r.output;
  }
  Result r = RunCli("bench --d-model 24 --seq 8");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--d-model, --heads and --seq: expected all three"), std::string::npos)
      << r.output;
  r = RunCli("bench --shape bert --d-model 24 --heads 3 --seq 8");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--shape and --d-model/--heads"), std::string::npos) << r.output;
  for (const char* bad : {"--reference sometimes", "--format xml", "--min-time -1",
                          "--repetitions 100000000", "--precision int8 --kernel f32_6x4v"}) {
    r = RunCli(kSmallBench + "--seq 8 " + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.output.find(std::string(bad).substr(0, std::string(bad).find(' '))),
              std::string::npos)
        << bad << "\n" << r.output;
  }
}

// Output to a pipe gets no progress line; on a terminal, stderr shows one while rows run and
// clears it before each row.
TEST(CliTest, BenchProgressOnlyOnATerminal) {
  const Result quiet = RunCli(kSmallBench + "--seq 8 --threads 1 --json", "2>&1 >/dev/null");
  ASSERT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.output, "");  // stderr, a pipe here
  const std::string tty =
      RunOnTerminal(std::string(EDGEATTN_CLI_PATH) +
                    " bench --d-model 24 --heads 3 --seq 8 --threads 1 --min-time 0.3 --json "
                    ">/dev/null");
  EXPECT_NE(tty.find("custom B1 L8 Lk8 reference"), std::string::npos) << tty;
  EXPECT_NE(tty.find("fp32 (" + ProjectionKernels(Precision::kFp32).front() + ") kv fp32 1 thr: "),
            std::string::npos)
      << tty;
  EXPECT_NE(tty.find("\r\033[K"), std::string::npos) << tty;
}

TEST(CliTest, InfoAndHelp) {
  Result r = RunCli("info");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("highway chosen:"), std::string::npos);
  EXPECT_NE(r.output.find("highway version:     " + HighwayVersion() + "\n"), std::string::npos)
      << r.output;
  // The pool a default context runs on, as this build makes it.
  EXPECT_NE(r.output.find(std::string("thread pool:         ") +
                          (EDGEATTN_WITH_TBB ? "oneTBB\n" : "std::thread\n")),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("spinning:            allowed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(EDGEATTN_WITH_TBB ? "oneTBB:              20" : "(not built in)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("threads:             "), std::string::npos) << r.output;
#if defined(__x86_64__)
  // The features the compact kernels hinge on, as the kernel reports them.
  const std::string features = r.output.substr(0, r.output.find('\n')) + " ";
  for (const auto& [kernel_flag, info_name] :
       {std::pair<const char*, const char*>{"avx512_fp16", "avx512fp16"}, {"amx_tile", "amx-tile"},
        {"amx_int8", "amx-int8"}, {"amx_bf16", "amx-bf16"}}) {
    EXPECT_EQ(testing_support::CpuInfoHasFlag(kernel_flag),
              features.find(std::string(" ") + info_name + " ") != std::string::npos)
        << info_name << ": " << features;
  }
#endif
  const std::vector<std::string> int8 = ProjectionKernels(Precision::kInt8);
  EXPECT_NE(r.output.find("int8 chosen:         " + int8.front() + "\n"), std::string::npos)
      << r.output;
  for (const std::string& name : int8) {
    EXPECT_NE(r.output.find(" " + name), std::string::npos) << name << " missing: " << r.output;
  }
  EXPECT_NE(r.output.find("bf16 kernels:        " + ProjectionKernels(Precision::kBf16).front()),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("fp16 kernels:        " + ProjectionKernels(Precision::kFp16).front()),
            std::string::npos)
      << r.output;
  // What auto picks here, by format and kernel.
  const AutoChoice choice = AutoChoiceForThisCpu();
  EXPECT_NE(r.output.find(std::string("auto precision:      ") + PrecisionName(choice.precision) +
                          " (" + ProjectionKernels(choice.precision).front() + ")"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(std::string("auto kv forward:     ") + KvFormatName(choice.kv_format) +
                          " (" + AttentionKernels(choice.kv_format).front() + ")"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(std::string("auto kv cache:       ") +
                          KvFormatName(choice.cache_format) + " (" +
                          AttentionKernels(choice.cache_format).front() + ")"),
            std::string::npos)
      << r.output;
  for (const char* sub : {"run", "bench", "quantize", "info"}) {
    r = RunCli(std::string(sub) + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub;
    EXPECT_NE(r.output.find("--help"), std::string::npos) << sub;
  }
  r = RunCli("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, std::string("edgeattn ") + EDGEATTN_VERSION_STRING + "\n");
  EXPECT_NE(RunCli("bench --shape huge").exit_code, 0);
  EXPECT_NE(RunCli("").exit_code, 0);
}

}  // namespace
}  // namespace edgeattn
