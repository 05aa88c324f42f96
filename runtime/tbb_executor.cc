#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <mutex>
#include <set>

#include "edgeattn/executor.hpp"
#include "runtime/thread_count.h"

namespace edgeattn {
namespace {

// oneTBB gives the arenas of a process one worker fewer than its default concurrency (the CPUs
// it may run on), and an arena asking for more prints a warning to the app's stderr and runs
// its slots on fewer threads. Executors of more threads raise that limit for as long as one of
// them lives: to the largest count among them, in one tbb::global_control, because oneTBB keeps
// the lowest of the controls alive (an app's own lower limit therefore still wins).
class WorkerLimit {
 public:
  // Never destroyed: an executor may be destroyed after the statics are.
  static WorkerLimit& Process() {
    static WorkerLimit* const limit = new WorkerLimit;
    return *limit;
  }
  bool Needed(std::size_t threads) const { return threads > default_; }

  void Add(std::size_t threads) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto added = counts_.insert(threads);
    try {
      Hold(*counts_.rbegin());
    } catch (...) {  // the executor is not made: its count goes too
      counts_.erase(added);
      throw;
    }
  }

  // From a destructor: a control that cannot be made leaves the higher limit, which is harmless.
  void Remove(std::size_t threads) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    counts_.erase(counts_.find(threads));
    try {
      Hold(counts_.empty() ? 0 : *counts_.rbegin());
    } catch (...) {
    }
  }

 private:
  // Holds a control of `limit` (0: none), made before the one it replaces goes.
  void Hold(std::size_t limit) {
    if (limit == held_) return;
    std::unique_ptr<tbb::global_control> next;
    if (limit != 0) {
      next = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                   limit);
    }
    control_ = std::move(next);
    held_ = limit;
  }

  const std::size_t default_ = static_cast<std::size_t>(tbb::info::default_concurrency());
  std::mutex mutex_;
  std::multiset<std::size_t> counts_;  // of the live executors that need more than the default
  std::unique_ptr<tbb::global_control> control_;
  std::size_t held_ = 0;  // control_'s limit, 0 for none
};

// An executor's share of the process's worker limit, from construction to destruction.
class WorkerDemand {
 public:
  explicit WorkerDemand(std::size_t threads)
      : threads_(WorkerLimit::Process().Needed(threads) ? threads : 0) {
    if (threads_ != 0) WorkerLimit::Process().Add(threads_);
  }
  ~WorkerDemand() {
    if (threads_ != 0) WorkerLimit::Process().Remove(threads_);
  }
  WorkerDemand(const WorkerDemand&) = delete;
  WorkerDemand& operator=(const WorkerDemand&) = delete;

 private:
  std::size_t threads_;  // 0: within the default
};

class TbbExecutor final : public Executor {
 public:
  explicit TbbExecutor(std::size_t threads)
      : demand_(threads),
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
  WorkerDemand demand_;  // before the arena, and outlives it
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
