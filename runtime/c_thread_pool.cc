#include "runtime/c_thread_pool.h"

#include <atomic>
#include <string>
#include <thread>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace {

// One RunWorkers call as the pool sees it: the work and what the pool did with it. On the
// stack, so a call allocates nothing; the bookkeeping costs two atomic operations per item.
struct PoolPhase {
  WorkerFn fn;
  std::size_t workers;
  std::atomic<bool> started[kMaxThreads];
  std::atomic<std::size_t> completed{0};
  std::atomic<std::size_t> out_of_range{0};
  std::atomic<std::size_t> repeated{0};
  std::atomic<std::size_t> entered{0};  // item calls begun, and returned (or thrown out of)
  std::atomic<std::size_t> left{0};

  PoolPhase(WorkerFn f, std::size_t w) : fn(f), workers(w) {
    for (std::size_t i = 0; i < workers; ++i) started[i].store(false, std::memory_order_relaxed);
  }
};

// Counts a call of RunItem as left however it ends.
struct LeaveOnExit {
  PoolPhase& phase;
  ~LeaveOnExit() { phase.left.fetch_add(1, std::memory_order_acq_rel); }
};

void RunItem(void* item_context, std::size_t item) {
  PoolPhase& phase = *static_cast<PoolPhase*>(item_context);
  phase.entered.fetch_add(1, std::memory_order_acq_rel);
  const LeaveOnExit leave{phase};
  if (item >= phase.workers) {
    phase.out_of_range.fetch_add(1);
  } else if (phase.started[item].exchange(true)) {
    phase.repeated.fetch_add(1);  // never twice: two runs of one worker would share its scratch
  } else {
    phase.fn(item);
    phase.completed.fetch_add(1, std::memory_order_acq_rel);
  }
}

class CallerPoolExecutor final : public Executor {
 public:
  explicit CallerPoolExecutor(const edgeattn_thread_pool& pool) : pool_(pool) {}

  std::size_t workers() const override { return pool_.workers; }
  const char* kind() const override { return "caller's"; }

  void RunWorkers(WorkerFn fn) override {
    PoolPhase phase(fn, pool_.workers);
    try {
      pool_.run(pool_.user, pool_.workers, &RunItem, &phase);
    } catch (...) {
      WaitForItemsBegun(phase);
      throw Error("edgeattn_thread_pool.run: expected to return, got an exception out of it");
    }
    WaitForItemsBegun(phase);
    const std::size_t completed = phase.completed.load(std::memory_order_acquire);
    if (completed != pool_.workers || phase.out_of_range.load() != 0 ||
        phase.repeated.load() != 0) {
      throw Error("edgeattn_thread_pool.run: expected each of the " +
                  std::to_string(pool_.workers) +
                  " items run exactly once before run returns, got " + std::to_string(completed) +
                  " completed, " + std::to_string(phase.repeated.load()) + " repeated and " +
                  std::to_string(phase.out_of_range.load()) + " out of range");
    }
  }

 private:
  // Item calls the pool began before run() returned or threw may still be running on its other
  // threads: the phase, on this stack, must outlive them.
  static void WaitForItemsBegun(const PoolPhase& phase) {
    while (phase.left.load(std::memory_order_acquire) !=
           phase.entered.load(std::memory_order_acquire)) {
      std::this_thread::yield();
    }
  }

  const edgeattn_thread_pool pool_;
};

}  // namespace

std::unique_ptr<Executor> MakeCallerPoolExecutor(const edgeattn_thread_pool& pool) {
  if (pool.run == nullptr) {
    throw Error("edgeattn_thread_pool.run: expected a function, got NULL");
  }
  if (pool.workers == 0 || pool.workers > kMaxThreads) {
    throw Error("edgeattn_thread_pool.workers: expected a count in [1, " +
                std::to_string(kMaxThreads) + "], got " + std::to_string(pool.workers));
  }
  return std::make_unique<CallerPoolExecutor>(pool);
}

}  // namespace edgeattn
