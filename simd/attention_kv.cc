#include "simd/attention_kv.h"

#include <math.h>
#include <string.h>

#include "simd/gemm_f32.h"
#include "simd/half_float.h"
#include "simd/vector_width.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/attention_kv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "simd/attention_kv-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ListCompactKvKernels);

std::vector<const AttentionKernel*> CompactKvAttentionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListCompactKvKernels)();
}

namespace {

size_t RoundUp(size_t x, size_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// The fp32 kernel's layouts with 16-bit elements: key panels of 64 positions x dk rows, value
// rows of dk and a zeroed tail, as the tile kernel reads whole vectors of the last row.
size_t HalfValuesTail(size_t dk) { return RoundUp(dk, kMaxFloatLanes) - dk; }

template <uint16_t (*kRound)(float)>
void PackHalfKeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                        size_t count, size_t stored, size_t dk, void* keys_bytes,
                        void* values_bytes) {
  uint16_t* keys = static_cast<uint16_t*>(keys_bytes);
  uint16_t* values = static_cast<uint16_t*>(values_bytes);
  for (size_t t = 0; t < count; ++t) {
    const size_t key = first + t;
    uint16_t* panel = keys + (key / kGemmPanelWidth) * dk * kGemmPanelWidth;
    const size_t lane = key % kGemmPanelWidth;
    for (size_t c = 0; c < dk; ++c) panel[c * kGemmPanelWidth + lane] = kRound(k[t * ldk + c]);
    for (size_t c = 0; c < dk; ++c) values[key * dk + c] = kRound(v[t * ldv + c]);
  }
  // Lanes past the last key and the values' tail are read (never stored): keep them zero.
  if (stored % kGemmPanelWidth != 0) {
    uint16_t* panel = keys + (stored / kGemmPanelWidth) * dk * kGemmPanelWidth;
    const size_t lanes = kGemmPanelWidth - stored % kGemmPanelWidth;
    for (size_t c = 0; c < dk; ++c) {
      memset(panel + c * kGemmPanelWidth + stored % kGemmPanelWidth, 0, lanes * sizeof(uint16_t));
    }
  }
  memset(values + stored * dk, 0, HalfValuesTail(dk) * sizeof(uint16_t));
}

size_t I8KeyGroups(size_t dk) { return (dk + 3) / 4; }
size_t I8KeyPanelBytes(size_t dk) { return (I8KeyGroups(dk) + 1) * kI8KeyPanel * 4; }
size_t I8ValueRowBytes(size_t dk) { return RoundUp(dk, kI8ValueAlign) + sizeof(float); }

}  // namespace

size_t HalfKeysBytes(size_t lk, size_t dk) {
  return PackedGemmWeightsSize(lk, dk) * sizeof(uint16_t);
}
size_t HalfValuesBytes(size_t lk, size_t dk) {
  return (lk * dk + HalfValuesTail(dk)) * sizeof(uint16_t);
}
void PackBf16KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                        size_t count, size_t stored, size_t dk, void* keys, void* values) {
  PackHalfKeysValues<&Bf16FromF32>(k, ldk, v, ldv, first, count, stored, dk, keys, values);
}
void PackF16KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                       size_t count, size_t stored, size_t dk, void* keys, void* values) {
  PackHalfKeysValues<&F16FromF32>(k, ldk, v, ldv, first, count, stored, dk, keys, values);
}

size_t I8KeysBytes(size_t lk, size_t dk) {
  return (lk + kI8KeyPanel - 1) / kI8KeyPanel * I8KeyPanelBytes(dk);
}
size_t I8ValuesBytes(size_t lk, size_t dk) { return lk * I8ValueRowBytes(dk); }

size_t CompactKvScratch(size_t dk) {
  // Per row of a block: the scaled query, its int8 copy (whole 64-byte lines), scores and
  // accumulators; every part starts on a 64-byte boundary.
  const size_t row = RoundUp(dk, kMaxFloatLanes);
  const size_t q8 = RoundUp(dk, 64) / sizeof(float);
  return kAttentionMaxBlockRows * (row + q8 + kAttentionKeyTile + row);
}

size_t I8RotationBlock(size_t n) {
  size_t block = 1;
  while (block < kMaxI8RotationBlock && n % (2 * block) == 0) block *= 2;
  return block;
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
