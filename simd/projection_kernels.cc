// The registry of projection kernels: each weight type's kernels come from its kernel family.
#include <string.h>

#include "simd/gemm_f32.h"
#include "simd/gemm_half.h"
#include "simd/gemm_i8.h"
#include "simd/projection_kernel.h"
#include "simd/targets.h"

namespace edgeattn {
namespace simd {

std::vector<const ProjectionKernel*> ProjectionKernels(WeightType type) {
  InitDispatch();
  switch (type) {
    case WeightType::kQc8:
      return I8ProjectionKernels();
    case WeightType::kBf16:
      return Bf16ProjectionKernels();
    case WeightType::kF16:
      return F16ProjectionKernels();
    default:
      return F32ProjectionKernels();
  }
}

const ProjectionKernel* FindProjectionKernel(WeightType type, const char* name) {
  for (const ProjectionKernel* kernel : ProjectionKernels(type)) {
    if (strcmp(kernel->name, name) == 0) return kernel;
  }
  return nullptr;
}

}  // namespace simd
}  // namespace edgeattn
