// The attention core on AMX-BF16 tiles, bf16kv_amx_8x64: the bf16 dot-product core's
// arithmetic, layouts and scratch (attention_bf16dot.h), with Q K^T and P V on tdpbf16ps, listed
// where the Highway target is an x86-64 AVX-512 one and the CPU has AMX-BF16 with tile data
// granted to the process (cpu_features.h). Only the order of the fp32 additions inside a
// product differs from the dot-product core's.
#ifndef EDGEATTN_SIMD_ATTENTION_BF16AMX_H_
#define EDGEATTN_SIMD_ATTENTION_BF16AMX_H_

#include <vector>

#include "simd/attention.h"

namespace edgeattn {
namespace simd {

// The AMX attention kernels of the dispatched target this CPU runs (first among the bf16
// kernels: attention.cc).
std::vector<const AttentionKernel*> Bf16AmxAttentionKernels();

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_BF16AMX_H_
