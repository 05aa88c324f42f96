#include "simd/attention.h"

#include <string.h>

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
}  // namespace

// The P V tile reads each value row as whole vectors (RoundUp(dk, lanes) floats);
// past dk it reads the next rows, lanes it computes but never stores.
size_t F32ValuesTail(size_t dk) { return RoundUp(dk, kMaxFloatLanes) - dk; }

size_t F32KeysBytes(size_t lk, size_t dk) { return PackedGemmWeightsSize(lk, dk) * sizeof(float); }
size_t F32ValuesBytes(size_t lk, size_t dk) {
  return (lk * dk + F32ValuesTail(dk)) * sizeof(float);
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
  // fp16 on x86: vfmadd231ph before the widening kernel (docs/fp16_core.md). On ARM, smmla
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
