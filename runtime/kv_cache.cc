#include <cstring>
#include <new>
#include <string>

#include "edgeattn/edgeattn.hpp"
#include "runtime/kv_cache_state.h"
#include "runtime/mha_validation.h"
#include "simd/attention.h"

namespace edgeattn {
namespace {

std::string Str(std::size_t v) { return std::to_string(v); }

hwy::AlignedFreeUniquePtr<float[]> ZeroedFloats(std::size_t n) {
  auto p = hwy::AllocateAligned<float>(n);
  if (!p) throw std::bad_alloc();
  std::memset(p.get(), 0, n * sizeof(float));
  return p;
}

}  // namespace

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
  const std::size_t dk = config.d_model / config.num_heads;
  s->keys_stride = simd::AttentionPackedKeysSize(max_length, dk);
  s->values_stride = simd::AttentionPackedValuesSize(max_length, dk);
  s->keys = ZeroedFloats(batch * s->kv_heads * s->keys_stride);
  s->values = ZeroedFloats(batch * s->kv_heads * s->values_stride);
  state_ = std::move(s);
}

KvCache::~KvCache() = default;
KvCache::KvCache(KvCache&&) noexcept = default;
KvCache& KvCache::operator=(KvCache&&) noexcept = default;

std::size_t KvCache::length() const { return state_->length; }
std::size_t KvCache::max_length() const { return state_->max_length; }
std::size_t KvCache::batch() const { return state_->batch; }
std::size_t KvCache::bytes() const {
  return state_->batch * state_->kv_heads * (state_->keys_stride + state_->values_stride) *
         sizeof(float);
}
void KvCache::Clear() { state_->length = 0; }

void KvCache::Truncate(std::size_t length) {
  if (length > state_->length) {
    throw Error("length: expected at most the cached length " + Str(state_->length) + ", got " +
                Str(length));
  }
  state_->length = length;
}

MhaShape ValidateDecode(const Config& config, const ConstTensor& x, const Tensor& out,
                        const KvCache::State& cache) {
  if (cache.d_model != config.d_model || cache.heads != config.num_heads ||
      cache.kv_heads != KvHeads(config)) {
    throw Error("cache: made for d_model " + Str(cache.d_model) + ", " + Str(cache.heads) +
                " heads, " + Str(cache.kv_heads) + " key/value heads; this operator has " +
                Str(config.d_model) + ", " + Str(config.num_heads) + ", " +
                Str(KvHeads(config)));
  }
  MhaOptions unused;
  const MhaShape shape = ValidateForward(config, x, x, x, out, {}, &unused);
  if (x.batch != cache.batch) {
    throw Error("x.batch: expected the cache's batch " + Str(cache.batch) + ", got " +
                Str(x.batch));
  }
  if (x.length > cache.max_length - cache.length) {
    throw Error("x.length: the cache holds " + Str(cache.length) + " of " +
                Str(cache.max_length) + " positions, room for " +
                Str(cache.max_length - cache.length) + ", got " + Str(x.length));
  }
  return shape;
}

}  // namespace edgeattn
