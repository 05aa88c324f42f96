// Which keys a query row of one head may see, and what is added to its scores: every masking
// rule of the attention core in one type. The core asks it which keys a block of rows can see at
// all (so that tiles outside cost nothing), whether a whole tile is masked away, and applies it
// to a tile of scores (attention_mask-inl.h).
#ifndef EDGEATTN_SIMD_ATTENTION_MASK_H_
#define EDGEATTN_SIMD_ATTENTION_MASK_H_

#include <stddef.h>

namespace edgeattn {
namespace simd {

struct AttentionMask {
  // [lq x lk] added to the scaled scores, row stride ld_additive; -inf removes a key.
  const float* additive = nullptr;
  size_t ld_additive = 0;
  // [lk] added to every row's scores (key padding as 0 / -inf).
  const float* key_bias = nullptr;
  // Row i sees keys j <= i + causal_offset only (a decode step's rows follow the cache).
  bool causal = false;
  size_t causal_offset = 0;

  // Keys [0, VisibleEnd(last_row, lk)) hold every key rows up to last_row may see.
  size_t VisibleEnd(size_t last_row, size_t lk) const {
    if (!causal) return lk;
    const size_t end = last_row + causal_offset + 1;
    return end < lk ? end : lk;
  }
};

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_MASK_H_
