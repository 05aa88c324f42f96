// The forward pass: projections (fp32 or int8), per-head attention core, output projection.
#ifndef EDGEATTN_RUNTIME_MHA_FORWARD_H_
#define EDGEATTN_RUNTIME_MHA_FORWARD_H_

#include <cstddef>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/executor.hpp"
#include "runtime/attention_math.h"
#include "runtime/packed_projection.h"
#include "simd/attention.h"
#include "runtime/workspace.h"

namespace edgeattn {

struct MhaShape {
  std::size_t batch;
  std::size_t lq;
  std::size_t lk;
  std::size_t d_model;
  std::size_t heads;
  std::size_t kv_heads;

  std::size_t head_dim() const { return d_model / heads; }
  std::size_t kv_dim() const { return kv_heads * head_dim(); }
};

// A forward call's validated options (ForwardOptions, or a decode step's causal offset).
struct MhaOptions {
  bool causal = false;  // row i sees keys j <= i (+ the item's cached positions, decoding)
  const bool* key_padding = nullptr;  // [batch, lk], true = ignore
  const float* attn_mask = nullptr;   // [lq, lk], or [batch * heads, lq, lk] if mask_per_head
  bool mask_per_head = false;
  const std::size_t* query_lengths = nullptr;  // [batch] or null
  const std::size_t* key_lengths = nullptr;    // [batch] or null
  AttentionWeights weights_mode = AttentionWeights::kNone;
  float* weights = nullptr;
  // Rotary positions of the query rows [lq] and keys [lk]; null: causal_offset + row index.
  const std::size_t* positions = nullptr;
  const std::size_t* key_positions = nullptr;
};

// Packed keys and values kept across calls (a KV cache): the buffer of batch item b and key/value
// head g starts at keys + (b * kv_heads + g) * keys_stride (values likewise); positions
// [0, first[b]) of item b are stored already and the call appends its new positions after them
// (its query rows are those positions: causal attention is offset by first[b]). Each item has
// `slots` slots, position p in slot p % slots (a ring once positions reach slots: a windowed
// cache).
struct KvStore {
  void* keys;
  void* values;
  std::size_t keys_stride;  // bytes, in the layout of the operator's attention kernel
  std::size_t values_stride;
  const std::size_t* first;  // [batch], or null: every item starts at 0
  std::size_t slots;
  // Called once before the first slot is written, when the call can no longer leave the store
  // as it was (a ring's overwritten positions are gone even if the call then throws); or null.
  void (*before_writing)(void* context) = nullptr;
  void* before_writing_context = nullptr;

  std::size_t first_of(std::size_t b) const { return first != nullptr ? first[b] : 0; }
};

// Packed keys and values projected earlier and only read (a cross-attention memory), in the
// KvStore layout over its own items: batch item b of the call attends to memory item item(b),
// whose first lengths[item(b)] positions are valid.
struct KvMemory {
  const void* keys;
  const void* values;
  std::size_t keys_stride;
  std::size_t values_stride;
  std::size_t batch;           // memory items
  const std::size_t* lengths;  // [batch]
  const std::size_t* items;    // [the call's batch], or null: b, or 0 for a one-item memory

  std::size_t item(std::size_t b) const {
    return items != nullptr ? items[b] : batch == 1 ? 0 : b;
  }
};

// xq [batch, lq, d], xk and xv [batch, lk, d] -> y [batch, lq, d]. Shapes and options already
// validated. cache: null for a plain forward call (keys and values live in the workspace).
// y may alias xq: every input is read before y is first written.
void MhaForward(const MhaProjections& weights, const simd::AttentionKernel& attention,
                const StepMath& math, const MhaShape& shape, const MhaOptions& options, const float* xq,
                const float* xk, const float* xv, float* y, const KvStore* cache,
                Executor& executor, Workspace& workspace);

// Only the key and value projections of x [batch, lk, d] (valid rows per options.key_lengths),
// packed into cache (whose first[] are the positions they start at).
void MhaProjectKeysValues(const MhaProjections& weights, const simd::AttentionKernel& attention,
                          const StepMath& math, const MhaShape& shape, const MhaOptions& options, const float* x,
                          const KvStore& cache, Executor& executor, Workspace& workspace);

// xq [batch, lq, d] attends to keys and values projected earlier -> y [batch, lq, d]: the query
// and output projections only. shape.lk is the memory's length. y may alias xq.
void MhaAttendMemory(const MhaProjections& weights, const simd::AttentionKernel& attention,
                     const StepMath& math, const MhaShape& shape, const MhaOptions& options, const float* xq, float* y,
                     const KvMemory& memory, Executor& executor, Workspace& workspace);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_MHA_FORWARD_H_
