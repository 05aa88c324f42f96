// int8 projection kernels: C = dequant(Aq Wq^T) + bias with int32 accumulation.
//
// Weights: int8, symmetric, one scale per output channel (row of W). Activations: int8 from
// QuantizeRowsI8, one scale per row and per block of k. Each block's dot products are summed
// exactly in int32, then scaled into a float accumulator:
//   c[m][n] = w_scale[n] * sum_blocks x_scale[m][blk] * acc_int32[m][blk][n] + bias[n]
// No product saturates at int16 (the maddubs kernel's pairs and the NEON mlal kernel's sums of
// two products stay within +-32512, since the quantized activations stay within [-127, 127]).
// The kernels (one per dot-product instruction, listed in gemm_i8-inl.h) are reached through their
// descriptors (projection_kernel.h); this header holds their packed layouts.
#ifndef EDGEATTN_SIMD_GEMM_I8_H_
#define EDGEATTN_SIMD_GEMM_I8_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "simd/projection_kernel.h"
#include "simd/quantize.h"

namespace edgeattn {
namespace simd {

// Output features per packed panel.
inline constexpr size_t kGemmI8PanelWidth = 64;
// Bytes of one group of a panel: 64 features x 4 k-values.
inline constexpr size_t kGemmI8GroupBytes = kGemmI8PanelWidth * 4;

inline size_t GemmI8PanelCount(size_t n) { return (n + kGemmI8PanelWidth - 1) / kGemmI8PanelWidth; }

// The panels layout (every int8 kernel): panel p, group g of 4 k-values holds 64 features x
// 4 bytes, feature-major, zero-padded past n and k.
size_t Qc8PanelsBytes(size_t n, size_t k, size_t block);
void PackQc8Panels(const void* w, size_t n, size_t k, size_t block, void* packed);
// Also the inverse of PackQc8PanelsWithStarts, whose panels come first.
void UnpackQc8Panels(const void* packed, size_t n, size_t k, size_t block, void* w);

// The panels layout followed by int32 block starts (the VNNI kernel):
// starts[(p * blocks + b) * 64 + j] = -128 x the sum of feature 64p + j's weights in block b.
// vpdpbusd multiplies unsigned by signed bytes, so that kernel offsets the activations by +128
// and starts each block's int32 accumulator here to take the offset's products back off.
size_t Qc8PanelsWithStartsBytes(size_t n, size_t k, size_t block);
void PackQc8PanelsWithStarts(const void* w, size_t n, size_t k, size_t block, void* packed);

// What the kernels read of either layout.
struct GemmI8WeightsView {
  const int8_t* panels;
  const int32_t* block_starts;  // null in the panels layout
  const float* scales;          // per output feature, padded with zeros to whole panels
  const float* bias;            // per output feature, padded to whole panels, or null
  size_t n;
  size_t k;
  size_t block;
};

inline GemmI8WeightsView Qc8PanelsView(const PackedProjectionView& w) {
  return {static_cast<const int8_t*>(w.packed), nullptr, w.scales, w.bias, w.n, w.k, w.block};
}

inline GemmI8WeightsView Qc8PanelsWithStartsView(const PackedProjectionView& w) {
  GemmI8WeightsView view = Qc8PanelsView(w);
  view.block_starts = reinterpret_cast<const int32_t*>(view.panels + Qc8PanelsBytes(w.n, w.k, 0));
  return view;
}

// The int8 projection kernels of the dispatched target (see ProjectionKernels).
std::vector<const ProjectionKernel*> I8ProjectionKernels();

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_GEMM_I8_H_
