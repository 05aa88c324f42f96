// CrossAttentionMemory, and the operator's calls that fill it (ProjectMemory) and read it
// (DecodeCross).
#include <algorithm>
#include <string>

#include "edgeattn/edgeattn.hpp"
#include "runtime/context_state.h"
#include "runtime/cross_attention_memory_state.h"
#include "runtime/exclusive_use.h"
#include "runtime/forward_plan.h"
#include "runtime/kv_cache_state.h"
#include "runtime/mha_validation.h"
#include "runtime/multihead_attention_impl.h"
#include "runtime/shared_use.h"
#include "runtime/text_checks.h"

namespace edgeattn {
namespace {

const char kMemoryBusy[] =
    "memory: in use by another call on another thread (ProjectMemory needs the memory to "
    "itself; DecodeCross calls may share it)";

CrossAttentionMemory::State& LiveMemory(const std::unique_ptr<CrossAttentionMemory::State>& s) {
  if (s == nullptr) throw Error("CrossAttentionMemory: moved-from (it holds no memory)");
  return *s;
}

const MultiheadAttention::Impl& LiveOperator(const std::unique_ptr<MultiheadAttention::Impl>& i) {
  if (i == nullptr) throw Error("MultiheadAttention: moved-from (it holds no operator)");
  return *i;
}

// A memory holds one operator's projections: another layer's (even of the same shape and
// kernel) would give silently wrong attention.
void CheckOwner(const CrossAttentionMemory::State& memory, const MultiheadAttention::Impl& impl) {
  if (memory.owner != impl.id) {
    throw Error(
        "memory: made for another operator (a CrossAttentionMemory holds the keys and "
        "values of the operator it was made with; make one per cross-attention layer)");
  }
}

// Checks DecodeCross's arguments; returns the step's shape (lk = the memory's length).
MhaShape ValidateCrossStep(const Config& config, const ConstTensor& query, const Tensor& out,
                           const Span<const std::size_t>& items,
                           const CrossAttentionMemory::State& memory) {
  if (memory.length == 0) {
    throw Error("memory: holds no encoder output yet (call ProjectMemory first)");
  }
  ValidateTensor("query", query, config.d_model);
  ValidateTensor("out", out, config.d_model);
  if (out.batch != query.batch || out.length != query.length) {
    throw Error("out: expected shape [" + Str(query.batch) + ", " + Str(query.length) + ", " +
                Str(config.d_model) + "] like query, got [" + Str(out.batch) + ", " +
                Str(out.length) + ", " + Str(out.features) + "]");
  }
  if (items.data == nullptr && items.size != 0) {
    throw Error("memory_items: got a null pointer with size " + Str(items.size));
  }
  if (items.data != nullptr) {
    if (items.size != query.batch) {
      throw Error("memory_items: expected " + Str(query.batch) + " values [query.batch], got " +
                  Str(items.size));
    }
    for (std::size_t b = 0; b < items.size; ++b) {
      if (items.data[b] >= memory.batch) {
        throw Error("memory_items[" + Str(b) + "]: expected a memory item in [0, " +
                    Str(memory.batch - 1) + "], got " + Str(items.data[b]));
      }
    }
    // The attention phase reads the items; the output is written after it, but a buffer that
    // is both is a caller's mistake worth naming.
    if (Overlap(out.data, out.batch * out.length * out.features * sizeof(float), items.data,
                items.size * sizeof(std::size_t))) {
      throw Error("out: expected a buffer apart from memory_items, got one that overlaps it");
    }
  } else if (query.batch != memory.batch && memory.batch != 1) {
    throw Error("query.batch: expected the memory's batch " + Str(memory.batch) +
                " (or memory_items naming an item per query item), got " + Str(query.batch));
  }
  return {query.batch,    query.length,     memory.length,
          config.d_model, config.num_heads, KvHeads(config)};
}

}  // namespace

CrossAttentionMemory::CrossAttentionMemory(const MultiheadAttention& mha, std::size_t max_length,
                                           std::size_t batch) {
  const MultiheadAttention::Impl& impl = LiveOperator(mha.impl_);
  CheckCapacity(max_length, batch);
  auto s = std::make_unique<State>();
  s->owner = impl.id;
  s->batch = batch;
  s->max_length = max_length;
  s->kv_heads = KvHeads(impl.config);
  s->lengths.assign(batch, 0);
  s->attention = impl.attention;
  const std::size_t dk = impl.config.d_model / impl.config.num_heads;
  s->keys_stride = PackedHeadStride(s->attention->keys_bytes(max_length, dk));
  s->values_stride = PackedHeadStride(s->attention->values_bytes(max_length, dk));
  s->keys = ZeroedBytes(batch * s->kv_heads * s->keys_stride, "the cross-attention memory's keys");
  s->values =
      ZeroedBytes(batch * s->kv_heads * s->values_stride, "the cross-attention memory's values");
  state_ = std::move(s);
}

CrossAttentionMemory::~CrossAttentionMemory() = default;
CrossAttentionMemory::CrossAttentionMemory(CrossAttentionMemory&&) noexcept = default;
CrossAttentionMemory& CrossAttentionMemory::operator=(CrossAttentionMemory&&) noexcept = default;

std::size_t CrossAttentionMemory::length() const { return LiveMemory(state_).length; }

std::size_t CrossAttentionMemory::length(std::size_t item) const {
  const State& s = LiveMemory(state_);
  if (item >= s.batch) {
    throw Error("item: expected a memory item in [0, " + Str(s.batch - 1) + "], got " + Str(item));
  }
  return s.lengths[item];
}

std::size_t CrossAttentionMemory::max_length() const { return LiveMemory(state_).max_length; }
std::size_t CrossAttentionMemory::batch() const { return LiveMemory(state_).batch; }

std::size_t CrossAttentionMemory::bytes() const {
  const State& s = LiveMemory(state_);
  return s.batch * s.kv_heads * (s.keys_stride + s.values_stride);
}

void MultiheadAttention::ProjectMemory(Context& context, ConstTensor encoder_output,
                                       CrossAttentionMemory& memory,
                                       Span<const std::size_t> key_lengths) const {
  const Impl& impl = LiveOperator(impl_);
  CrossAttentionMemory::State& m = LiveMemory(memory.state_);
  const WritingUse writing(m.users, kMemoryBusy);
  CheckOwner(m, impl);
  ValidateTensor("encoder_output", encoder_output, impl.config.d_model);
  if (encoder_output.batch != m.batch) {
    throw Error("encoder_output.batch: expected the memory's batch " + Str(m.batch) + ", got " +
                Str(encoder_output.batch));
  }
  if (encoder_output.length > m.max_length) {
    throw Error("encoder_output.length: expected at most the memory's max_length " +
                Str(m.max_length) + ", got " + Str(encoder_output.length));
  }
  const std::size_t* lengths =
      CheckLengths("key_lengths", key_lengths, m.batch, encoder_output.length);
  Context::State& state = *context.state_;
  const ExclusiveUse context_use(state.busy, kContextBusy);
  // A projection that fails half-way leaves an empty memory, not a mix of two encoder outputs.
  m.length = 0;
  if (lengths != nullptr) {
    std::copy(lengths, lengths + m.batch, m.lengths.begin());
  } else {
    std::fill(m.lengths.begin(), m.lengths.end(), encoder_output.length);
  }
  const MhaShape shape{
      m.batch, 0, encoder_output.length, impl.config.d_model, impl.config.num_heads, m.kv_heads};
  MhaOptions options;
  options.key_lengths = m.lengths.data();
  const KvStore store{m.keys.get(),    m.values.get(), m.keys_stride,
                      m.values_stride, nullptr,        m.max_length};
  try {
    MhaProjectKeysValues(impl.projections, *impl.attention, impl.math, shape, options,
                         encoder_output.data, store, *state.executor, state.workspace);
  } catch (...) {
    std::fill(m.lengths.begin(), m.lengths.end(), 0);  // no item's frames either
    throw;
  }
  m.length = encoder_output.length;
}

void MultiheadAttention::DecodeCross(Context& context, ConstTensor query,
                                     const CrossAttentionMemory& memory, Tensor out,
                                     Span<const std::size_t> memory_items) const {
  const Impl& impl = LiveOperator(impl_);
  const CrossAttentionMemory::State& m = LiveMemory(memory.state_);
  const ReadingUse reading(m.users, kMemoryBusy);
  CheckOwner(m, impl);
  const MhaShape shape = ValidateCrossStep(impl.config, query, out, memory_items, m);
  const KvMemory kv{m.keys.get(), m.values.get(),   m.keys_stride,    m.values_stride,
                    m.batch,      m.lengths.data(), memory_items.data};
  Context::State& state = *context.state_;
  const ExclusiveUse context_use(state.busy, kContextBusy);
  MhaAttendMemory(impl.projections, *impl.attention, impl.math, shape, MhaOptions{}, query.data, out.data, kv,
                  *state.executor, state.workspace);
}

}  // namespace edgeattn
