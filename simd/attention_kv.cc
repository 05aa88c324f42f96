#include "simd/attention_kv.h"

#include <math.h>

#include "simd/gemm_f32.h"
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

size_t I8KeyGroups(size_t dk) { return (dk + 3) / 4; }
size_t I8KeyPanelBytes(size_t dk) { return (I8KeyGroups(dk) + 1) * kI8KeyPanel * 4; }

}  // namespace

size_t HalfKeysBytes(size_t lk, size_t dk) {
  return PackedGemmWeightsSize(lk, dk) * sizeof(uint16_t);
}
size_t HalfValuesBytes(size_t lk, size_t dk) {
  return (lk * dk + HalfValuesTail(dk)) * sizeof(uint16_t);
}
size_t I8KeysBytes(size_t lk, size_t dk) {
  return (lk + kI8KeyPanel - 1) / kI8KeyPanel * I8KeyPanelBytes(dk);
}
size_t I8ValuesBytes(size_t lk, size_t dk) {
  return (lk + kI8ValuePanel - 1) / kI8ValuePanel * I8ValuePanelBytes(dk);
}

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
