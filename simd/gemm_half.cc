#include "simd/gemm_half.h"

#include <stdint.h>
#include <string.h>

#include "simd/gemm_f32.h"
#include "simd/panel_layout.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/gemm_half.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "simd/gemm_half-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ListBf16Kernels);
HWY_EXPORT(ListF16Kernels);

size_t HalfPanelBytes(size_t n, size_t k, size_t) {
  return PackedGemmWeightsSize(n, k) * sizeof(uint16_t);
}

void PackHalfPanels(const void* w, size_t n, size_t k, size_t, void* packed) {
  PackPanels(static_cast<const uint16_t*>(w), k, n, k, static_cast<uint16_t*>(packed));
}

void UnpackHalfPanels(const void* packed, size_t n, size_t k, size_t, void* w) {
  UnpackPanels(static_cast<const uint16_t*>(packed), n, k, static_cast<uint16_t*>(w));
}

size_t Bf16PairPanelBytes(size_t n, size_t k, size_t) {
  return GemmPanelCount(n) * Bf16PairRows(k) * kBf16PairRowElements * sizeof(uint16_t);
}

void PackBf16PairPanels(const void* w, size_t n, size_t k, size_t block, void* packed) {
  const uint16_t* in = static_cast<const uint16_t*>(w);
  uint16_t* out = static_cast<uint16_t*>(packed);
  memset(out, 0, Bf16PairPanelBytes(n, k, block));
  for (size_t row = 0; row < n; ++row) {
    for (size_t i = 0; i < k; ++i) out[Bf16PairIndex(row, i, k)] = in[row * k + i];
  }
}

void UnpackBf16PairPanels(const void* packed, size_t n, size_t k, size_t, void* w) {
  const uint16_t* in = static_cast<const uint16_t*>(packed);
  uint16_t* out = static_cast<uint16_t*>(w);
  for (size_t row = 0; row < n; ++row) {
    for (size_t i = 0; i < k; ++i) out[row * k + i] = in[Bf16PairIndex(row, i, k)];
  }
}

std::vector<const ProjectionKernel*> Bf16ProjectionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListBf16Kernels)();
}

std::vector<const ProjectionKernel*> F16ProjectionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListF16Kernels)();
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
