// The operator with every projection and attention kernel this CPU runs, forced by name: the
// same outputs bit for bit (every kernel of a precision performs the same arithmetic per
// element), int8 files that do not depend on the kernel that wrote or reads them, and named
// errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "edgeattn/cpu_dispatch.hpp"
#include "edgeattn/edgeattn.hpp"
#include "tests/expect_error.h"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::ExpectError;
using testing_support::GqaModel;

std::vector<float> ForwardOnTwoThreads(const MultiheadAttention& mha, const std::vector<float>& x,
                                       std::size_t seq) {
  const std::size_t d = mha.config().d_model;
  std::vector<float> y(x.size());
  Context context(2);
  mha.Forward(context, {x.data(), 1, seq, d}, {y.data(), 1, seq, d});
  return y;
}

TEST(ProjectionKernelTest, EveryKernelGivesTheSameOutputs) {
  // d 200: k = 200 is not a multiple of the int8 block (64), 200 rows are not whole panels.
  const GqaModel model(200, 5, 5, 31);
  const std::vector<float> x = testing_support::RandomNormal(37 * 200, 32);
  for (Precision precision : {Precision::kFp32, Precision::kInt8}) {
    const std::vector<std::string> kernels = ProjectionKernels(precision);
    ASSERT_FALSE(kernels.empty());
    const MultiheadAttention best(model.with(precision), model.view());
    EXPECT_EQ(best.projection_kernel(), kernels.front());
    const std::vector<float> want = ForwardOnTwoThreads(best, x, 37);
    for (const std::string& name : kernels) {
      Config config = model.with(precision);
      config.projection_kernel = name;
      const MultiheadAttention forced(config, model.view());
      EXPECT_EQ(forced.projection_kernel(), name);
      EXPECT_EQ(ForwardOnTwoThreads(forced, x, 37), want) << name;
    }
  }
}

TEST(ProjectionKernelTest, Int8PrefersADotProductKernel) {
  // The portable kernel runs everywhere and comes last; a dot-product or tile kernel, where the
  // CPU has one (tests/simd/gemm_i8_test.cc checks which), comes first and is the one chosen.
  const std::vector<std::string> kernels = ProjectionKernels(Precision::kInt8);
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.back(), "qd8_qc8w_i16_1x1v");
  const GqaModel model(32, 2, 2, 38);
  const MultiheadAttention best(model.with(Precision::kInt8), model.view());
  EXPECT_EQ(best.projection_kernel(), kernels.front());
  for (const std::string& name : kernels) {
    const bool dot_product =
        name.find("vnni") != std::string::npos || name.find("dot") != std::string::npos ||
        name.find("amx") != std::string::npos || name.find("maddubs") != std::string::npos ||
        name.find("mlal") != std::string::npos;
    EXPECT_EQ(dot_product, name != "qd8_qc8w_i16_1x1v") << name;
  }
}

TEST(ProjectionKernelTest, Int8FilesDoNotDependOnTheKernel) {
  const GqaModel model(64, 4, 2, 33);
  const std::vector<float> x = testing_support::RandomNormal(9 * 64, 34);
  const std::string path = ::testing::TempDir() + "kernel_independent.safetensors";
  for (const std::string& writer : ProjectionKernels(Precision::kInt8)) {
    Config config = model.with(Precision::kInt8);
    config.projection_kernel = writer;
    const MultiheadAttention saved(config, model.view());
    saved.SaveInt8(path);
    for (const std::string& reader : ProjectionKernels(Precision::kInt8)) {
      LoadOptions options;
      options.projection_kernel = reader;
      const MultiheadAttention loaded = MultiheadAttention::Load(path, options);
      EXPECT_EQ(loaded.projection_kernel(), reader);
      EXPECT_EQ(ForwardOnTwoThreads(loaded, x, 9), ForwardOnTwoThreads(saved, x, 9))
          << writer << " -> " << reader;
    }
  }
  std::remove(path.c_str());
}

TEST(AttentionKernelTest, EveryFp32KernelGivesTheSameOutputs) {
  const GqaModel model(96, 3, 3, 36);
  const std::vector<float> x = testing_support::RandomNormal(70 * 96, 37);
  const MultiheadAttention best(model.config, model.view());
  const std::vector<std::string> kernels = AttentionKernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(best.attention_kernel(), kernels.front());
  for (const std::string& name : kernels) {
    Config config = model.config;
    config.attention_kernel = name;
    const MultiheadAttention forced(config, model.view());
    EXPECT_EQ(forced.attention_kernel(), name);
    EXPECT_EQ(ForwardOnTwoThreads(forced, x, 70), ForwardOnTwoThreads(best, x, 70)) << name;
    KvCache cache(forced, 70);  // the cache takes the operator's kernel's layout
    std::vector<float> y(x.size());
    Context context(1);
    forced.Decode(context, {x.data(), 1, 70, 96}, cache, {y.data(), 1, 70, 96});
  }
  Config config = model.config;
  config.attention_kernel = "f32kv_typo";
  ExpectError([&] { MultiheadAttention(config, model.view()); },
              {"Config.attention_kernel", kernels.front().c_str(), "got 'f32kv_typo'"});
}

TEST(ProjectionKernelTest, UnknownKernelNamesTheAvailableOnes) {
  const GqaModel model(16, 2, 2, 35);
  Config config = model.with(Precision::kInt8);
  config.projection_kernel = "f32_6x4v_typo";
  const std::string first = ProjectionKernels(Precision::kInt8).front();
  ExpectError([&] { MultiheadAttention(config, model.view()); },
              {"Config.projection_kernel", "int8 kernels this CPU runs", first.c_str(),
               "got 'f32_6x4v_typo'"});
  // An fp32 kernel is not an int8 one.
  config.projection_kernel = ProjectionKernels(Precision::kFp32).front();
  ExpectError([&] { MultiheadAttention(config, model.view()); }, {"Config.projection_kernel"});
}

// What `edgeattn info` reports of the build and this CPU: the supported targets are compiled
// ones in the compiled order (best first), dispatch runs the best of them, and the oneTBB
// version names both the headers' and the loaded library's.
TEST(CpuDispatchTest, TargetsAndTbbVersion) {
  const std::vector<std::string> compiled = CompiledTargets(), supported = SupportedTargets();
  ASSERT_FALSE(supported.empty());
  std::size_t next = 0;
  for (const std::string& target : supported) {
    while (next < compiled.size() && compiled[next] != target) ++next;
    ASSERT_LT(next, compiled.size()) << target << ": not compiled, or out of order";
    ++next;
  }
  EXPECT_EQ(ChosenTarget(), supported.front());
  if (EDGEATTN_WITH_TBB) {
    EXPECT_NE(TbbVersion().find(" (runtime "), std::string::npos) << TbbVersion();
  } else {
    EXPECT_EQ(TbbVersion(), "");
  }
}

// The auto rule (docs/precision.md, "auto") read off the registry: bf16 projections only where
// the best bf16 kernel computes in bf16 (f32_bf16w_<instructions>_<tile>, not "widen"), bf16
// keys and values only where the best bf16 attention kernel does (bf16kv_<arithmetic>_<tile>,
// not "f32"), and int8 decode caches on every CPU.
TEST(AutoChoiceTest, FollowsTheBestKernelOfEachFormat) {
  const AutoChoice choice = AutoChoiceForThisCpu();
  const std::string projection = ProjectionKernels(Precision::kBf16).front();
  const std::string attention = AttentionKernels(KvFormat::kBf16).front();
  EXPECT_EQ(choice.precision,
            projection.rfind("f32_bf16w_widen_", 0) == 0 ? Precision::kFp32 : Precision::kBf16)
      << projection;
  EXPECT_EQ(choice.kv_format,
            attention.rfind("bf16kv_f32_", 0) == 0 ? KvFormat::kFp32 : KvFormat::kBf16)
      << attention;
  EXPECT_EQ(choice.cache_format, KvFormat::kInt8);
}

// auto resolves in either field alone, the other kept as given.
TEST(AutoChoiceTest, EachFieldResolvesOnItsOwn) {
  const AutoChoice choice = AutoChoiceForThisCpu();
  const GqaModel model(32, 4, 2, 39);
  Config config = model.config;
  config.precision = Precision::kAuto;
  config.kv_format = KvFormat::kInt8;
  const MultiheadAttention auto_precision(config, model.view());
  EXPECT_EQ(auto_precision.config().precision, choice.precision);
  EXPECT_EQ(auto_precision.config().kv_format, KvFormat::kInt8);
  config.precision = Precision::kInt8;
  config.kv_format = KvFormat::kAuto;
  const MultiheadAttention auto_kv(config, model.view());
  EXPECT_EQ(auto_kv.config().precision, Precision::kInt8);
  EXPECT_EQ(auto_kv.config().kv_format, choice.kv_format);
}

}  // namespace
}  // namespace edgeattn
