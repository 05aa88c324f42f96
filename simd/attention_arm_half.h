// Attention cores that compute in 16-bit arithmetic on ARM, on the fp16 and bf16 keys and
// values of attention_kv.h (the same layouts and packing: a cache packed for f16kv_f32_* or
// bf16kv_f32_* is read as it is), for the NEON and SVE targets of g++ builds on Linux, where
// getauxval reports the instructions (Highway 1.0.3 neither enables nor detects them), or builds
// whose whole target has them (__ARM_FEATURE_* macros). Elsewhere (clang without those macros,
// x86) the variants are absent.
//
//   f16kv_f16fma_6x8   Armv8.2 FP16 (HWCAP_ASIMDHP): Q K^T and P V in fp16 FMLA.
//     - each query row is scaled in fp32 by scale * log2(e) (the fp32 core's base-2 units) and
//       rounded to fp16 (nearest even, subnormals kept);
//     - a score sums 8 channels at a time in fp16 fused multiply-adds (one rounding each, from
//       zero), and those partial sums, widened exactly, in fp32;
//     - softcap, masks, sink and the online softmax statistics are the fp32 core's;
//     - the probabilities 2^(s - max) of a key tile (fp32) are rounded to fp16, and P V sums 8
//       keys at a time in fp16 fused multiply-adds and those partial sums in fp32 (the
//       accumulators, their rescaling and the final division stay fp32).
//     Sums of 8 keep fp16's rounding error to 8 half-ulps of the partial sum and its range
//     (65504) out of reach of data whose 8-channel products stay below it; FMLAL (FHM, fp32
//     sums) is not needed for the accuracy bound (docs/arm.md) and most fp16 cores lack it.
//   bf16kv_bf16dot_6x8   Armv8.6 BF16 (HWCAP2_BF16): Q K^T and P V in BFDOT.
//     - each query row is scaled as above and rounded to bf16 (nearest even);
//     - BFDOT adds two exact bf16 x bf16 products to an fp32 lane: channel pairs (2i, 2i + 1)
//       for a score, key pairs (2t, 2t + 1) for P V, the fp16 layouts interleaved in registers;
//       its additions round to odd and flush subnormals to zero (FPCR.EBF = 0), so each is off
//       by at most one fp32 ulp;
//     - softmax as above; the probabilities are rounded to bf16 for P V, the row's sum of
//       exponentials is taken from the fp32 ones.
//   Both: need_weights stores the fp32 probabilities of these scores, as every core does.
//   "6x8": 6 query rows x 8 keys (Q K^T) or 8 value channels (P V) per register tile.
#ifndef EDGEATTN_SIMD_ATTENTION_ARM_HALF_H_
#define EDGEATTN_SIMD_ATTENTION_ARM_HALF_H_

#include <stddef.h>

#include <vector>

#include "simd/attention.h"

namespace edgeattn {
namespace simd {

// The kernels above of the dispatched target that this CPU runs (attention.cc lists them after
// the widening fp32 kernels: opt-in by name, as their speed is a model, not a measurement).
std::vector<const AttentionKernel*> ArmHalfAttentionKernels();

// Armv8.2 fp16 vector arithmetic (HWCAP_ASIMDHP) and Armv8.6 bf16 (HWCAP2_BF16) on AArch64
// Linux, or where the whole build targets them; false elsewhere.
bool CpuHasArmFp16Arithmetic();
bool CpuHasArmBf16();

// Floats of scratch: the compact-KV kernels' (attention_kv.cc) and then the block's 16-bit
// query rows and probabilities.
size_t ArmHalfAttentionScratch(size_t dk);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_ARM_HALF_H_
