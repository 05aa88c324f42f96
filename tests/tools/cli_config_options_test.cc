// The CLI's checks of the options that set Config fields (tools/cli/config_options.h) accept
// exactly the values the library accepts, so that checking early, to name the option, never
// refuses what the library would run or lets through what it would refuse.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "tools/cli/config_options.h"

namespace edgeattn {
namespace {

// Whether the library builds an operator of this configuration (zero weights of its shape).
bool LibraryAccepts(const Config& config) {
  const std::size_t d = config.d_model;
  const std::size_t head_dim = config.num_heads == 0 ? 0 : d / config.num_heads;
  const std::size_t kv_heads = config.num_kv_heads != 0 ? config.num_kv_heads : config.num_heads;
  // A configuration the library refuses is refused before its weights are looked at: a d_model
  // above the limit gets none.
  const bool small = d <= kMaxModelDim;
  const std::vector<float> wq(small ? d * d : 0), wkv(small ? kv_heads * head_dim * d : 0);
  WeightsView w;
  w.q_proj_weight = {wq.data(), wq.size()};
  w.out_proj_weight = {wq.data(), wq.size()};
  w.k_proj_weight = w.v_proj_weight = {wkv.data(), wkv.size()};
  try {
    MultiheadAttention(config, w);
    return true;
  } catch (const Error&) {
    return false;
  }
}

template <class Check>
bool CliAccepts(Check check) {
  try {
    check();
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(CliConfigOptionsTest, HeadsAgreeWithTheLibrary) {
  for (std::size_t d : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{6},
                        std::size_t{12}, std::size_t{16}, kMaxModelDim + 1}) {
    for (std::size_t heads = 0; heads <= 13; ++heads) {
      for (std::size_t kv = 0; kv <= heads + 1; ++kv) {
        Config config;
        config.d_model = d;
        config.num_heads = heads;
        config.num_kv_heads = kv;
        EXPECT_EQ(CliAccepts([&] { cli::CheckHeadOptions(d, heads, kv); }), LibraryAccepts(config))
            << "d_model " << d << ", heads " << heads << ", kv heads " << kv;
      }
    }
  }
}

TEST(CliConfigOptionsTest, Int8BlockAgreesWithTheLibrary) {
  std::vector<std::size_t> blocks;
  for (std::size_t b = 0; b <= 40; ++b) blocks.push_back(b);
  for (std::size_t b = kMaxInt8Block - 5; b <= kMaxInt8Block + 5; ++b) blocks.push_back(b);
  for (std::size_t block : blocks) {
    Config config;
    config.d_model = 8;
    config.num_heads = 2;
    config.precision = Precision::kInt8;
    config.int8_block = block;
    EXPECT_EQ(CliAccepts([&] { cli::CheckInt8BlockOption(block); }), LibraryAccepts(config))
        << "int8 block " << block;
  }
}

TEST(CliConfigOptionsTest, RotaryDimAgreesWithTheLibrary) {
  for (RotaryLayout layout : {RotaryLayout::kHalves, RotaryLayout::kInterleaved}) {
    for (std::size_t heads : {1, 2, 4, 8}) {
      for (std::size_t dims = 0; dims <= 20; ++dims) {
        Config config;
        config.d_model = 16;
        config.num_heads = heads;
        config.math.rotary = layout;
        config.math.rotary_dim = dims;
        EXPECT_EQ(CliAccepts([&] { cli::CheckRotaryDimOption(config.math, 16 / heads); }),
                  LibraryAccepts(config))
            << "heads " << heads << ", rotary dim " << dims;
      }
    }
  }
}

}  // namespace
}  // namespace edgeattn
