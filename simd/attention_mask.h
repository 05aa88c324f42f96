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
  // [lk] 0 for a key, -inf for a padded one, which no row sees: its score becomes -inf, NaN or
  // not (as under causal and the window; an additive -inf leaves a NaN score NaN).
  const float* key_padding = nullptr;
  // Row i is at position i + causal_offset (a decode step's rows follow the cache); with
  // causal it sees keys at positions j <= its own only.
  bool causal = false;
  size_t causal_offset = 0;
  // > 0: row i sees keys at positions j with |position(i) - j| < window only.
  size_t window = 0;
  // > 0: the keys are a ring of `ring` slots (a windowed KV cache that has wrapped): slot j holds
  // the latest position p <= ring_last with p % ring == j. 0: key j is at position j.
  size_t ring = 0;
  size_t ring_last = 0;

  size_t RowPosition(size_t row) const { return row + causal_offset; }
  size_t KeyPosition(size_t key) const {
    return ring == 0 ? key : key + (ring_last - key) / ring * ring;
  }
  bool Sees(size_t row, size_t key) const {
    const size_t i = RowPosition(row);
    const size_t j = KeyPosition(key);
    if (causal && j > i) return false;
    return window == 0 || (j <= i ? i - j : j - i) < window;
  }
  // Keys [VisibleBegin(first_row), VisibleEnd(last_row, lk)) hold every key that rows
  // first_row..last_row may see (a ring's slots are not in position order: all of them).
  size_t VisibleBegin(size_t first_row) const {
    if (window == 0 || ring != 0) return 0;
    const size_t i = RowPosition(first_row);
    return i >= window ? i - window + 1 : 0;
  }
  size_t VisibleEnd(size_t last_row, size_t lk) const {
    if (ring != 0) return lk;
    size_t end = lk;
    if (window != 0 && RowPosition(last_row) + window < lk) end = RowPosition(last_row) + window;
    if (causal && RowPosition(last_row) + 1 < end) end = RowPosition(last_row) + 1;
    return end;
  }
};

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_MASK_H_
