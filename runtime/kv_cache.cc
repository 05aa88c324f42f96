#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "edgeattn/edgeattn.hpp"
#include "runtime/exclusive_use.h"
#include "runtime/kv_cache_state.h"
#include "runtime/forward_plan.h"
#include "runtime/mha_validation.h"
#include "runtime/text_checks.h"
#include "simd/attention.h"

namespace edgeattn {
namespace {

hwy::AlignedFreeUniquePtr<std::uint8_t[]> ZeroedBytes(std::size_t n) {
  auto p = hwy::AllocateAligned<std::uint8_t>(n);
  if (!p) throw std::bad_alloc();
  std::memset(p.get(), 0, n);
  return p;
}

}  // namespace

const char kCacheBusy[] =
    "cache: already in use by another call on another thread (a KvCache serves one Decode, "
    "Truncate or Clear at a time)";

KvCache::State& LiveCacheState(const std::unique_ptr<KvCache::State>& state) {
  if (state == nullptr) throw Error("KvCache: moved-from (it holds no cache)");
  return *state;
}

KvCache::KvCache(const MultiheadAttention& mha, std::size_t max_length, std::size_t batch) {
  const Config& config = mha.config();
  if (max_length < 1 || max_length > kMaxSequenceLength) {
    throw Error("max_length: expected a value in [1, " + Str(kMaxSequenceLength) + "], got " +
                Str(max_length));
  }
  if (batch < 1 || batch > kMaxBatch) {
    throw Error("batch: expected a value in [1, " + Str(kMaxBatch) + "], got " + Str(batch));
  }
  auto s = std::make_unique<State>();
  s->d_model = config.d_model;
  s->heads = config.num_heads;
  s->kv_heads = KvHeads(config);
  s->batch = batch;
  s->max_length = max_length;
  s->window = config.math.window;
  s->slots = max_length;
  if (s->window != 0) {
    const std::size_t ring = DivCeil(s->window + kRingSlack - 1, kRingSlack) * kRingSlack;
    s->slots = Min(ring, max_length);
  }
  const std::size_t dk = config.d_model / config.num_heads;
  s->attention = simd::FindAttentionKernel(simd::KvType::kF32, mha.attention_kernel());
  s->keys_stride = PackedHeadStride(s->attention->keys_bytes(s->slots, dk));
  s->values_stride = PackedHeadStride(s->attention->values_bytes(s->slots, dk));
  s->keys = ZeroedBytes(batch * s->kv_heads * s->keys_stride);
  s->values = ZeroedBytes(batch * s->kv_heads * s->values_stride);
  state_ = std::move(s);
}

KvCache::~KvCache() = default;
KvCache::KvCache(KvCache&&) noexcept = default;
KvCache& KvCache::operator=(KvCache&&) noexcept = default;

std::size_t KvCache::length() const { return LiveCacheState(state_).length; }
std::size_t KvCache::max_length() const { return LiveCacheState(state_).max_length; }
std::size_t KvCache::batch() const { return LiveCacheState(state_).batch; }
std::size_t KvCache::slots() const { return LiveCacheState(state_).slots; }
std::size_t KvCache::bytes() const {
  const State& s = LiveCacheState(state_);
  return s.batch * s.kv_heads * (s.keys_stride + s.values_stride);
}

void KvCache::Clear() {
  State& s = LiveCacheState(state_);
  const ExclusiveUse use(s.busy, kCacheBusy);
  s.length = 0;
  s.oldest = 0;
}

void KvCache::Truncate(std::size_t length) {
  State& s = LiveCacheState(state_);
  const ExclusiveUse use(s.busy, kCacheBusy);
  if (length > s.length) {
    throw Error("length: expected at most the cached length " + Str(s.length) + ", got " +
                Str(length));
  }
  // The next step's first row sees the window before it: the ring must still hold it.
  const std::size_t needed = s.window != 0 && length >= s.window ? length - s.window + 1 : 0;
  if (needed < s.oldest) {
    throw Error("length: expected at least " + Str(s.oldest + s.window - 1) +
                " (the ring of " + Str(s.slots) + " slots holds positions from " +
                Str(s.oldest) + ", and a window of " + Str(s.window) +
                " needs those before the new length), got " + Str(length));
  }
  s.length = length;
}

void AppendedPositions(KvCache::State& cache, std::size_t n) {
  cache.length += n;
  if (cache.length > cache.slots) cache.oldest = std::max(cache.oldest, cache.length - cache.slots);
}

MhaShape ValidateDecode(const Config& config, const simd::AttentionKernel& attention,
                        const ConstTensor& x, const Tensor& out, const KvCache::State& cache) {
  if (cache.d_model != config.d_model || cache.heads != config.num_heads ||
      cache.kv_heads != KvHeads(config)) {
    throw Error("cache: made for d_model " + Str(cache.d_model) + ", " + Str(cache.heads) +
                " heads, " + Str(cache.kv_heads) + " key/value heads; this operator has " +
                Str(config.d_model) + ", " + Str(config.num_heads) + ", " +
                Str(KvHeads(config)));
  }
  if (cache.attention != &attention) {
    throw Error(std::string("cache: holds keys and values for the attention kernel ") +
                cache.attention->name + ", this operator runs " + attention.name);
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
  if (x.length > cache.max_length - cache.length) {
    throw Error("x.length: the cache holds " + Str(cache.length) + " of " +
                Str(cache.max_length) + " positions, room for " +
                Str(cache.max_length - cache.length) + ", got " + Str(x.length));
  }
  const std::size_t ring_step = cache.slots - cache.window + 1;
  if (cache.window != 0 && cache.length + x.length > cache.slots && x.length > ring_step) {
    throw Error("x.length: a step of a windowed cache (window " + Str(cache.window) + ", " +
                Str(cache.slots) + " slots) adds at most " + Str(ring_step) +
                " positions once the ring is full, got " + Str(x.length));
  }
  return shape;
}

}  // namespace edgeattn
