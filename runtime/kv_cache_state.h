// What a KvCache holds: packed keys and values per (sequence, key/value head), in the layout
// of the operator's attention kernel, in `slots` slots: max_length, or for a windowed operator
// a ring of a little more than the window (position p in slot p % slots).
#ifndef EDGEATTN_RUNTIME_KV_CACHE_STATE_H_
#define EDGEATTN_RUNTIME_KV_CACHE_STATE_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "hwy/aligned_allocator.h"
#include "runtime/exclusive_use.h"
#include "runtime/mha_forward.h"
#include "simd/attention.h"

namespace edgeattn {

struct EDGEATTN_HIDDEN KvCache::State {
  std::size_t d_model, heads, kv_heads;  // of the operator it was made for
  std::uint64_t kv_fingerprint;           // its KvProjectionFingerprint
  std::size_t batch, max_length;
  std::size_t window;  // the operator's (0: none)
  KvFormat format;
  std::size_t slots;
  std::vector<std::size_t> lengths;  // positions cached, per sequence
  std::vector<std::size_t> oldest;   // the first position each sequence's ring still holds
  const simd::AttentionKernel* attention;  // whose layout the keys and values are in; Decode runs it
  std::size_t keys_stride, values_stride;  // bytes per (sequence, key/value head)
  hwy::AlignedFreeUniquePtr<std::uint8_t[]> keys, values;
  std::atomic<bool> busy{false};  // a decode step or a change of lengths or order (CacheChange)
  // lengths and their longest as the last change left them, for length() on any thread while
  // another changes them (the longest on its own: a max over the items as they are published
  // could mix two changes).
  std::vector<std::atomic<std::size_t>> published;
  std::atomic<std::size_t> published_longest{0};

  // Reorder's scratch, made by its first call: one sequence's keys and values (a cycle of
  // moves needs one of them set aside), the indices (copied first: the caller's buffer may be
  // anything), and per-sequence counts and lengths.
  struct ReorderScratch {
    hwy::AlignedFreeUniquePtr<std::uint8_t[]> item;
    std::vector<std::size_t> from, readers, lengths, oldest;
    std::vector<bool> done;
  } reorder;

  // Bytes of one sequence's keys and values (every key/value head).
  std::size_t item_keys_bytes() const { return kv_heads * keys_stride; }
  std::size_t item_values_bytes() const { return kv_heads * values_stride; }
};

// The attention kernel a cache of options.format runs: the operator's own for the operator's
// kv_format unless named.
const simd::AttentionKernel& ChooseCacheKernel(const MultiheadAttention& mha,
                                               const KvCacheOptions& options);

// Shared by KvCache and CrossAttentionMemory: checks their max_length and batch, and allocates
// their zeroed, aligned buffers (what_for names one in an out-of-memory error).
void CheckCapacity(std::size_t max_length, std::size_t batch);
hwy::AlignedFreeUniquePtr<std::uint8_t[]> ZeroedBytes(std::size_t n, const char* what_for);

// The state of a cache that has not been moved from; throws edgeattn::Error otherwise.
KvCache::State& LiveCacheState(const std::unique_ptr<KvCache::State>& state);
// The error of a cache used by two calls at once (ExclusiveUse).
extern const char kCacheBusy[];

// A call that changes a cache (a decode step, Truncate, Reorder, Clear): one at a time, and on
// leaving, while still alone, publishes the lengths it left for length() to read.
class CacheChange {
 public:
  explicit CacheChange(KvCache::State& s) : use_(s.busy, kCacheBusy), s_(s) {}
  ~CacheChange() {
    std::size_t longest = 0;
    for (std::size_t b = 0; b < s_.batch; ++b) {
      s_.published[b].store(s_.lengths[b], std::memory_order_release);
      longest = std::max(longest, s_.lengths[b]);
    }
    s_.published_longest.store(longest, std::memory_order_release);
  }
  CacheChange(const CacheChange&) = delete;
  CacheChange& operator=(const CacheChange&) = delete;

 private:
  ExclusiveUse use_;
  KvCache::State& s_;
};

// Slots of a windowed cache: the window plus a panel of keys, so that a step of up to
// slots - window + 1 positions overwrites none its rows see, and Truncate can roll that far back.
inline constexpr std::size_t kRingSlack = 64;

// A decode step's new positions per sequence: step_lengths[b], or `length` each when null.
struct AppendingStep {
  KvCache::State* cache;
  const std::size_t* step_lengths;
  std::size_t length;

  std::size_t of(std::size_t b) const { return step_lengths != nullptr ? step_lengths[b] : length; }
};

// KvStore::before_writing for a decode step (an AppendingStep*): the positions a ring held in
// the slots the step is about to write are gone from then on, whether it completes or throws.
void ForgetOverwrittenPositions(void* appending_step);

// Checks a decode step's input, output and per-sequence step lengths (null: x.length each)
// against the operator and the cache; returns the step's shape (lq = lk = x.length).
MhaShape ValidateDecode(const MultiheadAttention::Impl& op, const ConstTensor& x,
                        const Tensor& out, const Span<const std::size_t>& step_lengths,
                        const KvCache::State& cache);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_KV_CACHE_STATE_H_
