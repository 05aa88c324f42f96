// What a KvCache holds: packed keys and values per (sequence, key/value head), in the layout
// of the operator's attention kernel, in `slots` slots: max_length, or for a windowed operator
// a ring of a little more than the window (position p in slot p % slots).
#ifndef EDGEATTN_RUNTIME_KV_CACHE_STATE_H_
#define EDGEATTN_RUNTIME_KV_CACHE_STATE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "edgeattn/edgeattn.hpp"
#include "hwy/aligned_allocator.h"
#include "runtime/mha_forward.h"
#include "simd/attention.h"

namespace edgeattn {

struct KvCache::State {
  std::size_t d_model, heads, kv_heads;  // of the operator it was made for
  std::size_t batch, max_length;
  std::size_t window;  // the operator's (0: none)
  std::size_t slots;
  std::size_t length = 0;
  std::size_t oldest = 0;  // the first position the ring still holds
  const simd::AttentionKernel* attention;   // whose layout the keys and values are in
  std::size_t keys_stride, values_stride;  // bytes per (sequence, key/value head)
  hwy::AlignedFreeUniquePtr<std::uint8_t[]> keys, values;
  std::atomic<bool> busy{false};  // a decode step, Truncate or Clear is running (ExclusiveUse)
};

// The state of a cache that has not been moved from; throws edgeattn::Error otherwise.
KvCache::State& LiveCacheState(const std::unique_ptr<KvCache::State>& state);
// The error of a cache used by two calls at once (ExclusiveUse).
extern const char kCacheBusy[];

// Slots of a windowed cache: the window plus a panel of keys, so that a step of up to
// slots - window + 1 positions overwrites none its rows see, and Truncate can roll that far back.
inline constexpr std::size_t kRingSlack = 64;

// Records n positions appended by a decode step (and what the ring overwrote).
void AppendedPositions(KvCache::State& cache, std::size_t n);

// Checks a decode step's input and output against the configuration and the cache; returns the
// step's shape (lq = lk = new positions).
MhaShape ValidateDecode(const Config& config, const simd::AttentionKernel& attention,
                        const ConstTensor& x, const Tensor& out, const KvCache::State& cache);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_KV_CACHE_STATE_H_
