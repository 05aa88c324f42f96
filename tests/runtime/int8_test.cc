// The int8 operator: accuracy against the fp32 path on the contract shapes and on data with
// outlier channels, int8 weight files, bad configurations.
#include <cmath>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/benchmark_case.h"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::Cosine;

std::vector<float> Forward1(const MultiheadAttention& mha, const std::vector<float>& x,
                       std::size_t seq) {
  const std::size_t d = mha.config().d_model;
  std::vector<float> y(x.size());
  Context context(1);
  mha.Forward(context, {x.data(), 1, seq, d}, {y.data(), 1, seq, d});
  return y;
}

MultiheadAttention Int8(const RandomModel& model, std::size_t block = kDefaultInt8Block) {
  Config config = model.config;
  config.precision = Precision::kInt8;
  config.int8_block = block;
  return MultiheadAttention(config, model.view());
}

// Trained transformers have a few input channels far larger than the rest and a few output
// channels with larger weights: here 6 input channels x20 and 6 rows of every weight x8.
void AddOutliers(RandomModel& model, std::vector<float>& x, std::size_t seq) {
  const std::size_t d = model.config.d_model;
  for (std::size_t r = 0; r < seq; ++r) {
    for (std::size_t c : {3, 50, 100, 150, 200, 250}) x[r * d + c] *= 20.0f;
  }
  for (std::size_t row : {1, 40, 80, 120, 160, 200}) {
    for (std::size_t c = 0; c < d; ++c) {
      for (std::size_t m = 0; m < 3; ++m) model.in_proj_weight[(m * d + row) * d + c] *= 8.0f;
      model.out_proj_weight[row * d + c] *= 8.0f;
    }
  }
}

TEST(Int8Test, ContractShapesCloseToFp32) {
  for (const ShapeSpec& s : ContractShapes()) {
    const RandomModel model(s.d_model, s.heads);
    const std::vector<float> x = RandomActivations(s.seq * s.d_model);
    const std::vector<float> fp32 = Forward1(MultiheadAttention(model.config, model.view()), x, s.seq);
    const std::vector<float> int8 = Forward1(Int8(model), x, s.seq);
    const double cosine = Cosine(int8, fp32);
    std::printf("%-8s int8 vs fp32: cosine %.6f, max abs err %.3g\n", s.name.c_str(), cosine,
                testing_support::MaxAbsDiff(int8, fp32));
    EXPECT_GE(cosine, s.name == "bert" ? 0.9998 : 0.9995) << s.name;
  }
}

TEST(Int8Test, OutlierChannelsOnBert) {
  const ShapeSpec& s = ContractShapes()[2];
  RandomModel model(s.d_model, s.heads);
  std::vector<float> x = RandomActivations(s.seq * s.d_model);
  AddOutliers(model, x, s.seq);
  const std::vector<float> fp32 = Forward1(MultiheadAttention(model.config, model.view()), x, s.seq);
  const double cosine = Cosine(Forward1(Int8(model), x, s.seq), fp32);
  std::printf("bert with outliers, int8 vs fp32: cosine %.6f\n", cosine);
  EXPECT_GE(cosine, 0.999);
}

TEST(Int8Test, OddShapesAndBlocks) {
  struct Case {
    std::size_t d, h, seq, block;
  };
  for (const Case& c : {Case{8, 2, 5, 4}, Case{12, 3, 17, 8}, Case{36, 6, 9, 12},
                        Case{100, 5, 33, 64}, Case{130, 13, 7, 32}}) {
    const RandomModel model(c.d, c.h, 3);
    const std::vector<float> x = RandomActivations(c.seq * c.d, 4);
    const std::vector<float> fp32 = Forward1(MultiheadAttention(model.config, model.view()), x, c.seq);
    EXPECT_GE(Cosine(Forward1(Int8(model, c.block), x, c.seq), fp32), 0.999) << c.d << " " << c.block;
  }
}

TEST(Int8Test, SavedWeightsLoadBitForBit) {
  const RandomModel model(48, 4, 11);
  const MultiheadAttention mha = Int8(model, 16);
  const std::string path = ::testing::TempDir() + "int8.safetensors";
  mha.SaveInt8(path);
  const SafetensorsFile file = SafetensorsFile::Read(path);
  EXPECT_EQ(file.metadata().at("format"), "edgeattn-int8-v1");
  EXPECT_EQ(file.metadata().at("num_heads"), "4");
  EXPECT_EQ(file.metadata().at("int8_block"), "16");
  EXPECT_EQ(file.Info("in_proj_weight.int8").dtype, DType::kI8);
  EXPECT_EQ(file.Info("out_proj.weight.scale").shape, std::vector<std::size_t>{48});
  const MultiheadAttention loaded = MultiheadAttention::Load(path, 0);
  EXPECT_EQ(loaded.config().precision, Precision::kInt8);
  EXPECT_EQ(loaded.config().int8_block, 16u);
  const std::vector<float> x = RandomActivations(10 * 48, 12);
  EXPECT_EQ(Forward1(loaded, x, 10), Forward1(mha, x, 10));
  EXPECT_THROW(MultiheadAttention::Load(path, 3), Error);  // recorded for 4 heads
  EXPECT_THROW(MultiheadAttention(model.config, model.view()).SaveInt8(path), Error);  // fp32
  std::remove(path.c_str());
}

// Grouped-query operators save their narrower key/value rows and num_kv_heads, and load back
// bit for bit; a file holding only some of the q/k/v biases gets zeros for the others.
TEST(Int8Test, GroupedQueryWeightsSaveAndLoad) {
  testing_support::GqaModel model(48, 6, 2, 21);
  model.bk.clear();  // no key bias: saved as zeros beside the query and value biases
  WeightsView view = model.view();
  view.k_proj_bias = {};
  Config config = model.config;
  config.precision = Precision::kInt8;
  const MultiheadAttention mha(config, view);
  const std::string path = ::testing::TempDir() + "gqa_int8.safetensors";
  mha.SaveInt8(path);
  const SafetensorsFile file = SafetensorsFile::Read(path);
  EXPECT_EQ(file.metadata().at("num_kv_heads"), "2");
  EXPECT_EQ(file.Info("in_proj_weight.int8").shape, (std::vector<std::size_t>{48 + 2 * 16, 48}));
  const MultiheadAttention loaded = MultiheadAttention::Load(path, 0);
  EXPECT_EQ(loaded.config().num_kv_heads, 2u);
  const std::vector<float> x = RandomActivations(7 * 48, 5);
  EXPECT_EQ(Forward1(loaded, x, 7), Forward1(mha, x, 7));
  std::remove(path.c_str());
}

TEST(Int8Test, BadBlockSizes) {
  const RandomModel model(16, 2, 1);
  for (std::size_t block : {0, 3, 6, 65540}) {
    Config config = model.config;
    config.precision = Precision::kInt8;
    config.int8_block = block;
    try {
      MultiheadAttention(config, model.view());
      ADD_FAILURE() << block;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Config.int8_block"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace edgeattn
