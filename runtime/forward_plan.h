// What one forward call computes and where its buffers live: the call as the phases see it, and
// the plan derived from it once per call (row splits, which inputs share quantized rows, and the
// workspace layout in one place).
#ifndef EDGEATTN_RUNTIME_FORWARD_PLAN_H_
#define EDGEATTN_RUNTIME_FORWARD_PLAN_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/forward_jobs.h"
#include "runtime/mha_forward.h"
#include "runtime/workspace.h"

namespace edgeattn {

// The arguments of MhaForward, validated.
struct ForwardCall {
  const MhaProjections& weights;
  const simd::AttentionKernel& attention;
  const StepMath& math;
  const MhaShape& shape;
  const MhaOptions& options;
  const float* xq;
  const float* xk;
  const float* xv;
  float* y;
  const KvStore* cache;  // null: keys and values live in the workspace
  // Keys and values projected earlier (then xk and xv are null and cache is null).
  const KvMemory* memory = nullptr;
};

// Query rows per attention work item: large enough that an item amortises streaming its head's
// packed keys and values, small enough that 2-8 workers get balanced shares of short sequences.
inline constexpr std::size_t kQueryChunk = 64;

struct ForwardPlan {
  // The executor's workers, read once per call: the per-worker scratch is sized for them, and
  // an executor whose count changed since would otherwise run workers past it.
  std::size_t workers;
  BatchRows q_rows, k_rows;
  bool quantize;                       // the projections read int8 rows
  std::size_t block;                   // values per activation scale (quantize)
  simd::QuantizedBytes quantized_bytes;  // their stored form, as the kernel reads them
  bool k_is_q, v_is_q, v_is_k;         // inputs that are the same rows share quantized rows
  std::size_t keys_stride, values_stride;  // bytes per (batch item, key/value head)
  // The core reads the call's own values where the projection wrote them (a values_as_rows
  // kernel, no cache, no memory): no packed values then.
  bool values_in_place;
  std::size_t scratch_size;            // floats of attention scratch per worker
  std::size_t rotary_tables_size;      // floats of rotary cos and sin tables per worker
  std::size_t head_weights_size;       // floats of one head's attention weights [Lq, Lk]
  std::size_t query_chunks;            // attention items per (batch item, head)

  // Offsets (in floats) of every workspace buffer; int8 rows and uint32 outlier lists take as
  // many floats as their bytes need.
  struct QuantizedAt {
    std::size_t q, scales, count, channel, value;
  };
  struct Offsets {
    std::size_t q, k, v, concat, keys, values, scratch, rotary_tables, key_padding, head_weights;
    QuantizedAt xq8, xk8, xv8, concat8;
    std::size_t heads_done;
  } at;
  WorkspaceLayout workspace;  // its total() floats hold the buffers at the offsets above
};

ForwardPlan PlanForward(const ForwardCall& call, std::size_t workers);

// Each (batch item, key/value head)'s packed keys and values start on a cache line, in the
// workspace and in a KvCache alike.
inline constexpr std::size_t kPackedHeadAlignment = 64;
std::size_t PackedHeadStride(std::size_t bytes);

// The plan's buffers in one workspace reservation (keys and values in the cache, if any).
struct ForwardBuffers {
  float *q, *k, *v, *concat, *scratch, *rotary_tables, *key_padding;
  std::uint8_t *keys, *values;  // in the attention kernel's layout
  float* head_weights;  // per-head weights: the caller's buffer, or the workspace when averaged
  QuantizedRows xq8, xk8, xv8, concat8;
  // int8: per (batch item, query chunk), the heads whose attention is done (Attend).
  std::atomic<std::uint32_t>* heads_done;
};

ForwardBuffers PlaceBuffers(const ForwardPlan& plan, const ForwardCall& call, float* base);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_FORWARD_PLAN_H_
