// KvCache::Reorder: sequence b becomes what sequence indices[b] was, in place. The moves form a
// functional graph (each destination has one source); a sequence is overwritten only once every
// destination that reads it has been written, so trees need no copies set aside, and each
// remaining cycle needs one sequence set aside.
#include <algorithm>
#include <cstring>
#include <string>

#include "edgeattn/edgeattn.hpp"
#include "runtime/kv_cache_state.h"
#include "runtime/text_checks.h"

namespace edgeattn {
namespace {

void CheckIndices(const KvCache::State& s, const Span<const std::size_t>& indices) {
  if (indices.data == nullptr) throw Error("indices: expected a buffer, got null");
  if (indices.size != s.batch) {
    throw Error("indices: expected " + Str(s.batch) + " values [batch], got " + Str(indices.size));
  }
  for (std::size_t b = 0; b < s.batch; ++b) {
    if (indices.data[b] >= s.batch) {
      throw Error("indices[" + Str(b) + "]: expected a sequence in [0, " + Str(s.batch - 1) +
                  "], got " + Str(indices.data[b]));
    }
  }
}

void Prepare(KvCache::State& s) {
  KvCache::State::ReorderScratch& r = s.reorder;
  if (r.item) return;
  r.item =
      ZeroedBytes(s.item_keys_bytes() + s.item_values_bytes(), "the KV cache's reorder buffer");
  r.from.resize(s.batch);
  r.readers.resize(s.batch);
  r.lengths.resize(s.batch);
  r.oldest.resize(s.batch);
  r.done.resize(s.batch);
}

// One sequence's keys and values: kv_heads buffers of keys_stride (values_stride) bytes each.
struct ItemBytes {
  std::uint8_t* keys;
  std::uint8_t* values;
};

ItemBytes Item(KvCache::State& s, std::size_t b) {
  return {s.keys.get() + b * s.item_keys_bytes(), s.values.get() + b * s.item_values_bytes()};
}

ItemBytes SetAsideItem(KvCache::State& s) {
  return {s.reorder.item.get(), s.reorder.item.get() + s.item_keys_bytes()};
}

// Copies the bytes that hold sequence `from`'s positions: a kernel's position p lies where it
// lies whatever the buffer's size (a cache and a forward call's workspace share the layout), so
// the first keys_bytes(n) bytes of each head hold positions [0, n). The rest of a head's buffer
// is left as it was, as Truncate leaves rolled-back positions.
void Copy(const KvCache::State& s, std::size_t from, const ItemBytes& src, const ItemBytes& dst) {
  const std::size_t held = std::min(s.lengths[from], s.slots);
  if (held == 0) return;
  const std::size_t dk = s.d_model / s.heads;
  const std::size_t keys = std::min(s.attention->keys_bytes(held, dk), s.keys_stride);
  const std::size_t values = std::min(s.attention->values_bytes(held, dk), s.values_stride);
  for (std::size_t g = 0; g < s.kv_heads; ++g) {
    std::memcpy(dst.keys + g * s.keys_stride, src.keys + g * s.keys_stride, keys);
    std::memcpy(dst.values + g * s.values_stride, src.values + g * s.values_stride, values);
  }
}

// Sequence `to` takes sequence `from`'s keys and values.
void Move(KvCache::State& s, std::size_t from, std::size_t to) {
  Copy(s, from, Item(s, from), Item(s, to));
}

void SetAside(KvCache::State& s, std::size_t b) { Copy(s, b, Item(s, b), SetAsideItem(s)); }

void TakeSetAside(KvCache::State& s, std::size_t set_aside, std::size_t to) {
  Copy(s, set_aside, SetAsideItem(s), Item(s, to));
}

// Writes every destination whose own contents no unwritten destination still needs, following
// each write to the source it freed.
void MoveTrees(KvCache::State& s, const std::size_t* from) {
  KvCache::State::ReorderScratch& r = s.reorder;
  for (std::size_t start = 0; start < s.batch; ++start) {
    std::size_t b = start;
    while (!r.done[b] && r.readers[b] == 0) {
      Move(s, from[b], b);
      r.done[b] = true;
      b = from[b];
      --r.readers[b];
    }
  }
}

// What is left are cycles, each of whose sequences one other still reads: set one aside, move
// the others along the cycle, and give the last the one set aside.
void MoveCycles(KvCache::State& s, const std::size_t* from) {
  KvCache::State::ReorderScratch& r = s.reorder;
  for (std::size_t start = 0; start < s.batch; ++start) {
    if (r.done[start]) continue;
    SetAside(s, start);
    std::size_t b = start;
    while (from[b] != start) {
      Move(s, from[b], b);
      r.done[b] = true;
      b = from[b];
    }
    TakeSetAside(s, start, b);
    r.done[b] = true;
  }
}

}  // namespace

void KvCache::Reorder(Span<const std::size_t> indices) {
  State& s = LiveCacheState(state_);
  const CacheChange change(s);
  CheckIndices(s, indices);
  Prepare(s);
  State::ReorderScratch& r = s.reorder;
  const std::size_t* from = r.from.data();
  std::copy(indices.data, indices.data + s.batch, r.from.begin());
  std::fill(r.readers.begin(), r.readers.end(), 0);
  for (std::size_t b = 0; b < s.batch; ++b) {
    r.done[b] = from[b] == b;  // a sequence that keeps its place moves nothing
    if (!r.done[b]) ++r.readers[from[b]];
  }
  MoveTrees(s, from);
  MoveCycles(s, from);
  for (std::size_t b = 0; b < s.batch; ++b) {
    r.lengths[b] = s.lengths[from[b]];
    r.oldest[b] = s.oldest[from[b]];
  }
  s.lengths.swap(r.lengths);
  s.oldest.swap(r.oldest);
}

}  // namespace edgeattn
