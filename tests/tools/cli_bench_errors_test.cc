// edgeattn bench's errors: each names the option as typed and what it expected, and comes
// before any row is measured.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/tools/cli_runner.h"

namespace edgeattn {
namespace {

using cli_test::kSmallBench;
using cli_test::Result;
using cli_test::RunCli;
using cli_test::SmallBenchRows;

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
      {"--seq 8 --kv-heads 2", "--kv-heads: expected a divisor of the heads (3), got 2"},
      {"--seq 8 --decode 4 --key-len 3", "--key-len: decode steps attend to their cache"},
      {"--seq 8 --int8-block 6", "--int8-block: expected a multiple of 4 in [4, 65536], got 6"},
      {"--seq 8 --precision fp32 --int8-block 0", "--int8-block: expected a multiple of 4"},
      {"--seq 8 --rotary-layout halves --rotary-dim 10",
       "--rotary-dim: expected 0 (all of head_dim) or an even count in [2, 8] (head_dim = "
       "d_model / heads), got 10"},
      {"--seq 1048576 --batch 65536", "needs"},
      // Refused before any group is built (kMaxBenchRows): 10^6 groups of a reference and 2 rows.
      {"--seq 1:1000 --key-len 1:1000 --threads 1,2 --precision fp32",
       "--seq 1:1000 --key-len 1:1000 --threads 1,2: expected at most 10000 rows in one run, got "
       "3000000 (1000000 groups of shape, L, Lk and cache length times 3 per group)"},
      {"--seq 1:101 --key-len 1:100 --threads 1 --precision fp32 --reference never",
       "expected at most 10000 rows in one run, got 10100"},
      {"--seq 8 --json --format csv", "--json and --format csv"},
  };
  for (const auto& c : cases) {
    const Result r = RunCli(kSmallBench + c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
    // Nothing but the error: no table header before it.
    EXPECT_EQ(r.output.find("edgeattn 0"), std::string::npos) << c.args << "\n" << r.output;
    // The options as typed, not the library's fields they set.
    EXPECT_EQ(r.output.find("Config."), std::string::npos) << c.args << "\n" << r.output;
  }
  const struct {
    const char* args;
    const char* message;
  } shapes[] = {
      {"--d-model 100 --heads 3", "--d-model and --heads: expected --d-model a multiple of "
                                  "--heads (3), got 100"},
      {"--d-model 24 --heads 25", "--heads: expected a value in [1, 24] (--d-model), got 25"},
      {"--d-model 20000 --heads 4", "--d-model: expected a value in [1, 16384], got 20000"},
      {"--shape tiny --kv-heads 3", "--kv-heads: expected a divisor of the heads (4), got 3"},
      {"--shape minilm --rotary-layout halves --rotary-dim 34",
       "--rotary-dim: expected 0 (all of head_dim) or an even count in [2, 32]"},
  };
  for (const auto& c : shapes) {
    const bool custom = std::string(c.args).find("--d-model") != std::string::npos;
    const Result r = RunCli(std::string("bench ") + c.args + (custom ? " --seq 8" : ""));
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.find("Config."), std::string::npos) << c.args << "\n" << r.output;
  }
  Result r = RunCli("bench --d-model 24 --seq 8");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--d-model, --heads and --seq: expected all three"), std::string::npos)
      << r.output;
  r = RunCli("bench --shape bert --d-model 24 --heads 3 --seq 8");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--shape and --d-model/--heads"), std::string::npos) << r.output;
  for (const char* bad : {"--reference sometimes", "--format xml", "--min-time -1",
                          "--min-time nan", "--min-time -nan",
                          "--repetitions 100000000", "--precision int8 --kernel f32_6x4v"}) {
    r = RunCli(kSmallBench + "--seq 8 " + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.output.find(std::string(bad).substr(0, std::string(bad).find(' '))),
              std::string::npos)
        << bad << "\n"
        << r.output;
  }
}

// An empty value is refused, naming the option: CLI11 alone read it as no value, so that
// `--seq ''` measured the shape's own lengths and `--softcap ''` turned soft-capping off.
TEST(CliTest, BenchEmptyValuesAreRefused) {
  for (const std::string option : {"--seq", "--key-len", "--decode", "--threads", "--min-time",
                                   "--score-scale", "--softcap", "--rotary-base",
                                   "--rotary-scaling", "--qk-norm-eps"}) {
    const Result r = RunCli(kSmallBench + (option == "--seq" ? "" : "--seq 8 ") + option + " ''");
    EXPECT_NE(r.exit_code, 0) << option << "\n" << r.output;
    EXPECT_NE(r.output.find(option + ": expected "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("got an empty value"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("edgeattn 0"), std::string::npos) << option << "\n" << r.output;
  }
}

// An empty name in a list is refused, naming the option and the value: CLI11's delimiter dropped
// it, so that `--precision fp32,,int8` measured fp32 and int8 and `--shape tiny,` tiny alone.
// Names still come from lists and from the option given twice.
TEST(CliTest, BenchEmptyNamesInListsAreRefused) {
  for (const auto& [option, value] : std::vector<std::pair<std::string, std::string>>{
           {"--precision", "fp32,,int8"},
           {"--shape", "tiny,"},
           {"--kv-format", ",fp32"},
           {"--kernel", "f32_6x4v,,"},
           {"--precision", ""}}) {
    const Result r = RunCli("bench --threads 1 --min-time 0.01 " + option + " '" + value + "'");
    EXPECT_NE(r.exit_code, 0) << option << "\n" << r.output;
    EXPECT_NE(r.output.find(option + ": expected names separated by commas"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("got an empty name in '" + value + "'"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("edgeattn 0"), std::string::npos) << option << "\n" << r.output;
  }
  const std::vector<nlohmann::json> rows = SmallBenchRows(
      "--seq 8 --threads 1 --reference never --precision fp32 --precision int8 --kv-format "
      "fp32,bf16");
  std::vector<std::string> modes;
  for (const nlohmann::json& row : rows) {
    modes.push_back(row["mode"].get<std::string>() + "/" + row["kv_format"].get<std::string>());
  }
  EXPECT_EQ(modes, (std::vector<std::string>{"fp32/fp32", "fp32/bf16", "int8/fp32", "int8/bf16"}));
}

}  // namespace
}  // namespace edgeattn
