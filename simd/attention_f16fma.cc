#include "simd/attention_f16fma.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/attention_f16fma.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "simd/attention_f16fma-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ListF16FmaAttentionKernels);

std::vector<const AttentionKernel*> F16FmaAttentionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListF16FmaAttentionKernels)();
}

size_t F16FmaAttentionScratch(size_t dk) {
  // Per row of a block: the query's fp16 pairs (RoundUp(dk, 16) words), fp32 scores, the tile's
  // fp16 probability pairs, accumulators and their copy (RoundUp(dk, 32) floats each), sums by
  // lane; every part starts on a 64-byte boundary.
  const size_t ldq = (dk + 15) / 16 * 16, ld = (dk + 31) / 32 * 32;
  return kAttentionMaxBlockRows * (ldq + 2 * kAttentionKeyTile + 2 * ld + 16);
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
