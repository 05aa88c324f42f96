// int8 GEMM for the projections: C = dequant(Aq Wq^T) + bias with int32 accumulation.
//
// Weights: int8, symmetric, one scale per output channel (row of W). Activations: int8 from
// QuantizeRowsI8, one scale per row and per block of k. Each block's dot products are summed
// exactly in int32, then scaled into a float accumulator:
//   c[m][n] = w_scale[n] * sum_blocks x_scale[m][blk] * acc_int32[m][blk][n] + bias[n]
// The int8 products never pass through int16 saturation (no vpmaddubsw-style sequences).
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

inline size_t GemmI8PanelCount(size_t n) {
  return (n + kGemmI8PanelWidth - 1) / kGemmI8PanelWidth;
}
// Bytes of packed weights, and int32 entries of the per-block accumulator starts.
size_t PackedGemmI8WeightsSize(size_t n, size_t k);
size_t GemmI8BlockStartsSize(size_t n, size_t k, size_t block);

// Packs Wq [n x k] int8 (row stride k) for blocks of `block` values of k (a multiple of 4):
// panel p, group g of 4 k-values holds 64 features x 4 bytes, zero-padded past n and k.
// block_starts[(p * blocks + b) * 64 + j] = -128 x the sum of feature 64p + j's weights in
// block b: the x86 VNNI kernel multiplies activations offset by +128 (unsigned), and starts each
// block's int32 accumulator here to take the offset's products back off.
void PackGemmI8Weights(const int8_t* wq, size_t n, size_t k, size_t block, int8_t* packed,
                       int32_t* block_starts);

struct GemmI8WeightsView {
  const int8_t* panels;
  const int32_t* block_starts;
  const float* scales;  // per output feature, padded with zeros to whole panels
  const float* bias;    // per output feature, padded to whole panels, or null
  size_t n;
  size_t k;
  size_t block;
};

// C rows [row_begin, row_end), panels [panel_begin, panel_end). Every element's arithmetic is
// the same whatever the split, so any split between threads gives bit-identical results.
// Each outlier then adds value * (w_int8[n][channel] * w_scale[n]) to its row, in float.
void GemmI8(const QuantizedRowsView& a, size_t row_begin, size_t row_end,
            const GemmI8WeightsView& w, size_t panel_begin, size_t panel_end, float* c,
            size_t ldc);

// The int8 dot-product path the dispatched kernel uses on this CPU, e.g. "avx512-vnni".
const char* GemmI8Path();

// The int8 projection kernels of the dispatched target (see ProjectionKernels).
std::vector<const ProjectionKernel*> I8ProjectionKernels();

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_GEMM_I8_H_
