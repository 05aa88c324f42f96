#include "simd/gemm_i8.h"

#include <string.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/gemm_i8.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "simd/gemm_i8-inl.h"
#include "simd/gemm_i8_amx-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ListI8KernelsWithAmx);

namespace {

size_t GroupCount(size_t k) { return QuantizedRowStride(k) / 4; }

size_t BlockStartCount(size_t n, size_t k, size_t block) {
  return GemmI8PanelCount(n) * QuantBlockCount(k, block) * kGemmI8PanelWidth;
}

// Where weight (row, i) sits in the panels layout.
size_t PanelOffset(size_t row, size_t i, size_t groups) {
  const size_t p = row / kGemmI8PanelWidth;
  const size_t j = row % kGemmI8PanelWidth;
  return ((p * groups + i / 4) * kGemmI8PanelWidth + j) * 4 + i % 4;
}

}  // namespace

size_t Qc8PanelsBytes(size_t n, size_t k, size_t) {
  return GemmI8PanelCount(n) * GroupCount(k) * kGemmI8GroupBytes;
}

void PackQc8Panels(const void* w, size_t n, size_t k, size_t, void* packed) {
  const int8_t* wq = static_cast<const int8_t*>(w);
  int8_t* panels = static_cast<int8_t*>(packed);
  const size_t groups = GroupCount(k);
  memset(panels, 0, Qc8PanelsBytes(n, k, 0));
  for (size_t row = 0; row < n; ++row) {
    for (size_t i = 0; i < k; ++i) panels[PanelOffset(row, i, groups)] = wq[row * k + i];
  }
}

void UnpackQc8Panels(const void* packed, size_t n, size_t k, size_t, void* w) {
  const int8_t* panels = static_cast<const int8_t*>(packed);
  int8_t* wq = static_cast<int8_t*>(w);
  const size_t groups = GroupCount(k);
  for (size_t row = 0; row < n; ++row) {
    for (size_t i = 0; i < k; ++i) wq[row * k + i] = panels[PanelOffset(row, i, groups)];
  }
}

size_t Qc8PanelsWithStartsBytes(size_t n, size_t k, size_t block) {
  return Qc8PanelsBytes(n, k, block) + BlockStartCount(n, k, block) * sizeof(int32_t);
}

void PackQc8PanelsWithStarts(const void* w, size_t n, size_t k, size_t block, void* packed) {
  PackQc8Panels(w, n, k, block, packed);
  const int8_t* wq = static_cast<const int8_t*>(w);
  const size_t blocks = QuantBlockCount(k, block);
  // Summed in int32 first: the int32 slots of the packed buffer need not be aligned.
  std::vector<int32_t> starts(BlockStartCount(n, k, block), 0);
  for (size_t row = 0; row < n; ++row) {
    const size_t p = row / kGemmI8PanelWidth;
    const size_t j = row % kGemmI8PanelWidth;
    for (size_t i = 0; i < k; ++i) {
      starts[(p * blocks + i / block) * kGemmI8PanelWidth + j] -= 128 * wq[row * k + i];
    }
  }
  memcpy(static_cast<int8_t*>(packed) + Qc8PanelsBytes(n, k, block), starts.data(),
         starts.size() * sizeof(int32_t));
}

std::vector<const ProjectionKernel*> I8ProjectionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListI8KernelsWithAmx)();
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
