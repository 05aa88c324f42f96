// Runs `items` independent work items on an executor's workers.
//
// Each worker owns an equal contiguous share of the items, fixed by the item and worker counts,
// so across calls the same worker touches the same weights and they stay in its core's cache.
// A worker that finishes its share then helps with the others' remaining items, so one that
// wakes late (a oneTBB thread still asleep, an app thread busy elsewhere) does not hold up the
// phase. Which worker runs an item never changes what the item computes: items write disjoint
// outputs and use per-worker scratch only as scratch, so results are bit-identical for any
// thread count and any timing.
#ifndef EDGEATTN_RUNTIME_PARALLEL_FOR_ITEMS_H_
#define EDGEATTN_RUNTIME_PARALLEL_FOR_ITEMS_H_

#include <atomic>
#include <cstddef>

#include "edgeattn/executor.hpp"

namespace edgeattn {

namespace detail {
// Claim counters for up to kMaxHelpedWorkers shares, one per cache line; beyond that, workers
// only run their own share.
inline constexpr std::size_t kMaxHelpedWorkers = 64;
struct alignas(64) ShareCursor {
  std::atomic<std::size_t> next;
};
}  // namespace detail

// Calls fn(item, worker) for every item in [0, items) on the executor's `workers` workers (its
// count as the caller read it, for which any per-worker scratch was made); returns when all are
// done. A worker index past that count, from an executor breaking its contract, is given
// nothing to do.
template <class Fn>
void ParallelForItems(Executor& executor, std::size_t workers, std::size_t items, const Fn& fn) {
  if (workers == 1 || items <= 1) {
    for (std::size_t item = 0; item < items; ++item) fn(item, std::size_t{0});
    return;
  }
  const auto share_begin = [&](std::size_t w) { return items * w / workers; };
  if (workers > detail::kMaxHelpedWorkers) {
    executor.RunWorkers([&](std::size_t w) {
      if (w >= workers) return;
      for (std::size_t item = share_begin(w); item < share_begin(w + 1); ++item) fn(item, w);
    });
    return;
  }
  detail::ShareCursor cursors[detail::kMaxHelpedWorkers];
  for (std::size_t w = 0; w < workers; ++w) cursors[w].next.store(share_begin(w));
  executor.RunWorkers([&](std::size_t worker) {
    if (worker >= workers) return;
    for (std::size_t k = 0; k < workers; ++k) {
      const std::size_t owner = (worker + k) % workers;  // own share first
      const std::size_t end = share_begin(owner + 1);
      for (std::size_t item = cursors[owner].next.fetch_add(1); item < end;
           item = cursors[owner].next.fetch_add(1)) {
        fn(item, worker);
      }
    }
  });
}

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_PARALLEL_FOR_ITEMS_H_
