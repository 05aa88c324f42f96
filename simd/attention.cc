#include "simd/attention.h"

#include "simd/gemm_f32.h"

#include <string.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/attention.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "simd/attention-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(AttentionHeadF32Impl);

namespace {
size_t RoundUp(size_t x, size_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// The P V tile reads each value row as whole vectors (RoundUp(dk, lanes) floats, lanes <= 16);
// past dk it reads the next rows, lanes it computes but never stores.
size_t ValuesTail(size_t dk) { return RoundUp(dk, 16) - dk; }

}  // namespace

size_t AttentionPackedKeysSize(size_t lk, size_t dk) { return PackedGemmWeightsSize(lk, dk); }
size_t AttentionPackedValuesSize(size_t lk, size_t dk) { return lk * dk + ValuesTail(dk); }

void PackAttentionKeysValues(const float* k, size_t ldk, const float* v, size_t ldv,
                             size_t first, size_t count, size_t dk, float* keys, float* values) {
  for (size_t t = 0; t < count; ++t) {
    const size_t key = first + t;
    float* panel = keys + (key / kGemmPanelWidth) * dk * kGemmPanelWidth;
    const size_t lane = key % kGemmPanelWidth;
    for (size_t c = 0; c < dk; ++c) panel[c * kGemmPanelWidth + lane] = k[t * ldk + c];
  }
  // Lanes past the last key are computed (not stored) by the tile kernel: keep them zero so
  // that no stale or uninitialised value is ever read.
  const size_t end = first + count;
  if (end % kGemmPanelWidth != 0) {
    float* panel = keys + (end / kGemmPanelWidth) * dk * kGemmPanelWidth;
    for (size_t c = 0; c < dk; ++c) {
      memset(panel + c * kGemmPanelWidth + end % kGemmPanelWidth, 0,
             (kGemmPanelWidth - end % kGemmPanelWidth) * sizeof(float));
    }
  }
  for (size_t t = 0; t < count; ++t) {
    memcpy(values + (first + t) * dk, v + t * ldv, dk * sizeof(float));
  }
  memset(values + end * dk, 0, ValuesTail(dk) * sizeof(float));
}

size_t AttentionScratchSize(size_t dk) {
  // Query rows, scores and accumulators per row of a block; rows padded to 16 floats.
  return kAttentionMaxBlockRows * (RoundUp(dk, 16) + kAttentionKeyTile + RoundUp(dk, 16));
}

void AttentionHeadF32(const AttentionHeadArgs& args, size_t q_begin, size_t q_end,
                      float* scratch) {
  HWY_DYNAMIC_DISPATCH(AttentionHeadF32Impl)(args, q_begin, q_end, scratch);
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
