// Per-target lists of the half-precision weight kernels (simd/gemm_half.h).

#if defined(EDGEATTN_SIMD_GEMM_HALF_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_HALF_INL_H_
#undef EDGEATTN_SIMD_GEMM_HALF_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_HALF_INL_H_
#endif

#include <stdint.h>

#include <string>
#include <vector>

#include "simd/gemm_bf16_amx-inl.h"
#include "simd/gemm_bf16_dot-inl.h"
#include "simd/gemm_f32-inl.h"
#include "simd/projection_kernel.h"

namespace edgeattn {
namespace simd {
// The target-independent parts of the kernels' contracts (gemm_half.cc).
size_t HalfPanelBytes(size_t n, size_t k, size_t block);
void PackHalfPanels(const void* w, size_t n, size_t k, size_t block, void* packed);
void UnpackHalfPanels(const void* packed, size_t n, size_t k, size_t block, void* w);
}  // namespace simd
}  // namespace edgeattn

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

HWY_INLINE const ProjectionKernel* WidenKernel(WeightType type) {
  static const std::string bf16_name = TileKernelName("f32_bf16w_widen_");
  static const std::string f16_name = TileKernelName("f32_f16w_widen_");
  static const ProjectionKernel kBf16 = {
      bf16_name.c_str(), ActivationType::kF32, WeightType::kBf16, &RunsWhereItsTargetRuns,
      kGemmPanelWidth,   &HalfPanelBytes,      &PackHalfPanels,   &UnpackHalfPanels,
      &RunPanels<hwy::bfloat16_t>};
  static const ProjectionKernel kF16 = {
      f16_name.c_str(), ActivationType::kF32, WeightType::kF16, &RunsWhereItsTargetRuns,
      kGemmPanelWidth,  &HalfPanelBytes,      &PackHalfPanels,  &UnpackHalfPanels,
      &RunPanels<hwy::float16_t>};
  return type == WeightType::kBf16 ? &kBf16 : &kF16;
}

// AMX tiles first where the CPU has AMX-BF16; then widening: on the Intel Xeon (AVX512-BF16)
// this was measured on, vdpbf16ps issues on one port where fp32 FMAs issue on two, so the
// dot-product kernel ran at 0.6x the widening one (docs/precision.md); it stays listed, to be
// forced by name, for CPUs that issue it at the FMA rate. Plain inline, as every exported
// function (see ListF32Kernels).
inline std::vector<const ProjectionKernel*> ListBf16Kernels() {
  std::vector<const ProjectionKernel*> kernels;
#if EDGEATTN_BF16_AMX
  kernels.push_back(&Bf16AmxKernel());  // its cpu_runs: CpuRunsAmxBf16
#endif
  kernels.push_back(WidenKernel(WeightType::kBf16));
#if EDGEATTN_BF16_DOT
  kernels.push_back(&Bf16DotKernel());  // its cpu_runs: CpuHasAvx512Bf16
#endif
  return kernels;
}

inline std::vector<const ProjectionKernel*> ListF16Kernels() {
  return {WidenKernel(WeightType::kF16)};
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_BF16_DOT
#undef EDGEATTN_BF16_AMX

#endif  // EDGEATTN_SIMD_GEMM_HALF_INL_H_
