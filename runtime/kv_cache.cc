#include <algorithm>
#include <cstring>
#include <string>

#include "edgeattn/edgeattn.hpp"
#include "runtime/auto_choice.h"
#include "runtime/kv_cache_state.h"
#include "runtime/forward_plan.h"
#include "runtime/mha_validation.h"
#include "runtime/multihead_attention_impl.h"
#include "runtime/out_of_memory.h"
#include "runtime/text_checks.h"
#include "simd/attention.h"

namespace edgeattn {
hwy::AlignedFreeUniquePtr<std::uint8_t[]> ZeroedBytes(std::size_t n, const char* what_for) {
  auto p = AllocateOrThrow<std::uint8_t>(n, what_for);
  std::memset(p.get(), 0, n);
  return p;
}

void CheckCapacity(std::size_t max_length, std::size_t batch) {
  if (max_length < 1 || max_length > kMaxSequenceLength) {
    throw Error("max_length: expected a value in [1, " + Str(kMaxSequenceLength) + "], got " +
                Str(max_length));
  }
  if (batch < 1 || batch > kMaxBatch) {
    throw Error("batch: expected a value in [1, " + Str(kMaxBatch) + "], got " + Str(batch));
  }
}

const char kCacheBusy[] =
    "cache: already in use by another call on another thread (a KvCache serves one Decode, "
    "Truncate, Reorder or Clear at a time)";

KvCache::State& LiveCacheState(const std::unique_ptr<KvCache::State>& state) {
  if (state == nullptr) throw Error("KvCache: moved-from (it holds no cache)");
  return *state;
}

KvCache::KvCache(const MultiheadAttention& mha, std::size_t max_length, std::size_t batch)
    : KvCache(mha, max_length, batch, KvCacheOptions{mha.config().kv_format, ""}) {}

KvCache::KvCache(const MultiheadAttention& mha, std::size_t max_length, std::size_t batch,
                 const KvCacheOptions& given) {
  const Config& config = mha.config();
  const KvCacheOptions options = ResolveAuto(given);
  CheckCapacity(max_length, batch);
  auto s = std::make_unique<State>();
  s->d_model = config.d_model;
  s->heads = config.num_heads;
  s->kv_heads = KvHeads(config);
  s->kv_fingerprint = mha.impl_->kv_fingerprint;
  s->batch = batch;
  s->max_length = max_length;
  s->lengths.assign(batch, 0);
  s->oldest.assign(batch, 0);
  s->published = std::vector<std::atomic<std::size_t>>(batch);  // zeros (value-initialised)
  s->window = config.math.window;
  s->slots = max_length;
  if (s->window != 0) {
    const std::size_t ring = DivCeil(s->window + kRingSlack - 1, kRingSlack) * kRingSlack;
    s->slots = Min(ring, max_length);
  }
  const std::size_t dk = config.d_model / config.num_heads;
  s->format = options.format;
  s->attention = &ChooseCacheKernel(mha, options);
  s->keys_stride = PackedHeadStride(s->attention->keys_bytes(s->slots, dk));
  s->values_stride = PackedHeadStride(s->attention->values_bytes(s->slots, dk));
  s->keys = ZeroedBytes(batch * s->kv_heads * s->keys_stride, "the KV cache's keys");
  s->values = ZeroedBytes(batch * s->kv_heads * s->values_stride, "the KV cache's values");
  state_ = std::move(s);
}

KvCache::~KvCache() = default;
KvCache::KvCache(KvCache&&) noexcept = default;
KvCache& KvCache::operator=(KvCache&&) noexcept = default;

// Lengths are read from what the last change published: a decode step on another thread may be
// writing lengths itself.
std::size_t KvCache::length() const {
  return LiveCacheState(state_).published_longest.load(std::memory_order_acquire);
}

std::size_t KvCache::length(std::size_t item) const {
  const State& s = LiveCacheState(state_);
  if (item >= s.batch) {
    throw Error("item: expected a sequence in [0, " + Str(s.batch - 1) + "], got " + Str(item));
  }
  return s.published[item].load(std::memory_order_acquire);
}

std::size_t KvCache::max_length() const { return LiveCacheState(state_).max_length; }
std::size_t KvCache::batch() const { return LiveCacheState(state_).batch; }
std::size_t KvCache::slots() const { return LiveCacheState(state_).slots; }
std::size_t KvCache::bytes() const {
  const State& s = LiveCacheState(state_);
  return s.batch * (s.item_keys_bytes() + s.item_values_bytes());
}

std::size_t KvCache::bytes_per_position() const {
  const State& s = LiveCacheState(state_);
  return DivCeil(bytes(), s.batch * s.slots);
}

KvFormat KvCache::format() const { return LiveCacheState(state_).format; }
const char* KvCache::attention_kernel() const { return LiveCacheState(state_).attention->name; }

void KvCache::Clear() {
  State& s = LiveCacheState(state_);
  const CacheChange change(s);
  std::fill(s.lengths.begin(), s.lengths.end(), 0);
  std::fill(s.oldest.begin(), s.oldest.end(), 0);
}

namespace {

// A windowed cache's next step from `length` sees the window before it: the ring of sequence b
// must still hold it. From 0 it sees nothing: the sequence starts again; nor does a window of 1
// see anything before (ClampOldestToLengths).
void CheckRingHolds(const char* name, const KvCache::State& s, std::size_t b,
                    std::size_t length) {
  const std::size_t needed = s.window != 0 && length >= s.window ? length - s.window + 1 : 0;
  if (length == 0 || s.window == 1 || needed >= s.oldest[b]) return;
  throw Error(std::string(name) + ": expected at least " + Str(s.oldest[b] + s.window - 1) +
              " (the ring of " + Str(s.slots) + " slots holds positions from " +
              Str(s.oldest[b]) + ", and a window of " + Str(s.window) +
              " needs those before the new length), got " + Str(length));
}

// A ring holds positions [oldest, length): a sequence truncated below its oldest position (to
// nothing, or with a window of 1) starts its ring again from its new length, as Clear does.
void ClampOldestToLengths(KvCache::State& s) {
  for (std::size_t b = 0; b < s.batch; ++b) s.oldest[b] = std::min(s.oldest[b], s.lengths[b]);
}

}  // namespace

void ForgetOverwrittenPositions(void* appending_step) {
  const AppendingStep& step = *static_cast<const AppendingStep*>(appending_step);
  KvCache::State& s = *step.cache;
  for (std::size_t b = 0; b < s.batch; ++b) {
    const std::size_t end = s.lengths[b] + step.of(b);
    if (end > s.slots) s.oldest[b] = std::max(s.oldest[b], end - s.slots);
  }
}

void KvCache::Truncate(std::size_t length) {
  State& s = LiveCacheState(state_);
  const CacheChange change(s);
  const std::size_t longest = *std::max_element(s.lengths.begin(), s.lengths.end());
  if (length > longest) {
    throw Error("length: expected at most the cached length " + Str(longest) + ", got " +
                Str(length));
  }
  for (std::size_t b = 0; b < s.batch; ++b) {
    if (length < s.lengths[b]) CheckRingHolds("length", s, b, length);
  }
  for (std::size_t& l : s.lengths) l = std::min(l, length);
  ClampOldestToLengths(s);
}

void KvCache::Truncate(Span<const std::size_t> lengths) {
  State& s = LiveCacheState(state_);
  const CacheChange change(s);
  if (lengths.data == nullptr) throw Error("lengths: expected a buffer, got null");
  if (lengths.size != s.batch) {
    throw Error("lengths: expected " + Str(s.batch) + " values [batch], got " +
                Str(lengths.size));
  }
  for (std::size_t b = 0; b < s.batch; ++b) {
    if (lengths.data[b] > s.lengths[b]) {
      throw Error("lengths[" + Str(b) + "]: expected at most the sequence's cached length " +
                  Str(s.lengths[b]) + ", got " + Str(lengths.data[b]));
    }
    CheckRingHolds(("lengths[" + Str(b) + "]").c_str(), s, b, lengths.data[b]);
  }
  std::copy(lengths.data, lengths.data + s.batch, s.lengths.begin());
  ClampOldestToLengths(s);
}

namespace {

// The room left in sequence b for a step of `step` positions, or an error naming `name`.
void CheckRoom(const char* name, const KvCache::State& cache, std::size_t b, std::size_t step) {
  const std::size_t room = cache.max_length - cache.lengths[b];
  if (step > room) {
    const bool same = std::equal(cache.lengths.begin() + 1, cache.lengths.end(),
                                 cache.lengths.begin());
    throw Error(std::string(name) + ": the cache" +
                (same ? std::string() : "'s sequence " + Str(b)) + " holds " +
                Str(cache.lengths[b]) + " of " + Str(cache.max_length) + " positions, room for " +
                Str(room) + ", got " + Str(step));
  }
  // Then a ring's own limit, which only a ring that wraps meets within the room (one whose slots
  // hold max_length has no room past them); the limit it names is then below the room.
  const std::size_t ring_step = cache.slots - cache.window + 1;
  if (cache.window != 0 && cache.lengths[b] + step > cache.slots && step > ring_step) {
    // Until the ring is full a step may fill it; from then on, ring_step.
    const std::size_t most =
        std::max(cache.slots - std::min(cache.lengths[b], cache.slots), ring_step);
    throw Error(std::string(name) + ": a step of a windowed cache (window " + Str(cache.window) +
                ", " + Str(cache.slots) + " slots) holding " + Str(cache.lengths[b]) +
                " positions adds at most " + Str(most) +
                (most == ring_step ? std::string()
                                   : " (" + Str(ring_step) + " once the ring is full)") +
                ", got " + Str(step));
  }
}

}  // namespace

MhaShape ValidateDecode(const MultiheadAttention::Impl& op, const ConstTensor& x,
                        const Tensor& out, const Span<const std::size_t>& step_lengths,
                        const KvCache::State& cache) {
  const Config& config = op.config;
  if (cache.d_model != config.d_model || cache.heads != config.num_heads ||
      cache.kv_heads != KvHeads(config)) {
    throw Error("cache: made for d_model " + Str(cache.d_model) + ", " + Str(cache.heads) +
                " heads, " + Str(cache.kv_heads) + " key/value heads; this operator has " +
                Str(config.d_model) + ", " + Str(config.num_heads) + ", " +
                Str(KvHeads(config)));
  }
  // Another layer's keys and values, of the same shape, would give silently wrong attention.
  if (cache.kv_fingerprint != op.kv_fingerprint) {
    throw Error(
        "cache: made for an operator with other key/value projections (another layer, or this "
        "layer's weights in another precision or with another norm or rotary embedding); a "
        "KvCache holds the keys and values of one layer's operators: make one per layer");
  }
  // A ring that wraps holds the positions its window sees: an operator that sees more would
  // attend to the ring's positions only, silently. (One whose slots hold max_length never wraps.)
  const std::size_t window = config.math.window;
  const bool wraps = cache.window != 0 && cache.slots < cache.max_length;
  if (wraps && (window == 0 || window > cache.window)) {
    throw Error("cache: a ring made for a window of " + Str(cache.window) + " positions (" +
                Str(cache.slots) + " slots); this operator attends " +
                (window == 0 ? std::string("every position (no window)")
                             : "a window of " + Str(window)));
  }
  ValidateTensor("x", x, config.d_model);
  ValidateTensor("out", out, config.d_model);
  if (out.batch != x.batch || out.length != x.length) {
    throw Error("out: expected shape [" + Str(x.batch) + ", " + Str(x.length) + ", " +
                Str(config.d_model) + "] like x, got [" + Str(out.batch) + ", " +
                Str(out.length) + ", " + Str(out.features) + "]");
  }
  const MhaShape shape{x.batch, x.length, x.length, config.d_model, config.num_heads,
                       KvHeads(config)};
  if (x.batch != cache.batch) {
    throw Error("x.batch: expected the cache's batch " + Str(cache.batch) + ", got " +
                Str(x.batch));
  }
  if (CheckLengths("step_lengths", step_lengths, x.batch, x.length) == nullptr) {
    for (std::size_t b = 0; b < x.batch; ++b) CheckRoom("x.length", cache, b, x.length);
    return shape;
  }
  for (std::size_t b = 0; b < x.batch; ++b) {
    CheckRoom(("step_lengths[" + Str(b) + "]").c_str(), cache, b, step_lengths.data[b]);
  }
  // The output's padding rows are written while the step lengths are read.
  if (Overlap(out.data, out.batch * out.length * out.features * sizeof(float), step_lengths.data,
              step_lengths.size * sizeof(std::size_t))) {
    throw Error("out: expected a buffer apart from step_lengths, got one that overlaps it");
  }
  return shape;
}

}  // namespace edgeattn
