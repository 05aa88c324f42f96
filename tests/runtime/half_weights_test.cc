// bf16 and fp16 projection weights: accuracy against fp32 on the contract shapes and with
// outlier channels, every half kernel forced by name, F16/BF16 safetensors files packed as they
// are, mixed-dtype files, values fp16 cannot hold, thread counts, weight memory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/benchmark_case.h"
#include "runtime/weight_loading.h"
#include "simd/half_float.h"
#include "tests/expect_error.h"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::AddOutliers;
using testing_support::Cosine;
using testing_support::ExpectError;
using testing_support::MaxAbsDiff;
using testing_support::SelfAttention;

constexpr Precision kHalves[] = {Precision::kBf16, Precision::kFp16};

MultiheadAttention Build(const RandomModel& model, Precision precision,
                         const std::string& kernel = "") {
  Config config = model.config;
  config.precision = precision;
  config.projection_kernel = kernel;
  return MultiheadAttention(config, model.view());
}

// Rounds every weight as `precision` stores it (biases stay float, as the operator keeps them).
RandomModel Rounded(RandomModel model, Precision precision) {
  for (std::vector<float>* w : {&model.in_proj_weight, &model.out_proj_weight}) {
    for (float& x : *w) {
      x = precision == Precision::kBf16 ? simd::F32FromBf16(simd::Bf16FromF32(x))
                                        : simd::F32FromF16(simd::F16FromF32(x));
    }
  }
  return model;
}

// The bounds for half formats: cosine >= 0.9999 on normal data, >= 0.999 with outliers.
TEST(HalfWeightsTest, ContractShapesCloseToFp32WithEveryKernel) {
  for (const ShapeSpec& s : ContractShapes()) {
    const RandomModel model(s.d_model, s.heads);
    const std::vector<float> x = RandomActivations(s.seq * s.d_model);
    const std::vector<float> fp32 = SelfAttention(Build(model, Precision::kFp32), x, s.seq);
    for (Precision precision : kHalves) {
      for (const std::string& kernel : ProjectionKernels(precision)) {
        const std::vector<float> half = SelfAttention(Build(model, precision, kernel), x, s.seq);
        const double cosine = Cosine(half, fp32);
        std::printf("%-8s %-24s vs fp32: cosine %.7f, max abs err %.3g\n", s.name.c_str(),
                    kernel.c_str(), cosine, MaxAbsDiff(half, fp32));
        EXPECT_GE(cosine, 0.9999) << s.name << " " << kernel;
      }
    }
  }
}

TEST(HalfWeightsTest, OutlierChannelsOnBert) {
  const ShapeSpec& s = ContractShapes()[2];
  RandomModel model(s.d_model, s.heads);
  std::vector<float> x = RandomActivations(s.seq * s.d_model);
  AddOutliers(model, x, s.seq);
  const std::vector<float> fp32 = SelfAttention(Build(model, Precision::kFp32), x, s.seq);
  for (Precision precision : kHalves) {
    for (const std::string& kernel : ProjectionKernels(precision)) {
      const std::vector<float> half = SelfAttention(Build(model, precision, kernel), x, s.seq);
      const double cosine = Cosine(half, fp32);
      std::printf("bert with outliers, %-24s vs fp32: cosine %.7f, max abs err %.3g\n",
                  kernel.c_str(), cosine, MaxAbsDiff(half, fp32));
      EXPECT_GE(cosine, 0.999) << kernel;
    }
  }
}

// The widening kernels compute what fp32 computes on the rounded weights, bit for bit.
TEST(HalfWeightsTest, WideningKernelsEqualFp32OnRoundedWeights) {
  const RandomModel model(96, 6, 3);
  const std::vector<float> x = RandomActivations(37 * 96, 4);
  for (Precision precision : kHalves) {
    const std::vector<float> fp32 =
        SelfAttention(Build(Rounded(model, precision), Precision::kFp32), x, 37);
    for (const std::string& kernel : ProjectionKernels(precision)) {
      if (kernel.find("_widen_") == std::string::npos) continue;
      EXPECT_EQ(SelfAttention(Build(model, precision, kernel), x, 37), fp32) << kernel;
    }
  }
}

TEST(HalfWeightsTest, AnyThreadCountGivesTheSameBits) {
  const RandomModel model(128, 4, 5);
  const std::vector<float> x = RandomActivations(70 * 128, 6);
  for (Precision precision : kHalves) {
    for (const std::string& kernel : ProjectionKernels(precision)) {
      const MultiheadAttention mha = Build(model, precision, kernel);
      EXPECT_EQ(SelfAttention(mha, x, 70, 1), SelfAttention(mha, x, 70, 2)) << kernel;
    }
  }
}

TEST(HalfWeightsTest, WeightsTakeHalfTheBytes) {
  const RandomModel model(768, 12);
  const std::size_t fp32 = Build(model, Precision::kFp32).weight_bytes();
  const std::size_t weights = 4 * 768 * 768, biases = 4 * 768;
  EXPECT_EQ(fp32, (weights + biases) * sizeof(float));
  for (Precision precision : kHalves) {
    for (const std::string& kernel : ProjectionKernels(precision)) {
      EXPECT_EQ(Build(model, precision, kernel).weight_bytes(),
                weights * sizeof(std::uint16_t) + biases * sizeof(float))
          << kernel;
    }
  }
}

// A safetensors layer whose weights are `dtype` (F32, F16 or BF16) and biases F32.
std::vector<std::uint8_t> LayerFile(const RandomModel& model, DType weight_dtype,
                                    DType in_proj_dtype) {
  const std::size_t d = model.config.d_model;
  SafetensorsWriter writer;
  const auto add = [&](const char* name, DType dtype, const std::vector<float>& v,
                       std::vector<std::size_t> shape) {
    if (dtype == DType::kF32) {
      writer.Add(name, dtype, shape, v.data());
      return;
    }
    std::vector<std::uint16_t> half(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      half[i] = dtype == DType::kBF16 ? simd::Bf16FromF32(v[i]) : simd::F16FromF32(v[i]);
    }
    writer.Add(name, dtype, shape, half.data());
  };
  add("in_proj_weight", in_proj_dtype, model.in_proj_weight, {3 * d, d});
  add("in_proj_bias", DType::kF32, model.in_proj_bias, {3 * d});
  add("out_proj.weight", weight_dtype, model.out_proj_weight, {d, d});
  add("out_proj.bias", DType::kF32, model.out_proj_bias, {d});
  return writer.Serialize();
}

LoadOptions Options(std::size_t heads, Precision precision) {
  LoadOptions options;
  options.num_heads = heads;
  options.precision = precision;
  return options;
}

// F16 / BF16 weights load as they are (the same operator as one built from their values), a
// file of another dtype or of mixed dtypes is rounded once, and fp32 widens them.
TEST(HalfWeightsTest, HalfFilesLoadAsTheyAre) {
  const RandomModel model(64, 4, 8);
  const std::vector<float> x = RandomActivations(9 * 64, 9);
  for (Precision precision : kHalves) {
    const DType dtype = precision == Precision::kBf16 ? DType::kBF16 : DType::kF16;
    const DType other = precision == Precision::kBf16 ? DType::kF16 : DType::kBF16;
    const RandomModel rounded = Rounded(model, precision);
    const std::vector<float> want = SelfAttention(Build(rounded, precision), x, 9);
    const std::vector<std::uint8_t> same = LayerFile(model, dtype, dtype);
    const SafetensorsFile view = SafetensorsFile::View(same.data(), same.size(), "memory");
    const LayerWeights layer = FindLayerWeights(view, Options(4, precision));
    EXPECT_TRUE(layer.half);
    EXPECT_TRUE(layer.copies.empty()) << "no float copy of a half file";
    for (const std::vector<std::uint8_t>& file :
         {LayerFile(model, dtype, dtype), LayerFile(rounded, DType::kF32, DType::kF32),
          LayerFile(rounded, DType::kF32, dtype)}) {
      const MultiheadAttention mha =
          MultiheadAttention::LoadFromMemory(file.data(), file.size(), Options(4, precision));
      EXPECT_EQ(mha.config().precision, precision);
      EXPECT_EQ(SelfAttention(mha, x, 9), want) << PrecisionName(precision);
    }
    // The other 16-bit format goes through float: rounded twice, still close.
    const std::vector<std::uint8_t> foreign = LayerFile(model, other, other);
    const MultiheadAttention converted =
        MultiheadAttention::LoadFromMemory(foreign.data(), foreign.size(), Options(4, precision));
    EXPECT_GE(Cosine(SelfAttention(converted, x, 9), want), 0.999);
    const std::vector<std::uint8_t> half = LayerFile(model, dtype, dtype);
    const MultiheadAttention widened =
        MultiheadAttention::LoadFromMemory(half.data(), half.size(), Options(4, Precision::kFp32));
    EXPECT_EQ(SelfAttention(widened, x, 9), SelfAttention(Build(rounded, Precision::kFp32), x, 9));
  }
}

TEST(HalfWeightsTest, ValuesBeyondFp16AreNamedErrors) {
  RandomModel model(32, 4, 10);
  model.out_proj_weight[5] = 70000.0f;
  ExpectError([&] { Build(model, Precision::kFp16); }, {"out_proj.weight", "65504", "element 5"});
  EXPECT_NO_THROW(Build(model, Precision::kBf16));
  model.out_proj_weight[5] = 65519.0f;  // rounds to 65504
  EXPECT_NO_THROW(Build(model, Precision::kFp16));
  ExpectError([&] { Build(model, Precision::kFp16, "f32_6x4v"); },
              {"projection_kernel", "fp16", "f32_6x4v"});
}

// NaN and infinite weights are refused in every precision, naming the first, as a corrupt
// checkpoint's should be (they would make every output row they reach NaN); so is the last of
// a 64 x 64 matrix, in the check's fourth block of 1024.
TEST(HalfWeightsTest, NonFiniteWeightsAreRefused) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                    -std::numeric_limits<float>::infinity()}) {
    for (std::size_t at : {std::size_t{3 * 64 + 7}, std::size_t{64 * 64 - 1}}) {
      RandomModel model(64, 4, 12);
      model.out_proj_weight[at] = bad;
      for (Precision precision : {Precision::kFp32, Precision::kInt8, Precision::kBf16,
                                  Precision::kFp16}) {
        const std::string message = "out_proj.weight[" + std::to_string(at) +
                                    "]: expected a finite value, got " +
                                    (bad != bad ? "NaN" : "-inf");
        ExpectError([&] { Build(model, precision); }, {message.c_str()});
      }
    }
  }
}

// A 16-bit file's weights, loaded as they are, are checked as the float path checks them: a NaN
// or infinite weight is refused naming the tensor and the value, as is a NaN float bias beside
// them.
TEST(HalfWeightsTest, NonFiniteHalfFileWeightsAreRefused) {
  for (Precision precision : kHalves) {
    const DType dtype = precision == Precision::kBf16 ? DType::kBF16 : DType::kF16;
    for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                      std::numeric_limits<float>::infinity()}) {
      RandomModel model(64, 4, 8);
      model.out_proj_weight[64 * 64 - 1] = bad;
      const std::vector<std::uint8_t> file = LayerFile(model, dtype, dtype);
      const std::string message = "'out_proj.weight'[4095]: expected a finite value, got " +
                                  std::string(bad != bad ? "NaN" : "inf");
      ExpectError(
          [&] {
            MultiheadAttention::LoadFromMemory(file.data(), file.size(), Options(4, precision));
          },
          {message.c_str()});
    }
    RandomModel model(64, 4, 8);
    model.in_proj_bias[70] = std::numeric_limits<float>::quiet_NaN();
    const std::vector<std::uint8_t> file = LayerFile(model, dtype, dtype);
    ExpectError(
        [&] {
          MultiheadAttention::LoadFromMemory(file.data(), file.size(), Options(4, precision));
        },
        {"in_proj_bias[70]: expected a finite value, got NaN"});
  }
}

}  // namespace
}  // namespace edgeattn
