#include "simd/attention_bf16dot.h"

#include <string.h>

#include "simd/half_float.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/attention_bf16dot.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "simd/attention_bf16dot-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ListBf16AmxAttentionKernels);
HWY_EXPORT(ListBf16DotAttentionKernels);

std::vector<const AttentionKernel*> Bf16AmxAttentionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListBf16AmxAttentionKernels)();
}

std::vector<const AttentionKernel*> Bf16DotAttentionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListBf16DotAttentionKernels)();
}

namespace {

size_t RoundUp(size_t x, size_t multiple) { return (x + multiple - 1) / multiple * multiple; }

size_t KeyPairs(size_t dk) { return (dk + 1) / 2; }
size_t KeyPanelElements(size_t dk) { return KeyPairs(dk) * kBf16DotKeyPanel * 2; }
size_t ValueChannels(size_t dk) { return RoundUp(dk, kBf16DotValueAlign); }
size_t ValuePairRowElements(size_t dk) { return 2 * ValueChannels(dk); }

}  // namespace

size_t Bf16DotKeysBytes(size_t lk, size_t dk) {
  return (lk + kBf16DotKeyPanel - 1) / kBf16DotKeyPanel * KeyPanelElements(dk) * sizeof(uint16_t);
}

size_t Bf16DotValuesBytes(size_t lk, size_t dk) {
  return (lk + 1) / 2 * ValuePairRowElements(dk) * sizeof(uint16_t);
}

void PackBf16DotKeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                           size_t count, size_t stored, size_t dk, void* keys_bytes,
                           void* values_bytes) {
  uint16_t* keys = static_cast<uint16_t*>(keys_bytes);
  uint16_t* values = static_cast<uint16_t*>(values_bytes);
  const size_t channels = ValueChannels(dk);
  for (size_t t = 0; t < count; ++t) {
    const size_t key = first + t;
    uint16_t* panel = keys + key / kBf16DotKeyPanel * KeyPanelElements(dk);
    const size_t lane = key % kBf16DotKeyPanel;
    for (size_t c = 0; c < 2 * KeyPairs(dk); ++c) {
      const uint16_t bits = c < dk ? Bf16FromF32(k[t * ldk + c]) : 0;
      panel[(c / 2) * kBf16DotKeyPanel * 2 + lane * 2 + c % 2] = bits;
    }
    uint16_t* pair_row = values + key / 2 * ValuePairRowElements(dk);
    for (size_t c = 0; c < channels; ++c) {
      pair_row[2 * c + key % 2] = c < dk ? Bf16FromF32(v[t * ldv + c]) : 0;
    }
  }
  // Key lanes past the last position are scored (never stored), and an odd last position's
  // partner in its value row is read: keep both zero.
  if (stored % kBf16DotKeyPanel != 0) {
    uint16_t* panel = keys + stored / kBf16DotKeyPanel * KeyPanelElements(dk);
    const size_t lane = stored % kBf16DotKeyPanel;
    for (size_t pair = 0; pair < KeyPairs(dk); ++pair) {
      memset(panel + pair * kBf16DotKeyPanel * 2 + lane * 2, 0,
             (kBf16DotKeyPanel - lane) * 2 * sizeof(uint16_t));
    }
  }
  if (stored % 2 != 0) {
    uint16_t* pair_row = values + stored / 2 * ValuePairRowElements(dk);
    for (size_t c = 0; c < channels; ++c) pair_row[2 * c + 1] = 0;
  }
}

namespace {

// Per row of a block: the query's bf16 pairs (whole vectors of pairs), fp32 scores, the tile's
// bf16 probabilities, accumulators and sums by lane; then the AMX kernel's copy of the value pair
// rows of a tile's last step; every part starts on a 64-byte boundary.
size_t ScratchFloats(size_t dk, size_t rows) {
  const size_t query_words = RoundUp(KeyPairs(dk), kBf16DotValueAlign);
  const size_t probabilities = kAttentionKeyTile / 2;
  return rows * (query_words + kAttentionKeyTile + probabilities + ValueChannels(dk) +
                 kBf16DotValueAlign) +
         kBf16AmxRows * ValueChannels(dk);
}

}  // namespace

size_t Bf16DotAttentionScratch(size_t dk) { return ScratchFloats(dk, kAttentionMaxBlockRows); }
size_t Bf16AmxAttentionScratch(size_t dk) { return ScratchFloats(dk, kBf16AmxRows); }

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
