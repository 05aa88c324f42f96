#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <memory>

#include "edgeattn/executor.hpp"
#include "runtime/thread_count.h"

namespace edgeattn {
namespace {

// oneTBB lets the arenas of a process have one worker fewer than the CPUs, and an arena asking
// for more prints a warning to the app's stderr (and runs its slots on fewer threads). An
// executor of more threads than that raises the limit to its own count while it lives; where
// the app holds a lower limit of its own, oneTBB keeps the lowest.
std::unique_ptr<tbb::global_control> AllowWorkers(std::size_t threads) {
  const auto limit = tbb::global_control::max_allowed_parallelism;
  if (threads <= tbb::global_control::active_value(limit)) return nullptr;
  return std::make_unique<tbb::global_control>(limit, threads);
}

class TbbExecutor final : public Executor {
 public:
  explicit TbbExecutor(std::size_t threads)
      : worker_limit_(AllowWorkers(threads)),
        arena_(static_cast<int>(threads), /*reserved_for_masters=*/1),
        workers_(threads) {}

  std::size_t workers() const override { return workers_; }
  const char* kind() const override { return "oneTBB"; }
  bool spins() const override { return true; }  // oneTBB's workers spin before they sleep

  void RunWorkers(WorkerFn fn) override {
    if (workers_ == 1) {
      fn(0);
      return;
    }
    arena_.execute([&] {
      // One range element per worker and a static partitioner: no stealing decides who
      // computes what, so the work each worker index does is fixed.
      tbb::parallel_for(
          tbb::blocked_range<std::size_t>(0, workers_, 1),
          [&](const tbb::blocked_range<std::size_t>& range) {
            for (std::size_t w = range.begin(); w != range.end(); ++w) fn(w);
          },
          tbb::static_partitioner());  // one worker index per slot
    });
  }

 private:
  std::unique_ptr<tbb::global_control> worker_limit_;  // before the arena, and outlives it
  tbb::task_arena arena_;
  std::size_t workers_;
};

}  // namespace

std::unique_ptr<Executor> MakeTbbExecutor(std::size_t threads) {
  CheckThreadCount("MakeTbbExecutor: threads", threads);
  if (threads == 0) threads = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
  return std::make_unique<TbbExecutor>(threads);
}

}  // namespace edgeattn
