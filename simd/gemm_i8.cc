#include "simd/gemm_i8.h"

#include <string.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/gemm_i8.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "simd/gemm_i8-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(GemmI8Panels);
HWY_EXPORT(GemmI8PathName);
HWY_EXPORT(ListI8Kernels);

size_t PackedGemmI8WeightsSize(size_t n, size_t k) {
  return GemmI8PanelCount(n) * QuantizedRowStride(k) * kGemmI8PanelWidth;
}

size_t GemmI8BlockStartsSize(size_t n, size_t k, size_t block) {
  return GemmI8PanelCount(n) * QuantBlockCount(k, block) * kGemmI8PanelWidth;
}

void PackGemmI8Weights(const int8_t* wq, size_t n, size_t k, size_t block, int8_t* packed,
                       int32_t* block_starts) {
  const size_t groups = QuantizedRowStride(k) / 4;
  const size_t blocks = QuantBlockCount(k, block);
  memset(packed, 0, PackedGemmI8WeightsSize(n, k));
  memset(block_starts, 0, GemmI8BlockStartsSize(n, k, block) * sizeof(int32_t));
  for (size_t row = 0; row < n; ++row) {
    const size_t p = row / kGemmI8PanelWidth;
    const size_t j = row % kGemmI8PanelWidth;
    for (size_t i = 0; i < k; ++i) {
      const int8_t value = wq[row * k + i];
      packed[((p * groups + i / 4) * kGemmI8PanelWidth + j) * 4 + i % 4] = value;
      block_starts[(p * blocks + i / block) * kGemmI8PanelWidth + j] -= 128 * value;
    }
  }
}

void GemmI8(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
            const GemmI8WeightsView& w, size_t panel_begin, size_t panel_end, float* c,
            size_t ldc) {
  HWY_DYNAMIC_DISPATCH(GemmI8Panels)(a, row_begin, row_end, w, panel_begin, panel_end, c, ldc);
}

size_t Qc8PanelsWithStartsBytes(size_t n, size_t k, size_t block) {
  return PackedGemmI8WeightsSize(n, k) + GemmI8BlockStartsSize(n, k, block) * sizeof(int32_t);
}

void PackQc8PanelsWithStarts(const void* w, size_t n, size_t k, size_t block, void* packed) {
  int8_t* panels = static_cast<int8_t*>(packed);
  PackGemmI8Weights(static_cast<const int8_t*>(w), n, k, block, panels,
                    reinterpret_cast<int32_t*>(panels + PackedGemmI8WeightsSize(n, k)));
}

void UnpackQc8Panels(const void* packed, size_t n, size_t k, size_t, void* w) {
  const int8_t* panels = static_cast<const int8_t*>(packed);
  int8_t* out = static_cast<int8_t*>(w);
  const size_t groups = QuantizedRowStride(k) / 4;
  for (size_t row = 0; row < n; ++row) {
    const size_t p = row / kGemmI8PanelWidth;
    const size_t j = row % kGemmI8PanelWidth;
    for (size_t i = 0; i < k; ++i) {
      out[row * k + i] = panels[((p * groups + i / 4) * kGemmI8PanelWidth + j) * 4 + i % 4];
    }
  }
}

std::vector<const ProjectionKernel*> I8ProjectionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListI8Kernels)();
}

const char* GemmI8Path() { return HWY_DYNAMIC_DISPATCH(GemmI8PathName)(); }

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
