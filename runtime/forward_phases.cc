#include "runtime/forward_phases.h"

#include <atomic>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "runtime/parallel_for_items.h"
#include "simd/attention.h"
#include "simd/qk_transforms.h"

namespace edgeattn {
namespace {

// Calls fn(item, worker) for the pass's items on its executor, over the workers it was planned for.
template <class Fn>
void ForEachItem(const ForwardPass& pass, std::size_t items, const Fn& fn) {
  ParallelForItems(pass.executor, pass.plan.workers, items, fn);
}

}  // namespace

void QuantizeInputs(const ForwardPass& pass) {
  const ForwardPlan& p = pass.plan;
  const ForwardBuffers& b = pass.buffers;
  const ForwardCall& c = pass.call;
  const std::size_t d = c.shape.d_model;
  const QuantizeJob inputs[] = {
      {c.xq, p.q_rows, b.xq8, d, p.block, p.quantized_bytes},
      {p.k_is_q ? nullptr : c.xk, p.k_rows, b.xk8, d, p.block, p.quantized_bytes},
      {p.v_is_q || p.v_is_k ? nullptr : c.xv, p.k_rows, b.xv8, d, p.block, p.quantized_bytes}};
  RunJobs(pass.executor, pass.plan.workers, inputs);
}

namespace {

// What a projection kernel reads of activation rows x (row stride d): the rows themselves, or
// their quantized form when the plan quantizes.
simd::ProjectionInput Input(const ForwardPlan& plan, const float* x, std::size_t d,
                            const QuantizedRows& quantized) {
  if (plan.quantize) return {nullptr, 0, quantized.view()};
  return {x, d, {}};
}

}  // namespace

void ProjectInputs(const ForwardPass& pass) {
  const ForwardPlan& p = pass.plan;
  const ForwardBuffers& b = pass.buffers;
  const ForwardCall& c = pass.call;
  const MhaProjections& w = c.weights;
  const std::size_t d = c.shape.d_model;
  const std::size_t kvd = c.shape.kv_dim();
  const GemmJob projections[] = {{Input(p, c.xq, d, b.xq8), p.q_rows, &w.q, b.q, d, false},
                                 {Input(p, c.xk, d, b.xk8), p.k_rows, &w.k, b.k, kvd, false},
                                 {Input(p, c.xv, d, b.xv8), p.k_rows, &w.v, b.v, kvd, false}};
  RunJobs(pass.executor, pass.plan.workers, projections);
}

namespace {

// The first position of batch item b's rows: after the cache's, or 0.
std::size_t FirstPosition(const ForwardPass& pass, std::size_t b) {
  return pass.call.cache != nullptr ? pass.call.cache->first_of(b) : 0;
}

// Normalises and rotates the heads of one row at `position` (tables: this worker's).
void NormAndRotateRow(const StepMath& m, float* row, std::size_t heads, std::size_t dk,
                      const std::vector<float>& norm_weight, std::size_t position,
                      float* tables) {
  simd::HeadTransform t;
  if (!norm_weight.empty()) {
    t.norm_weight = norm_weight.data();
    t.norm_eps = m.norm_eps;
  }
  if (m.rotary_dim != 0) {
    t.rotary_dim = m.rotary_dim;
    t.interleaved = m.interleaved;
    t.cos = tables;
    t.sin = tables + simd::RotaryTableSize(m.rotary_dim);
    // As PyTorch's linear scaling: the position as float, divided in float.
    const float scaled = static_cast<float>(position) / m.rotary_scaling;
    simd::RotaryTables(scaled, m.inv_freq.data(), m.rotary_dim, m.interleaved, tables,
                       tables + simd::RotaryTableSize(m.rotary_dim));
  }
  simd::TransformHeads(row, heads, dk, t);
}

}  // namespace

void NormAndRotateHeads(const ForwardPass& pass) {
  const ForwardPlan& p = pass.plan;
  const ForwardBuffers& b = pass.buffers;
  const MhaShape& s = pass.call.shape;
  const MhaOptions& o = pass.call.options;
  const StepMath& m = pass.call.math;
  const std::size_t dk = s.head_dim();
  // Items: the query rows' chunks, then the key rows' (of the inputs the call projected).
  const std::size_t q_chunks = pass.call.xq != nullptr ? p.q_rows.chunks() : 0;
  const std::size_t k_chunks = pass.call.xk != nullptr ? p.k_rows.chunks() : 0;
  ForEachItem(pass, q_chunks + k_chunks, [&](std::size_t item, std::size_t worker) {
    const bool query = item < q_chunks;
    const BatchRows& rows = query ? p.q_rows : p.k_rows;
    const BatchRows::Range r = rows.chunk(query ? item : item - q_chunks);
    const std::size_t* positions = query ? o.positions : o.key_positions;
    float* tables = b.rotary_tables + worker * p.rotary_tables_size;
    for (std::size_t row = r.begin; row < r.valid_end; ++row) {
      const std::size_t index = row % rows.length;
      const std::size_t first = FirstPosition(pass, row / rows.length);
      const std::size_t position = positions != nullptr ? positions[index] : first + index;
      if (query) {
        NormAndRotateRow(m, b.q + row * s.d_model, s.heads, dk, m.q_norm_weight, position,
                         tables);
      } else {
        NormAndRotateRow(m, b.k + row * s.kv_dim(), s.kv_heads, dk, m.k_norm_weight, position,
                         tables);
      }
    }
  });
}

namespace {

// Where key/value head g of batch item b starts in the projected k and v rows.
std::size_t ProjectedHeadOffset(const MhaShape& s, std::size_t b, std::size_t g) {
  return b * s.lk * s.kv_dim() + g * s.head_dim();
}

}  // namespace

void PackKeysValues(const ForwardPass& pass) {
  const ForwardPlan& p = pass.plan;
  const ForwardBuffers& b = pass.buffers;
  const MhaShape& s = pass.call.shape;
  const bool* padding = pass.call.options.key_padding;
  if (padding != nullptr) {
    for (std::size_t i = 0; i < s.batch * s.lk; ++i) {
      b.key_padding[i] = padding[i] ? -std::numeric_limits<float>::infinity() : 0.0f;
    }
  }
  const KvStore* cache = pass.call.cache;
  const std::size_t slots = cache != nullptr ? cache->slots : s.lk;
  const std::size_t kvd = s.kv_dim();
  const std::size_t dk = s.head_dim();
  ForEachItem(pass, s.batch * s.kv_heads, [&](std::size_t bg, std::size_t) {
    const std::size_t item = bg / s.kv_heads;
    const std::size_t first = FirstPosition(pass, item);
    const std::size_t offset = ProjectedHeadOffset(s, item, bg % s.kv_heads);
    const std::size_t count = p.k_rows.valid(item);
    const std::size_t stored = Min(first + count, slots);
    // Position first + t goes to slot (first + t) % slots: at most two runs of slots.
    const std::size_t slot = first % slots;
    const std::size_t run = Min(count, slots - slot);
    const auto pack = [&](std::size_t t0, std::size_t slot0, std::size_t n) {
      const std::size_t at = offset + t0 * kvd;
      std::uint8_t* values = p.values_in_place ? nullptr : b.values + bg * p.values_stride;
      pass.call.attention.pack(b.k + at, kvd, b.v + at, kvd, slot0, n, stored, dk,
                               b.keys + bg * p.keys_stride, values);
    };
    pack(0, slot, run);
    if (run < count) pack(run, 0, count - run);
  });
}

namespace {

// The packed keys and values one (batch item, key/value head g) attends to: the call's own (in
// the workspace, or appended to a cache after `cached` positions) or a memory's item.
struct HeadKeys {
  const std::uint8_t* keys;
  const void* values;
  std::size_t ldv;     // values in place: their row stride in floats (0: packed)
  std::size_t cached;  // positions before the call's own (causal offset)
  std::size_t length;  // positions attended to
  std::size_t slots;   // of a cache's ring (position p in slot p % slots), or length
};

HeadKeys KeysOf(const ForwardPass& pass, std::size_t b, std::size_t g) {
  const ForwardPlan& p = pass.plan;
  const std::size_t kv_heads = pass.call.shape.kv_heads;
  if (const KvMemory* memory = pass.call.memory) {
    const std::size_t m = memory->item(b);
    const std::size_t mg = m * kv_heads + g;
    return {static_cast<const std::uint8_t*>(memory->keys) + mg * p.keys_stride,
            static_cast<const std::uint8_t*>(memory->values) + mg * p.values_stride,
            0,
            0,
            memory->lengths[m],
            memory->lengths[m]};
  }
  const std::size_t bg = b * kv_heads + g;
  const std::size_t cached = FirstPosition(pass, b);
  const std::size_t length = cached + p.k_rows.valid(b);
  const std::size_t slots = pass.call.cache != nullptr ? pass.call.cache->slots : length;
  const std::uint8_t* keys = pass.buffers.keys + bg * p.keys_stride;
  if (p.values_in_place) {
    const float* v = pass.buffers.v + ProjectedHeadOffset(pass.call.shape, b, g);
    return {keys, v, pass.call.shape.kv_dim(), cached, length, slots};
  }
  return {keys, pass.buffers.values + bg * p.values_stride, 0, cached, length, slots};
}

// The attention core's view of one (batch item b, head bh) of the call.
simd::AttentionHeadArgs HeadArgs(const ForwardPass& pass, std::size_t b, std::size_t bh) {
  const ForwardPlan& p = pass.plan;
  const ForwardBuffers& buf = pass.buffers;
  const MhaShape& s = pass.call.shape;
  const MhaOptions& o = pass.call.options;
  const std::size_t dk = s.head_dim();
  const StepMath& m = pass.call.math;
  const HeadKeys keys = KeysOf(pass, b, bh % s.heads / (s.heads / s.kv_heads));
  const std::size_t offset = b * s.lq * s.d_model + bh % s.heads * dk;
  simd::AttentionHeadArgs args{buf.q + offset,
                               s.d_model,
                               keys.keys,
                               keys.values,
                               Min(keys.length, keys.slots),
                               dk,
                               m.scale,
                               buf.concat + offset,
                               s.d_model};
  args.ldv = keys.ldv;
  args.softcap = m.softcap;
  if (!m.sinks.empty()) args.sink = m.sinks[bh % s.heads];
  // A cross-attention memory's frames have no positions in the decoder's sequence.
  args.mask.window = pass.call.memory != nullptr ? 0 : m.window;
  if (keys.length > keys.slots) {  // the cache's ring has wrapped
    args.mask.ring = keys.slots;
    args.mask.ring_last = keys.length - 1;
  }
  if (o.attn_mask != nullptr) {
    args.mask.additive = o.attn_mask + (o.mask_per_head ? bh * p.head_weights_size : 0);
    args.mask.ld_additive = s.lk;
  }
  if (o.key_padding != nullptr) args.mask.key_padding = buf.key_padding + b * s.lk;
  args.mask.causal = o.causal;
  args.mask.causal_offset = keys.cached;
  if (buf.head_weights != nullptr) {
    args.weights = buf.head_weights + bh * p.head_weights_size;
    args.ldw = s.lk;
  }
  return args;
}

// Weights of query rows [q0, q1) of one head: zeros for the keys past the item's length
// (`keys` valid) and for the rows past its length (from q_valid on).
void ZeroWeightsPastLengths(float* weights, std::size_t ldw, std::size_t q0, std::size_t q1,
                            std::size_t q_valid, std::size_t keys) {
  for (std::size_t i = q0; i < q1; ++i) {
    const std::size_t from = i < q_valid ? keys : 0;
    std::memset(weights + i * ldw + from, 0, (ldw - from) * sizeof(float));
  }
}

}  // namespace

namespace {

// int8: the last head of a (batch item b, query chunk) to finish quantizes the chunk's concat
// rows [q0, q_valid), so that they need no parallel phase of their own before the output
// projection. acq_rel: that head sees the rows every other head wrote.
void QuantizeConcatAfterLastHead(const ForwardPass& pass, std::size_t b, std::size_t chunk,
                                 std::size_t q0, std::size_t q_valid) {
  const ForwardPlan& p = pass.plan;
  const ForwardBuffers& buf = pass.buffers;
  const MhaShape& s = pass.call.shape;
  std::atomic<std::uint32_t>& done = buf.heads_done[b * p.query_chunks + chunk];
  if (done.fetch_add(1, std::memory_order_acq_rel) + 1 != s.heads || q0 >= q_valid) return;
  const std::size_t d = s.d_model;
  const std::size_t row0 = b * s.lq + q0;
  simd::QuantizeRowsI8(buf.concat + row0 * d, d, q_valid - q0, d, p.block,
                       buf.concat8.q + row0 * simd::QuantizedRowStride(d),
                       buf.concat8.scales + row0 * simd::QuantBlockCount(d, p.block),
                       buf.concat8.outliers(row0), p.quantized_bytes);
}

// Query chunk `chunk` of head bh (batch item b = bh / heads).
void AttendChunk(const ForwardPass& pass, std::size_t bh, std::size_t chunk, std::size_t worker) {
  const ForwardPlan& p = pass.plan;
  const MhaShape& s = pass.call.shape;
  const std::size_t b = bh / s.heads;
  const std::size_t q0 = chunk * kQueryChunk;
  const std::size_t q1 = Min(q0 + kQueryChunk, s.lq);
  const std::size_t q_valid = Min(q1, p.q_rows.valid(b));
  const simd::AttentionHeadArgs args = HeadArgs(pass, b, bh);
  if (q0 < q_valid) {
    pass.call.attention.run(args, q0, q_valid, pass.buffers.scratch + worker * p.scratch_size);
  }
  if (args.weights != nullptr) {
    ZeroWeightsPastLengths(args.weights, args.ldw, q0, q1, q_valid, p.k_rows.valid(b));
  }
  if (p.quantize) QuantizeConcatAfterLastHead(pass, b, chunk, q0, q_valid);
}

// Whether a call's query heads run per key/value head (AttendQueryGroups): one query position,
// grouped-query heads, and nothing per head (mask rows, sinks, weights) or moving with a row's
// position (a window).
bool GroupsQueryHeads(const ForwardPass& pass) {
  const MhaShape& s = pass.call.shape;
  return s.lq == 1 && s.heads > s.kv_heads && pass.call.options.attn_mask == nullptr &&
         pass.buffers.head_weights == nullptr && pass.call.math.sinks.empty() &&
         pass.call.math.window == 0;
}

// Whether a group's heads can be one call's rows. The core places row i at position
// causal_offset + i: the keys of row 0 for every row where row 0 sees them all (a causal mask
// with keys past the query's position cuts row i at key i instead: a Forward of one query row
// against more keys), and no ring, whose bounds move with the row.
bool GroupRunsAsRows(const simd::AttentionHeadArgs& args) {
  return args.mask.ring == 0 && (!args.mask.causal || args.lk <= args.mask.causal_offset + 1);
}

// Heads [h0, h1) of a one-position call's (a single query chunk) query heads that share
// key/value head g of batch item b. Where they can, they run as one call's rows: their queries
// and concat columns lie side by side, dk apart, so the keys and values are read once for them
// and the core's row tiles are filled instead of one row each; otherwise head by head.
void AttendQueryGroup(const ForwardPass& pass, std::size_t b, std::size_t g, std::size_t h0,
                      std::size_t h1, std::size_t worker) {
  const ForwardPlan& p = pass.plan;
  const MhaShape& s = pass.call.shape;
  const std::size_t bh0 = b * s.heads + g * (s.heads / s.kv_heads) + h0;
  simd::AttentionHeadArgs args = HeadArgs(pass, b, bh0);
  if (!GroupRunsAsRows(args)) {
    for (std::size_t i = 0; i < h1 - h0; ++i) AttendChunk(pass, bh0 + i, 0, worker);
    return;
  }
  args.ldq = args.dk;
  args.ldo = args.dk;
  const std::size_t valid = Min(p.q_rows.valid(b), std::size_t{1});  // padded items may have none
  if (valid != 0) {
    pass.call.attention.run(args, 0, h1 - h0, pass.buffers.scratch + worker * p.scratch_size);
  }
  if (p.quantize) {
    for (std::size_t i = h0; i < h1; ++i) QuantizeConcatAfterLastHead(pass, b, 0, 0, valid);
  }
}

// A one-position call of grouped-query heads (a decode step): items of (batch item, key/value
// head), each group's heads split in as many parts as it takes to give every worker an item.
void AttendQueryGroups(const ForwardPass& pass) {
  const MhaShape& s = pass.call.shape;
  const std::size_t group = s.heads / s.kv_heads, groups = s.batch * s.kv_heads;
  const std::size_t heads_per_part = DivCeil(group, DivCeil(pass.plan.workers, groups));
  const std::size_t parts = DivCeil(group, heads_per_part);  // none left empty
  ForEachItem(pass, groups * parts, [&](std::size_t item, std::size_t worker) {
    const std::size_t bg = item / parts, h0 = item % parts * heads_per_part;
    AttendQueryGroup(pass, bg / s.kv_heads, bg % s.kv_heads, h0, Min(h0 + heads_per_part, group),
                     worker);
  });
}

}  // namespace

void Attend(const ForwardPass& pass) {
  const ForwardPlan& p = pass.plan;
  const MhaShape& s = pass.call.shape;
  if (p.quantize) {
    for (std::size_t i = 0; i < s.batch * p.query_chunks; ++i) {
      new (pass.buffers.heads_done + i) std::atomic<std::uint32_t>(0);
    }
  }
  if (GroupsQueryHeads(pass)) {
    AttendQueryGroups(pass);
    return;
  }
  ForEachItem(pass, s.batch * s.heads * p.query_chunks, [&](std::size_t item, std::size_t worker) {
    AttendChunk(pass, item / p.query_chunks, item % p.query_chunks, worker);
  });
}

void AverageWeights(const ForwardPass& pass) {
  const ForwardPlan& p = pass.plan;
  const MhaShape& s = pass.call.shape;
  float* averaged = pass.call.options.weights;
  const float* per_head = pass.buffers.head_weights;
  ForEachItem(pass, s.batch * p.query_chunks, [&](std::size_t item, std::size_t) {
    const std::size_t b = item / p.query_chunks;
    const std::size_t q0 = item % p.query_chunks * kQueryChunk;
    const std::size_t q1 = Min(q0 + kQueryChunk, s.lq);
    const float heads = static_cast<float>(s.heads);
    for (std::size_t i = q0; i < q1; ++i) {
      float* out = averaged + (b * s.lq + i) * s.lk;
      const float* in = per_head + (b * s.heads * s.lq + i) * s.lk;
      for (std::size_t j = 0; j < s.lk; ++j) out[j] = in[j];
      for (std::size_t h = 1; h < s.heads; ++h) {
        const float* in_h = in + h * p.head_weights_size;
        for (std::size_t j = 0; j < s.lk; ++j) out[j] += in_h[j];
      }
      for (std::size_t j = 0; j < s.lk; ++j) out[j] /= heads;
    }
  });
}

void ProjectOutput(const ForwardPass& pass) {
  const ForwardPlan& p = pass.plan;
  const ForwardBuffers& b = pass.buffers;
  const ForwardCall& c = pass.call;
  const std::size_t d = c.shape.d_model;
  const bool padded = c.options.query_lengths != nullptr;
  const GemmJob output[] = {
      {Input(p, b.concat, d, b.concat8), p.q_rows, &c.weights.out, c.y, d, padded}};
  RunJobs(pass.executor, pass.plan.workers, output);
}

}  // namespace edgeattn
