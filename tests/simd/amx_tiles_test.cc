// LoadTileConfig loads the whole configuration it is given: the tile shapes read back with
// sttilecfg match, for configurations built just before the load, as the AMX kernels build
// theirs. (Through g++ 12's _tile_loadconfig, whose asm operand is 8 bytes, -O3, as this test is
// built, drops the stores of the configuration but its first 16 bytes: ldtilecfg then reads
// stale stack bytes, and this test dies of the fault.)
#include "simd/amx_tiles.h"

#include <gtest/gtest.h>

#include <cstddef>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "simd/cpu_features.h"

namespace edgeattn {
namespace simd {
namespace {

// A shape past palette 1's limits (8 tiles of up to 16 rows x 64 bytes, rows of whole 4-byte
// words) stops a debug build where the configuration is built, before ldtilecfg faults in a
// kernel; release builds only run the statements.
TEST(AmxTilesDeathTest, TileRefusesShapesPastThePalette) {
  AmxTileConfig config;
  EXPECT_DEBUG_DEATH(config.Tile(8, 16, 64), "");
  EXPECT_DEBUG_DEATH(config.Tile(0, 17, 64), "");
  EXPECT_DEBUG_DEATH(config.Tile(0, 16, 68), "");
  EXPECT_DEBUG_DEATH(config.Tile(0, 16, 6), "");
  config.Tile(7, 16, 64).Tile(0, 0, 0);  // the limits themselves, and an unused tile
  EXPECT_EQ(config.rows[7], 16);
  EXPECT_EQ(config.bytes_per_row[7], 64);
  EXPECT_EQ(config.rows[0], 0);
}

}  // namespace
}  // namespace simd
}  // namespace edgeattn

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
namespace edgeattn {
namespace simd {
namespace {

// The configuration in use, read back; operand all 64 bytes, as LoadTileConfig's.
void StoreTileConfig(AmxTileConfig& config) { __asm__ volatile("sttilecfg %0" : "=m"(config)); }

// Loads tiles 0-7 as `rows` rows x `bytes` bytes and returns how many of them read back
// otherwise. As in the kernels, the configuration is built in a function with the AMX target
// attributes, where the load inlines.
__attribute__((target("amx-tile"), noinline)) int LoadAndCountMismatches(std::size_t rows,
                                                                         std::size_t bytes) {
  AmxTileConfig config;
  for (std::size_t t = 0; t < 8; ++t) config.Tile(t, rows, bytes);
  LoadTileConfig(config);
  AmxTileConfig loaded;
  StoreTileConfig(loaded);
  _tile_release();
  int mismatches = 0;
  for (std::size_t t = 0; t < 8; ++t) {
    mismatches += loaded.rows[t] != rows || loaded.bytes_per_row[t] != bytes;
  }
  return mismatches;
}

TEST(AmxTilesTest, LoadTileConfigLoadsEveryTile) {
  if (!CpuRunsAmxInt8() && !CpuRunsAmxBf16()) {
    GTEST_SKIP() << "this CPU or process has no AMX tiles";
  }
  for (std::size_t rows : {1, 3, 16}) {
    for (std::size_t bytes : {4, 36, 64}) {
      EXPECT_EQ(LoadAndCountMismatches(rows, bytes), 0)
          << "tiles of 8, configured as " << rows << " rows x " << bytes << " bytes";
    }
  }
}

}  // namespace
}  // namespace simd
}  // namespace edgeattn
#endif
