#include "simd/attention.h"

#include <string.h>

#include "hwy/cache_control.h"
#include "simd/attention_arm_half.h"
#include "simd/attention_arm_i8mm.h"
#include "simd/attention_bf16dot.h"
#include "simd/attention_f16fma.h"
#include "simd/attention_kv.h"
#include "simd/gemm_f32.h"
#include "simd/targets.h"
#include "simd/vector_width.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/attention.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "simd/attention-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ListAttentionKernels);

namespace {
size_t RoundUp(size_t x, size_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// The P V tile reads each value row as whole vectors (RoundUp(dk, lanes) floats);
// past dk it reads the next rows, lanes it computes but never stores.
size_t ValuesTail(size_t dk) { return RoundUp(dk, kMaxFloatLanes) - dk; }

// A long sequence's keys and values come from projections beyond L2, one row of a head at a
// time: asking for the rows a few positions ahead keeps several misses in flight.
constexpr size_t kPackRowsAhead = 8;
void PrefetchRow(const float* row, size_t n) {
  for (size_t c = 0; c < n; c += 64 / sizeof(float)) hwy::Prefetch(row + c);
}

}  // namespace

size_t F32KeysBytes(size_t lk, size_t dk) { return PackedGemmWeightsSize(lk, dk) * sizeof(float); }
size_t F32ValuesBytes(size_t lk, size_t dk) { return (lk * dk + ValuesTail(dk)) * sizeof(float); }

void PackF32KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                       size_t count, size_t stored, size_t dk, void* keys_bytes,
                       void* values_bytes) {
  float* keys = static_cast<float*>(keys_bytes);
  float* values = static_cast<float*>(values_bytes);
  for (size_t t = 0; t < count; ++t) {
    if (t + kPackRowsAhead < count) {
      PrefetchRow(k + (t + kPackRowsAhead) * ldk, dk);
      PrefetchRow(v + (t + kPackRowsAhead) * ldv, dk);
    }
    const size_t key = first + t;
    float* panel = keys + (key / kGemmPanelWidth) * dk * kGemmPanelWidth;
    const size_t lane = key % kGemmPanelWidth;
    for (size_t c = 0; c < dk; ++c) panel[c * kGemmPanelWidth + lane] = k[t * ldk + c];
    memcpy(values + key * dk, v + t * ldv, dk * sizeof(float));
  }
  // Lanes past the last key are computed (not stored) by the tile kernel: keep them zero so
  // that no stale or uninitialised value is ever read.
  const size_t end = stored;
  if (end % kGemmPanelWidth != 0) {
    float* panel = keys + (end / kGemmPanelWidth) * dk * kGemmPanelWidth;
    for (size_t c = 0; c < dk; ++c) {
      memset(panel + c * kGemmPanelWidth + end % kGemmPanelWidth, 0,
             (kGemmPanelWidth - end % kGemmPanelWidth) * sizeof(float));
    }
  }
  memset(values + end * dk, 0, ValuesTail(dk) * sizeof(float));
}

size_t F32AttentionScratch(size_t dk) {
  // Query rows, scores, accumulators and sums by lane per row of a block; rows padded to whole
  // vectors.
  const size_t row = RoundUp(dk, kMaxFloatLanes);
  return kAttentionMaxBlockRows * (row + kAttentionKeyTile + row + kMaxFloatLanes);
}

std::vector<const AttentionKernel*> AttentionKernels(KvType type) {
  InitDispatch();
  std::vector<const AttentionKernel*> kernels;
  for (const AttentionKernel* kernel : HWY_DYNAMIC_DISPATCH(ListAttentionKernels)()) {
    if (kernel->kv == type) kernels.push_back(kernel);
  }
  // The bf16 cores in order of speed on the CPU measured (docs/precision.md): AMX tiles (3x
  // the fp32 core), the widening kernel, then vdpbf16ps (at half the fp32 FMA rate there).
  // fp16 on x86: vfmadd231ph before the widening kernel (docs/fp16_core.md). On ARM, usmmla
  // before the other int8 kernels (the same bits, twice sdot's multiply-adds), and the fp16 and
  // bf16 arithmetic kernels after the widening ones: opt-in by name until measured on a device
  // (attention_arm_half.h).
  for (const auto& list :
       {Bf16AmxAttentionKernels(), F16FmaAttentionKernels(), ArmI8mmAttentionKernels(),
        CompactKvAttentionKernels(), Bf16DotAttentionKernels(), ArmHalfAttentionKernels()}) {
    for (const AttentionKernel* kernel : list) {
      if (kernel->kv == type) kernels.push_back(kernel);
    }
  }
  return kernels;
}

const AttentionKernel* FindAttentionKernel(KvType type, const char* name) {
  for (const AttentionKernel* kernel : AttentionKernels(type)) {
    if (strcmp(kernel->name, name) == 0) return kernel;
  }
  return nullptr;
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
