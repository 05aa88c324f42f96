#include "simd/attention_bf16dot.h"

#include <string.h>


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

// Per row of a block: the query's bf16 pairs (whole vectors of pairs), fp32 scores, the tile's
// bf16 probabilities, accumulators and sums by lane; then the AMX kernel's copy of the value pair
// rows of a tile's last step; every part starts on a 64-byte boundary.
size_t ScratchFloats(size_t dk, size_t rows) {
  const size_t query_words = RoundUp(Bf16DotKeyPairs(dk), kBf16DotValueAlign);
  const size_t probabilities = kAttentionKeyTile / 2;
  return rows * (query_words + kAttentionKeyTile + probabilities + Bf16DotValueChannels(dk) +
                 kBf16DotValueAlign) +
         kBf16AmxRows * Bf16DotValueChannels(dk);
}

}  // namespace

size_t Bf16DotKeysBytes(size_t lk, size_t dk) {
  return (lk + kBf16DotKeyPanel - 1) / kBf16DotKeyPanel * Bf16DotKeyPanelElements(dk) *
         sizeof(uint16_t);
}

size_t Bf16DotValuesBytes(size_t lk, size_t dk) {
  return (lk + 1) / 2 * Bf16DotValuePairRowElements(dk) * sizeof(uint16_t);
}

size_t Bf16DotAttentionScratch(size_t dk) { return ScratchFloats(dk, kAttentionMaxBlockRows); }
size_t Bf16AmxAttentionScratch(size_t dk) { return ScratchFloats(dk, kBf16AmxRows); }

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
