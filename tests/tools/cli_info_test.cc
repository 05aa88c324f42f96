// The edgeattn program's info command (the CPU, kernels and pools it reports; a checkpoint's
// layers), --help, --version, and output lost on the way to stdout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "edgeattn/cpu_dispatch.hpp"
#include "edgeattn/edgeattn.hpp"
#include "tests/golden_cases.h"
#include "tests/scratch_dir.h"
#include "tests/test_support.h"
#include "tests/tools/cli_runner.h"

namespace edgeattn {
namespace {

using cli_test::Result;
using cli_test::RunCli;

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
  // The hint names the first layer listed.
  EXPECT_NE(r.output.find("load one with: edgeattn run --weights " + qwen.Path(".safetensors") +
                          " --prefix 'model.layers.0.self_attn.' --heads N"),
            std::string::npos)
      << r.output;
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
  // An int8 file loads without --prefix or --heads: no hint asks for them.
  EXPECT_EQ(r.output.find("load one with"), std::string::npos) << r.output;
  r = RunCli("info --weights " + qwen.Path("_query.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("safetensors"), std::string::npos) << r.output;
}

// Output that does not reach stdout (a full disk) fails the command: rows lost with exit status
// 0 would read as written.
TEST(CliTest, LostStdoutFailsTheCommand) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  for (const char* args : {"info", "bench --d-model 24 --heads 3 --seq 8 --threads 1 --precision "
                                   "fp32 --repetitions 1 --warmup 0 --reference never --json"}) {
    const Result r = RunCli(args, "2>&1 >/dev/full");
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.output.find("edgeattn: error: writing to stdout failed"), std::string::npos)
        << args << ": " << r.output;
  }
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
       {std::pair<const char*, const char*>{"avx512_fp16", "avx512fp16"},
        {"amx_tile", "amx-tile"},
        {"amx_int8", "amx-int8"},
        {"amx_bf16", "amx-bf16"}}) {
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
  EXPECT_NE(r.output.find(std::string("auto kv cache:       ") + KvFormatName(choice.cache_format) +
                          " (" + AttentionKernels(choice.cache_format).front() + ")"),
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
