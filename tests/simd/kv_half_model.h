// The bf16 / fp16 K/V layouts (simd/attention_kv.h, simd/attention_bf16dot.h) packed in plain
// scalar code, one element at a time with half_float.h's rounding: the model whose bytes every
// target's vector packing (simd/kv_half_rows-inl.h) must reproduce.
#ifndef EDGEATTN_TESTS_SIMD_KV_HALF_MODEL_H_
#define EDGEATTN_TESTS_SIMD_KV_HALF_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "simd/attention_bf16dot.h"
#include "simd/attention_kv.h"
#include "simd/gemm_f32.h"
#include "simd/half_float.h"

namespace edgeattn {
namespace testing_support {

struct ModelHalfPack {
  std::vector<uint8_t> keys, values;
};

inline void StoreBits(std::vector<uint8_t>& bytes, std::size_t element, uint16_t bits) {
  bytes[2 * element] = static_cast<uint8_t>(bits & 0xFF);  // little-endian, as the kernels
  bytes[2 * element + 1] = static_cast<uint8_t>(bits >> 8);
}

// The fp32 kernel's layout in 16 bits: key element (position t, channel c) at panel t / 64,
// row c, lane t % 64; values row-major; every other byte zero.
template <uint16_t (*kRound)(float)>
ModelHalfPack ModelPackHalf(const float* k, const float* v, std::size_t ld, std::size_t lk,
                            std::size_t dk, std::size_t keys_bytes, std::size_t values_bytes) {
  ModelHalfPack pack{std::vector<uint8_t>(keys_bytes, 0), std::vector<uint8_t>(values_bytes, 0)};
  for (std::size_t t = 0; t < lk; ++t) {
    for (std::size_t c = 0; c < dk; ++c) {
      const std::size_t panel = t / simd::kGemmPanelWidth * dk * simd::kGemmPanelWidth;
      StoreBits(pack.keys, panel + c * simd::kGemmPanelWidth + t % simd::kGemmPanelWidth,
                kRound(k[t * ld + c]));
      StoreBits(pack.values, t * dk + c, kRound(v[t * ld + c]));
    }
  }
  return pack;
}

// The bf16 pair layout: key (t, c) at panel t / 64, pair row c / 2, lane t % 64, half c % 2;
// value (t, c) at pair row t / 2, channel c, half t % 2; every other byte zero.
inline ModelHalfPack ModelPackBf16Pairs(const float* k, const float* v, std::size_t ld,
                                        std::size_t lk, std::size_t dk, std::size_t keys_bytes,
                                        std::size_t values_bytes) {
  ModelHalfPack pack{std::vector<uint8_t>(keys_bytes, 0), std::vector<uint8_t>(values_bytes, 0)};
  const std::size_t panel_elements = simd::Bf16DotKeyPanelElements(dk);
  const std::size_t row_elements = simd::Bf16DotValuePairRowElements(dk);
  for (std::size_t t = 0; t < lk; ++t) {
    for (std::size_t c = 0; c < dk; ++c) {
      const std::size_t lane = t % simd::kBf16DotKeyPanel;
      StoreBits(pack.keys,
                t / simd::kBf16DotKeyPanel * panel_elements +
                    c / 2 * simd::kBf16DotKeyPanel * 2 + lane * 2 + c % 2,
                simd::Bf16FromF32(k[t * ld + c]));
      StoreBits(pack.values, t / 2 * row_elements + 2 * c + t % 2,
                simd::Bf16FromF32(v[t * ld + c]));
    }
  }
  return pack;
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_SIMD_KV_HALF_MODEL_H_
