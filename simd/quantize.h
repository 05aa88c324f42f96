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

// For each of `rows` rows of x (row stride ldx) and each block of `block` values (block a
// multiple of 4; the last block may be shorter): scale = max|x| / 127 and
// q = round(x * (127 / max|x|)) in [-127, 127]; a block whose max|x| <= 1e-30 gets scale 0 and
// q = 0. q rows are
// QuantizedRowStride(k) bytes apart with zeros past k; scales[row * blocks + b].
// Non-finite input gives a non-finite scale, so the block's products become NaN or inf.
void QuantizeRowsI8(const float* x, size_t ldx, size_t rows, size_t k, size_t block, int8_t* q,
                    float* scales);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_QUANTIZE_H_
