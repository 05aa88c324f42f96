// The registry of projection kernels: each weight type's kernels come from its kernel family.
#include <string.h>

#include <algorithm>

#include "simd/gemm_f32.h"
#include "simd/gemm_half.h"
#include "simd/gemm_i8.h"
#include "simd/projection_kernel.h"
#include "simd/targets.h"

namespace edgeattn {
namespace simd {

std::vector<const ProjectionKernel*> ProjectionKernels(WeightType type) {
  InitDispatch();
  std::vector<const ProjectionKernel*> kernels;
  switch (type) {
    case WeightType::kQc8:
      kernels = I8ProjectionKernels();
      break;
    case WeightType::kBf16:
      kernels = Bf16ProjectionKernels();
      break;
    case WeightType::kF16:
      kernels = F16ProjectionKernels();
      break;
    default:
      kernels = F32ProjectionKernels();
  }
  kernels.erase(std::remove_if(kernels.begin(), kernels.end(),
                               [](const ProjectionKernel* kernel) { return !kernel->cpu_runs(); }),
                kernels.end());
  return kernels;
}

const ProjectionKernel* FindProjectionKernel(WeightType type, const char* name) {
  for (const ProjectionKernel* kernel : ProjectionKernels(type)) {
    if (strcmp(kernel->name, name) == 0) return kernel;
  }
  return nullptr;
}

}  // namespace simd
}  // namespace edgeattn
