#include "simd/gemm_f32.h"

#include "simd/panel_layout.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/gemm_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "simd/gemm_f32-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ListF32Kernels);

size_t PackedGemmWeightsSize(size_t n, size_t k) {
  return GemmPanelCount(n) * kGemmPanelWidth * k;
}

void PackGemmWeights(const float* w, size_t ldw, size_t n, size_t k, float* packed) {
  PackPanels(w, ldw, n, k, packed);
}

size_t F32PanelBytes(size_t n, size_t k, size_t) {
  return PackedGemmWeightsSize(n, k) * sizeof(float);
}

void PackF32Panels(const void* w, size_t n, size_t k, size_t, void* packed) {
  PackGemmWeights(static_cast<const float*>(w), k, n, k, static_cast<float*>(packed));
}

void UnpackF32Panels(const void* packed, size_t n, size_t k, size_t, void* w) {
  UnpackPanels(static_cast<const float*>(packed), n, k, static_cast<float*>(w));
}

std::vector<const ProjectionKernel*> F32ProjectionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListF32Kernels)();
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
