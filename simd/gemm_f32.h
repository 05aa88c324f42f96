// fp32 projection kernels: C = A W^T + bias, with W [n x k] as PyTorch stores a Linear weight,
// packed once into panels that the tile kernel reads with unit stride. The attention core packs
// its keys in the same panel layout.
#ifndef EDGEATTN_SIMD_GEMM_F32_H_
#define EDGEATTN_SIMD_GEMM_F32_H_

#include <stddef.h>

#include <vector>

#include "simd/projection_kernel.h"

namespace edgeattn {
namespace simd {

// Output features per packed panel. A multiple of every target's tile width (16, 32 or 64).
inline constexpr size_t kGemmPanelWidth = 64;

inline size_t GemmPanelCount(size_t n) { return (n + kGemmPanelWidth - 1) / kGemmPanelWidth; }

// Floats needed by PackGemmWeights for n output features of k inputs.
size_t PackedGemmWeightsSize(size_t n, size_t k);

// Packs W [n x k] (row stride ldw) into panels: panel p holds features [64p, 64p + 64) as
// k rows of 64, zero-padded past n. `packed` must hold PackedGemmWeightsSize(n, k) floats.
void PackGemmWeights(const float* w, size_t ldw, size_t n, size_t k, float* packed);

// The fp32 projection kernels of the dispatched target (see ProjectionKernels).
std::vector<const ProjectionKernel*> F32ProjectionKernels();

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_GEMM_F32_H_
