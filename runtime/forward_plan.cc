#include "runtime/forward_plan.h"

#include <cstdint>

#include "runtime/workspace.h"
#include "simd/attention.h"
#include "simd/qk_transforms.h"
#include "simd/quantize.h"

namespace edgeattn {
namespace {

// True when two inputs are the very same rows: the same buffer, the same length per batch item
// and the same valid rows in each. Only then may one input's quantized rows serve the other; a
// prefix view of a longer buffer, or the same buffer with other lengths, has other rows.
bool SameRows(const float* a, const BatchRows& a_rows, const float* b, const BatchRows& b_rows) {
  if (a != b || a_rows.length != b_rows.length) return false;
  for (std::size_t i = 0; i < a_rows.batch; ++i) {
    if (a_rows.valid(i) != b_rows.valid(i)) return false;
  }
  return true;
}

// Lays out int8 rows of `rows` activations of width d, with their scales and outliers.
ForwardPlan::QuantizedAt AddQuantized(WorkspaceLayout& layout, std::size_t rows, std::size_t d,
                                      std::size_t block) {
  const std::size_t outliers = rows * simd::kMaxOutliersPerRow;
  ForwardPlan::QuantizedAt at;
  at.q = layout.Add(DivCeil(rows * simd::QuantizedRowStride(d), sizeof(float)));
  at.scales = layout.Add(rows * simd::QuantBlockCount(d, block));
  at.count = layout.Add(rows);
  at.channel = layout.Add(outliers);
  at.value = layout.Add(outliers);
  return at;
}

}  // namespace

std::size_t PackedHeadStride(std::size_t bytes) {
  return DivCeil(bytes, kPackedHeadAlignment) * kPackedHeadAlignment;
}

ForwardPlan PlanForward(const ForwardCall& call, std::size_t workers) {
  const MhaShape& s = call.shape;
  const MhaOptions& o = call.options;
  const std::size_t dk = s.head_dim();
  // Keys and values from a memory were projected before: none to project or pack here.
  const std::size_t lk_projected = call.memory != nullptr ? 0 : s.lk;
  const std::size_t rows_q = s.batch * s.lq;
  const std::size_t rows_k = s.batch * lk_projected;
  const std::size_t kv_count = s.batch * s.kv_heads;
  ForwardPlan p;
  p.workers = workers;
  p.q_rows = {s.batch, s.lq, o.query_lengths};
  p.k_rows = {s.batch, lk_projected, o.key_lengths};
  const simd::ActivationType activations = call.weights.q.kernel().activations;
  p.quantize = simd::IsQuantized(activations);
  p.quantized_bytes = simd::QuantizedBytesOf(activations);
  p.block = call.weights.q.view().block;
  p.k_is_q = SameRows(call.xq, p.q_rows, call.xk, p.k_rows);
  p.v_is_q = SameRows(call.xq, p.q_rows, call.xv, p.k_rows);
  p.v_is_k = call.xv == call.xk;  // key and value always have the same shape and lengths
  const bool own_keys = call.cache == nullptr && call.memory == nullptr;
  p.values_in_place = own_keys && call.attention.values_as_rows;
  if (call.cache != nullptr) {
    p.keys_stride = call.cache->keys_stride;
    p.values_stride = call.cache->values_stride;
  } else if (call.memory != nullptr) {
    p.keys_stride = call.memory->keys_stride;
    p.values_stride = call.memory->values_stride;
  } else {
    p.keys_stride = PackedHeadStride(call.attention.keys_bytes(s.lk, dk));
    p.values_stride =
        p.values_in_place ? 0 : PackedHeadStride(call.attention.values_bytes(s.lk, dk));
  }
  p.scratch_size = call.attention.scratch_floats(dk);
  p.rotary_tables_size = 2 * simd::RotaryTableSize(call.math.rotary_dim);
  p.head_weights_size = s.lq * s.lk;
  p.query_chunks = DivCeil(s.lq, kQueryChunk);

  WorkspaceLayout layout;
  const bool averaged = o.weights_mode == AttentionWeights::kAveraged;
  p.at.q = layout.Add(rows_q * s.d_model);
  p.at.k = layout.Add(rows_k * s.kv_dim());
  // Read in place, the value rows end with what the core may read past the last.
  const std::size_t values_tail =
      p.values_in_place ? DivCeil(call.attention.values_bytes(0, dk), sizeof(float)) : 0;
  p.at.v = layout.Add(rows_k * s.kv_dim() + values_tail);
  p.at.concat = layout.Add(rows_q * s.d_model);
  p.at.keys = layout.Add(own_keys ? kv_count * p.keys_stride / sizeof(float) : 0);
  p.at.values = layout.Add(own_keys ? kv_count * p.values_stride / sizeof(float) : 0);
  p.at.scratch = layout.Add(workers * p.scratch_size);
  p.at.rotary_tables = layout.Add(workers * p.rotary_tables_size);
  p.at.key_padding = layout.Add(o.key_padding != nullptr ? rows_k : 0);
  p.at.head_weights = layout.Add(averaged ? s.batch * s.heads * p.head_weights_size : 0);
  if (p.quantize) {
    p.at.xq8 = AddQuantized(layout, rows_q, s.d_model, p.block);
    p.at.xk8 = AddQuantized(layout, p.k_is_q ? 0 : rows_k, s.d_model, p.block);
    p.at.xv8 = AddQuantized(layout, p.v_is_q || p.v_is_k ? 0 : rows_k, s.d_model, p.block);
    p.at.concat8 = AddQuantized(layout, rows_q, s.d_model, p.block);
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(float), "one float per counter");
    p.at.heads_done = layout.Add(s.batch * p.query_chunks);
  } else {
    p.at.xq8 = p.at.xk8 = p.at.xv8 = p.at.concat8 = {};
    p.at.heads_done = 0;
  }
  p.workspace = layout;
  return p;
}

ForwardBuffers PlaceBuffers(const ForwardPlan& plan, const ForwardCall& call, float* base) {
  const auto quantized = [&](const ForwardPlan::QuantizedAt& at) {
    return QuantizedRows{reinterpret_cast<std::int8_t*>(base + at.q), base + at.scales,
                         reinterpret_cast<std::uint32_t*>(base + at.count),
                         reinterpret_cast<std::uint32_t*>(base + at.channel), base + at.value};
  };
  const bool averaged = call.options.weights_mode == AttentionWeights::kAveraged;
  ForwardBuffers b;
  b.q = base + plan.at.q;
  b.k = base + plan.at.k;
  b.v = base + plan.at.v;
  b.concat = base + plan.at.concat;
  const auto bytes = [&](std::size_t at) { return reinterpret_cast<std::uint8_t*>(base + at); };
  b.keys = call.cache != nullptr ? static_cast<std::uint8_t*>(call.cache->keys)
                                 : bytes(plan.at.keys);
  b.values = call.cache != nullptr ? static_cast<std::uint8_t*>(call.cache->values)
                                   : bytes(plan.at.values);
  b.scratch = base + plan.at.scratch;
  b.rotary_tables = base + plan.at.rotary_tables;
  b.key_padding = base + plan.at.key_padding;
  b.head_weights = averaged ? base + plan.at.head_weights : call.options.weights;
  b.xq8 = quantized(plan.at.xq8);
  b.xk8 = plan.k_is_q ? b.xq8 : quantized(plan.at.xk8);
  b.xv8 = plan.v_is_q ? b.xq8 : plan.v_is_k ? b.xk8 : quantized(plan.at.xv8);
  b.concat8 = quantized(plan.at.concat8);
  b.heads_done = reinterpret_cast<std::atomic<std::uint32_t>*>(base + plan.at.heads_done);
  return b;
}

}  // namespace edgeattn
