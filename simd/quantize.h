// Dynamic int8 quantization of activations: symmetric, one scale per row and per block of k.
#ifndef EDGEATTN_SIMD_QUANTIZE_H_
#define EDGEATTN_SIMD_QUANTIZE_H_

#include <stddef.h>
#include <stdint.h>

namespace edgeattn {
namespace simd {

// Bytes of one quantized row: k rounded up to a whole group of 4 (the int8 dot-product width).
inline size_t QuantizedRowStride(size_t k) { return (k + 3) / 4 * 4; }
inline size_t QuantBlockCount(size_t k, size_t block) { return (k + block - 1) / block; }

// Activation outliers: a few channels of trained transformers run 10-100x larger than the
// rest. Left in a block, one of them sets the block's scale and flattens its neighbours to a few
// int8 steps. Values beyond kOutlierThreshold robust standard deviations of their row
// (sigma ~ 1.2533 * mean |x|, exact for a Gaussian) are therefore taken out of the int8 row
// (quantized as 0) and kept in float, up to kMaxOutliersPerRow per row (the largest); the GEMM
// adds their products with the dequantized weights. On Gaussian data (P(|z| > 6) = 2e-9) this
// never triggers.
inline constexpr size_t kMaxOutliersPerRow = 8;
inline constexpr float kOutlierThreshold = 6.0f;
// sqrt(pi / 2): a Gaussian's standard deviation over its mean absolute value.
inline constexpr float kSigmaPerMeanAbs = 1.2533141f;

// Per row: count[row] outliers at channel[row * kMaxOutliersPerRow + i] with float value
// value[row * kMaxOutliersPerRow + i]. A null `count` disables outlier extraction.
struct RowOutliers {
  uint32_t* count;
  uint32_t* channel;
  float* value;
};

// How QuantizeRowsI8 stores each int8 value q: as is, or as the unsigned byte q + 128 (q ^ 0x80).
// x86's vpdpbusd multiplies unsigned by signed bytes; its kernel reads the offset form, which
// the quantization writes at no extra cost, so that the kernel's inner loop broadcasts each
// activation word straight from memory (a load) instead of offsetting it first (a vector op on
// the ports the dot products need).
enum class QuantizedBytes {
  kSigned,
  kOffsetUnsigned,
};

// Activations from QuantizeRowsI8: rows QuantizedRowStride(k) bytes apart, and the float
// outliers taken out of them (outlier_count null: none).
struct QuantizedRowsView {
  const int8_t* q;
  const float* scales;  // [row][block]
  const uint32_t* outlier_count = nullptr;
  const uint32_t* outlier_channel = nullptr;
  const float* outlier_value = nullptr;
};

// For each of `rows` rows of x (row stride ldx) and each block of `block` values (block a
// multiple of 4; the last block may be shorter): scale = max|x| / 127 and
// q = round(x * (127 / max|x|)) in [-127, 127]; a block whose max|x| <= 1e-30 gets scale 0 and
// q = 0. q rows are
// QuantizedRowStride(k) bytes apart with zeros past k, each byte stored as `bytes` says (the
// zeros too); scales[row * blocks + b].
// Non-finite input gives a non-finite scale, so the block's products become NaN or inf (its bytes
// may then hold -128: NaN times the zero inverse; the row is NaN on every kernel).
void QuantizeRowsI8(const float* x, size_t ldx, size_t rows, size_t k, size_t block, int8_t* q,
                    float* scales, const RowOutliers& outliers, QuantizedBytes bytes);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_QUANTIZE_H_
