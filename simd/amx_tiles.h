// The AMX tile configuration (the 64 bytes ldtilecfg reads, palette 1) as the AMX kernels
// (gemm_i8_amx-inl.h, gemm_bf16_amx-inl.h) build it. Loading it and
// the tile instructions stay in each kernel's own functions, which carry the AMX target
// attributes; this header needs none.
#ifndef EDGEATTN_SIMD_AMX_TILES_H_
#define EDGEATTN_SIMD_AMX_TILES_H_

#include <stddef.h>
#include <stdint.h>

namespace edgeattn {
namespace simd {

struct alignas(64) AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};

  // Tile t holds `rows` rows of `bytes` bytes (at most 16 x 64); rows 0: unused.
  AmxTileConfig& Tile(size_t t, size_t tile_rows, size_t bytes) {
    rows[t] = static_cast<uint8_t>(tile_rows);
    bytes_per_row[t] = static_cast<uint16_t>(tile_rows == 0 ? 0 : bytes);
    return *this;
  }
};
static_assert(sizeof(AmxTileConfig) == 64, "ldtilecfg reads 64 bytes");

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_AMX_TILES_H_
