// The int8 KV cache's attention core on the Armv8.6 int8 matrix multiply (FEAT_I8MM):
//   i8kv_i8mm_smmla   Q K^T in smmla, where getauxval reports HWCAP2_I8MM (g++ on Linux, NEON
//       and SVE targets) or the whole build targets it (__ARM_FEATURE_MATMUL_INT8); absent
//       elsewhere.
// The layout, quantization and results are those of the other int8 kernels (attention_kv.h),
// bit for bit: smmla multiplies 2 keys x 8 channels of the stored bytes (k, signed, on ARM) by 2
// query rows x 8 channels (signed), exactly in int32; scores are float(dot) * key scale * query
// scale in that order, P V is sdot's (kv_int8_values_sdot-inl.h) where g++ compiles the kernel
// per function, else the portable int8 kernel's. smmla does 32 multiply-adds where sdot does 16:
// the keys' 4-channel words of two channel groups are interleaved in registers (zip1/zip2 of
// 32-bit lanes) into the 2 x 8 rows it reads.
#ifndef EDGEATTN_SIMD_ATTENTION_ARM_I8MM_H_
#define EDGEATTN_SIMD_ATTENTION_ARM_I8MM_H_

#include <vector>

#include "simd/attention.h"

namespace edgeattn {
namespace simd {

// The kernel above of the dispatched target where this CPU runs it (attention.cc lists it
// before the other int8 kernels: the same results, twice the multiply-adds per instruction).
std::vector<const AttentionKernel*> ArmI8mmAttentionKernels();

// Armv8.6 int8 matrix multiply (HWCAP2_I8MM) on AArch64 Linux, or where the whole build targets
// it; false elsewhere.
bool CpuHasArmI8mm();

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_ARM_I8MM_H_
