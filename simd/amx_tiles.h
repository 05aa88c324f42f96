// The AMX tile configuration (the 64 bytes ldtilecfg reads, palette 1) as the AMX kernels
// (gemm_i8_amx-inl.h, gemm_bf16_amx-inl.h, attention_bf16dot-inl.h) build it, and its load. The
// tile instructions stay in each kernel's own functions, which carry the AMX target attributes;
// this header needs none.
#ifndef EDGEATTN_SIMD_AMX_TILES_H_
#define EDGEATTN_SIMD_AMX_TILES_H_

#include <assert.h>
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

  // Tile t holds `rows` rows of `bytes` bytes (at most 16 x 64); rows 0: unused. Palette 1 has
  // 8 tiles; ldtilecfg faults on a shape past its limits, so debug builds check them here.
  AmxTileConfig& Tile(size_t t, size_t tile_rows, size_t bytes) {
    assert(t < 8 && tile_rows <= 16 && bytes <= 64 && bytes % 4 == 0);
    rows[t] = static_cast<uint8_t>(tile_rows);
    bytes_per_row[t] = static_cast<uint16_t>(tile_rows == 0 ? 0 : bytes);
    return *this;
  }
};
static_assert(sizeof(AmxTileConfig) == 64, "ldtilecfg reads 64 bytes");

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// ldtilecfg of `config`. g++'s _tile_loadconfig (12 at least) hands its asm the configuration's
// first 8 bytes as the operand, so at -O3 the compiler may drop the stores to the rest of a
// configuration built just before (a kernel then runs on tiles of the wrong shape, or faults):
// this asm's operand is all 64 bytes. The assembler takes ldtilecfg without a target attribute.
inline void LoadTileConfig(const AmxTileConfig& config) {
  __asm__ volatile("ldtilecfg %0" : : "m"(config));
}

// tileloadd, with the memory it reads made visible to the compiler. g++'s _tile_loadd (12 at
// least) gives its asm only the address and stride, not the rows or a "memory" clobber, so
// stores to a buffer that nothing but tile loads reads (the rounded activations on the stack)
// could be moved past the load or dropped. A macro: the tile number must be an immediate.
#define EDGEATTN_TILE_LOADD(tile, base, stride) \
  do {                                          \
    __asm__ volatile("" : : : "memory");        \
    _tile_loadd(tile, base, stride);            \
  } while (0)
#endif

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_AMX_TILES_H_
