// Splits `items` work items into one contiguous, equal share per worker. The share of a worker
// depends only on the item count and the worker count, never on timing.
#ifndef EDGEATTN_RUNTIME_STATIC_PARTITION_H_
#define EDGEATTN_RUNTIME_STATIC_PARTITION_H_

#include <cstddef>

#include "edgeattn/executor.hpp"

namespace edgeattn {

// Calls fn(item, worker) for every item in [0, items); returns when all are done.
template <class Fn>
void ParallelForItems(Executor& executor, std::size_t items, const Fn& fn) {
  const std::size_t workers = executor.workers();
  const auto share = [&](std::size_t worker) {
    const std::size_t begin = items * worker / workers;
    const std::size_t end = items * (worker + 1) / workers;
    for (std::size_t item = begin; item < end; ++item) fn(item, worker);
  };
  if (workers == 1 || items <= 1) {
    for (std::size_t item = 0; item < items; ++item) fn(item, std::size_t{0});
    return;
  }
  executor.RunWorkers(share);
}

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_STATIC_PARTITION_H_
