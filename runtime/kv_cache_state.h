// What a KvCache holds: packed keys and values per (sequence, key/value head), in the layout
// of simd::PackAttentionKeysValues, for up to max_length positions.
#ifndef EDGEATTN_RUNTIME_KV_CACHE_STATE_H_
#define EDGEATTN_RUNTIME_KV_CACHE_STATE_H_

#include <atomic>
#include <cstddef>
#include <memory>

#include "edgeattn/edgeattn.hpp"
#include "hwy/aligned_allocator.h"
#include "runtime/mha_forward.h"

namespace edgeattn {

struct KvCache::State {
  std::size_t d_model, heads, kv_heads;  // of the operator it was made for
  std::size_t batch, max_length;
  std::size_t length = 0;
  std::size_t keys_stride, values_stride;  // floats per (sequence, key/value head)
  hwy::AlignedFreeUniquePtr<float[]> keys, values;
  std::atomic<bool> busy{false};  // a decode step, Truncate or Clear is running (ExclusiveUse)
};

// The state of a cache that has not been moved from; throws edgeattn::Error otherwise.
KvCache::State& LiveCacheState(const std::unique_ptr<KvCache::State>& state);
// The error of a cache used by two calls at once (ExclusiveUse).
extern const char kCacheBusy[];

// Checks a decode step's input and output against the configuration and the cache; returns the
// step's shape (lq = lk = new positions).
MhaShape ValidateDecode(const Config& config, const ConstTensor& x, const Tensor& out,
                        const KvCache::State& cache);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_KV_CACHE_STATE_H_
