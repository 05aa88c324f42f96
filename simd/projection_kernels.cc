// The registry of projection kernels: each weight type's kernels come from its kernel family.
#include <string.h>

#include <algorithm>

#include "simd/gemm_f32.h"
#include "simd/gemm_i8.h"
#include "simd/projection_kernel.h"
#include "simd/targets.h"

namespace edgeattn {
namespace simd {

std::vector<const ProjectionKernel*> ProjectionKernels(WeightType type) {
  InitDispatch();
  std::vector<const ProjectionKernel*> kernels =
      type == WeightType::kQc8 ? I8ProjectionKernels() : F32ProjectionKernels();
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
