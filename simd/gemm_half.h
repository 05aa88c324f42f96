// Projection kernels on half-precision weights (bf16, fp16): half the bytes of fp32 weights.
//
//   f32_bf16w_widen_<tile>, f32_f16w_widen_<tile>   every target. Weights widen to fp32 in
//       registers (exactly), activations stay fp32: the fp32 kernel's arithmetic on the
//       rounded weights (one fused multiply-add per k, in k order). Panels as the fp32 kernel's.
//   f32_bf16w_dpbf16_6x4v   x86 with AVX512-BF16 (vdpbf16ps). Activations are rounded to bf16
//       each call (round to nearest even; fp32 subnormals become zero), products of two bf16
//       are exact in fp32, and each pair of products is added to an fp32 accumulator (subnormal
//       inputs read as zero, subnormal sums flushed to zero). Panels of k/2 rows of 64 features
//       x 2 consecutive k values.
#ifndef EDGEATTN_SIMD_GEMM_HALF_H_
#define EDGEATTN_SIMD_GEMM_HALF_H_

#include <vector>

#include "simd/projection_kernel.h"

namespace edgeattn {
namespace simd {

// The kernels of the dispatched target for bf16 and for fp16 weights (see ProjectionKernels).
std::vector<const ProjectionKernel*> Bf16ProjectionKernels();
std::vector<const ProjectionKernel*> F16ProjectionKernels();

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_GEMM_HALF_H_
