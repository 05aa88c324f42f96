// The panel layout of the fp32 and widening projection kernels, for any element type: panel p
// holds output features [64p, 64p + 64) as k rows of 64 elements, zero-padded past n, so that
// the tile kernel reads B with unit stride.
#ifndef EDGEATTN_SIMD_PANEL_LAYOUT_H_
#define EDGEATTN_SIMD_PANEL_LAYOUT_H_

#include <stddef.h>
#include <string.h>

#include "simd/gemm_f32.h"

namespace edgeattn {
namespace simd {

// W [n x k] (row stride ldw) into panels of PackedGemmWeightsSize(n, k) elements.
template <class T>
void PackPanels(const T* w, size_t ldw, size_t n, size_t k, T* packed) {
  memset(packed, 0, PackedGemmWeightsSize(n, k) * sizeof(T));
  for (size_t row = 0; row < n; ++row) {
    T* panel = packed + (row / kGemmPanelWidth) * k * kGemmPanelWidth;
    const size_t lane = row % kGemmPanelWidth;
    for (size_t i = 0; i < k; ++i) panel[i * kGemmPanelWidth + lane] = w[row * ldw + i];
  }
}

// The inverse: W [n x k], rows k apart.
template <class T>
void UnpackPanels(const T* packed, size_t n, size_t k, T* w) {
  for (size_t row = 0; row < n; ++row) {
    const T* panel = packed + (row / kGemmPanelWidth) * k * kGemmPanelWidth;
    const size_t lane = row % kGemmPanelWidth;
    for (size_t i = 0; i < k; ++i) w[row * k + i] = panel[i * kGemmPanelWidth + lane];
  }
}

// The bf16 dot-product kernel's layout: panel p holds features [64p, 64p + 64) as ceil(k / 2)
// rows of 64 x 2 values, feature j's weights for k values 2q and 2q + 1 side by side (the pairs
// that vdpbf16ps multiplies), zero-padded past n and past an odd k.
inline constexpr size_t kBf16PairRowElements = 2 * kGemmPanelWidth;
inline size_t Bf16PairRows(size_t k) { return (k + 1) / 2; }
inline size_t Bf16PairIndex(size_t row, size_t i, size_t k) {
  return ((row / kGemmPanelWidth) * Bf16PairRows(k) + i / 2) * kBf16PairRowElements +
         (row % kGemmPanelWidth) * 2 + i % 2;
}

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_PANEL_LAYOUT_H_
