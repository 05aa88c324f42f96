// The edgeattn program end to end: run on PyTorch golden models, bench, info, --help, errors.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/npy.hpp"
#include "tests/golden_cases.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr
};

Result RunCli(const std::string& args) {
  const std::string command = std::string(EDGEATTN_CLI_PATH) + " " + args + " 2>&1";
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

TEST(CliTest, RunReproducesPyTorch) {
  for (const auto& c : testing_support::LoadGoldenCases()) {
    SCOPED_TRACE(c.name);
    const std::string out = ::testing::TempDir() + "cli_" + c.name + ".npy";
    std::string args = "run --weights " + c.Path(".safetensors") + " --heads " +
                       std::to_string(c.heads) + " --input " + c.Path("_query.npy") +
                       " --output " + out + " --threads 2";
    if (c.cross) args += " --key " + c.Path("_key.npy") + " --value " + c.Path("_value.npy");
    if (c.causal) args += " --causal";
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
  r = RunCli(base + " --heads 4 --precision fp16");
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
}

TEST(CliTest, BenchJsonLines) {
  const Result r = RunCli("bench --seq 9 --d-model 24 --heads 3 --threads 1,2 --json "
                          "--min-time 0.01 --min-calls 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<nlohmann::json> lines;
  std::size_t start = 0;
  while (start < r.output.size()) {
    const std::size_t end = r.output.find('\n', start);
    const std::string line = r.output.substr(start, end - start);
    if (!line.empty() && line[0] == '{') lines.push_back(nlohmann::json::parse(line));
    start = end == std::string::npos ? r.output.size() : end + 1;
  }
  // reference, then fp32 and int8 at 1 and 2 threads
  ASSERT_EQ(lines.size(), 5u) << r.output;
  EXPECT_EQ(lines[0]["mode"], "reference");
  EXPECT_EQ(lines[3]["mode"], "int8");
  EXPECT_GT(lines[3]["cosine"].get<double>(), 0.999);
  for (const auto& line : lines) {
    for (const char* key : {"peer", "shape", "mode", "threads", "median_ms", "p90_ms", "gflops",
                            "max_abs_err", "cosine"}) {
      EXPECT_TRUE(line.contains(key)) << key;
    }
    EXPECT_EQ(line["peer"], "edgeattn");
    EXPECT_GT(line["median_ms"].get<double>(), 0.0);
    EXPECT_GE(line["p90_ms"].get<double>(), line["median_ms"].get<double>());
  }
  EXPECT_EQ(lines[2]["threads"], 2);
  EXPECT_LT(lines[1]["max_abs_err"].get<double>(), 1e-4);
  EXPECT_GT(lines[1]["cosine"].get<double>(), 0.99999);
}

TEST(CliTest, InfoAndHelp) {
  Result r = RunCli("info");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("highway chosen:"), std::string::npos);
  EXPECT_NE(r.output.find("oneTBB:"), std::string::npos);
  EXPECT_NE(r.output.find("int8 path:"), std::string::npos);
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
