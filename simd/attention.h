// Attention core for one head: O = softmax(Q K^T * scale) V, computed over key tiles with a
// running maximum and sum (online softmax), so that no Lq x Lk score matrix is ever stored:
// scratch memory depends on dk only, and the packed keys and values grow linearly with Lk.
#ifndef EDGEATTN_SIMD_ATTENTION_H_
#define EDGEATTN_SIMD_ATTENTION_H_

#include <stddef.h>

#include "simd/attention_mask.h"

namespace edgeattn {
namespace simd {

// Keys scored per online-softmax step: the score tile (up to 8 rows x 256) is 8 KiB, so it
// stays in L1 between the Q K^T and P V passes, and the running rescale happens once per
// 256 keys.
inline constexpr size_t kAttentionKeyTile = 256;

// Query rows processed together: at most the tile kernel's 8 rows. Scratch is sized for this.
inline constexpr size_t kAttentionMaxBlockRows = 8;

// Floats of one head's packed keys and values for lk positions. Values are rows of dk floats
// with no padding between them (a head of width 4 takes 4 floats per position, not a vector's
// width), plus a tail so that a whole-vector load of the last row stays inside the buffer.
size_t AttentionPackedKeysSize(size_t lk, size_t dk);
size_t AttentionPackedValuesSize(size_t lk, size_t dk);

// Packs keys K [count x dk] (row stride ldk) and values V (row stride ldv) of one head as key
// positions [first, first + count) of its packed buffers, so that a KV cache can append to
// them. Scores are Q K^T, a GEMM with K in the place of a weight matrix, so keys take the
// weight panel layout (PackGemmWeights): each 64-key panel is dk contiguous rows of 64, which
// the tile kernel streams without the cache-set conflicts that a long-strided K^T would cause;
// lanes of the last panel past the last key are zeroed. Values become rows of dk floats; the
// tail after the last row is zeroed. Buffers hold the sizes above for the final length.
void PackAttentionKeysValues(const float* k, size_t ldk, const float* v, size_t ldv,
                             size_t first, size_t count, size_t dk, float* keys, float* values);

// Floats of per-thread scratch the core needs for a head of width dk (64-byte aligned).
size_t AttentionScratchSize(size_t dk);

struct AttentionHeadArgs {
  const float* q;       // [lq x dk] this head's queries, row stride ldq
  size_t ldq;
  const float* keys;    // from PackAttentionKeysValues
  const float* values;  // from PackAttentionKeysValues
  size_t lk;
  size_t dk;
  float scale;          // applied to Q K^T, usually 1 / sqrt(dk)
  float* out;           // [lq x dk] this head's columns of the concat buffer, row stride ldo
  size_t ldo;

  AttentionMask mask{};  // everything visible by default
  // Optional: the softmax probabilities [lq x lk], row stride ldw (need_weights).
  float* weights = nullptr;
  size_t ldw = 0;
};

// Computes query rows [q_begin, q_end) of one head. A row whose scores hold NaN or +inf is
// written as NaN; a row whose every key is masked is written as zeros (its weights too). Key
// tiles that the masks remove for every row of a block cost nothing: with `causal`, the upper
// triangle is never computed. Rows are independent: any split of the query rows between threads gives
// bit-identical results.
void AttentionHeadF32(const AttentionHeadArgs& args, size_t q_begin, size_t q_end,
                      float* scratch);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_H_
