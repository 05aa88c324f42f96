// Numerically stable row softmax: y = exp(s*x - max(s*x)) / sum(...), scale s folded in.
#ifndef EDGEATTN_SIMD_SOFTMAX_H_
#define EDGEATTN_SIMD_SOFTMAX_H_

#include <stddef.h>

namespace edgeattn {
namespace simd {

// In place on `rows` rows of `cols` floats, `stride` floats apart; scale must be > 0.
// Defined results for non-finite input:
// - a row holding NaN or +inf becomes all NaN (NaN propagates, as in PyTorch);
// - a row that is all -inf (every position masked) becomes all 0 (PyTorch gives NaN);
// - -inf elsewhere gives 0 at that position; logits of any finite size (1e4, -1e30) are exact
//   up to rounding because the row maximum is subtracted before exp.
void SoftmaxRowsF32(float* x, size_t rows, size_t cols, size_t stride, float scale);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_SOFTMAX_H_
