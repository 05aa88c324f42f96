// How edgeattn runs work on threads. A forward call splits each of its phases into work items
// that write disjoint outputs, and every item computes the same whichever worker runs it, so
// results never depend on timing or thread count.
// Applications may supply their own Executor to run edgeattn on a pool they already have.
#ifndef EDGEATTN_EXECUTOR_HPP_
#define EDGEATTN_EXECUTOR_HPP_

#include <cstddef>
#include <memory>
#include <type_traits>

#include "edgeattn/build_config.h"
#include "edgeattn/export.hpp"

namespace edgeattn {

// Most workers an executor may have (and threads a Context may ask for): far beyond the cores
// of any device edgeattn targets, small enough that per-worker scratch stays bounded.
// MakeTbbExecutor, MakeThreadPoolExecutor and Context throw edgeattn::Error past it.
inline constexpr std::size_t kMaxThreads = 256;

// A non-owning reference to a callable void(std::size_t worker); copying it never allocates.
class WorkerFn {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, WorkerFn>>>
  WorkerFn(const F& f)  // NOLINT(google-explicit-constructor): used like a function parameter
      : object_(&f), call_([](const void* object, std::size_t worker) {
          (*static_cast<const F*>(object))(worker);
        }) {}
  void operator()(std::size_t worker) const { call_(object_, worker); }

 private:
  const void* object_;
  void (*call_)(const void*, std::size_t);
};

class EDGEATTN_API Executor {
 public:
  virtual ~Executor() = default;
  // Number of workers RunWorkers calls, in [1, kMaxThreads]; fixed for the executor's lifetime.
  // Each call reads it once at its start and refuses a count outside that range.
  virtual std::size_t workers() const = 0;
  // Calls fn(w) exactly once for each w in [0, workers()), possibly concurrently, and returns
  // when all calls have returned. fn never throws.
  virtual void RunWorkers(WorkerFn fn) = 0;
  // What runs the workers, for diagnostics (`edgeattn info`): "oneTBB", "std::thread",
  // "serial", "caller's" (the C API's edgeattn_thread_pool) or, by default, "application".
  virtual const char* kind() const { return "application"; }
  // Whether an idle worker busy-waits a little for the next phase before it sleeps: faster
  // back-to-back phases for a little CPU time (battery) after each call.
  virtual bool spins() const { return false; }
};

// Runs every worker on the calling thread, one after another.
class SerialExecutor final : public Executor {
 public:
  explicit SerialExecutor(std::size_t workers = 1) : workers_(workers == 0 ? 1 : workers) {}
  std::size_t workers() const override { return workers_; }
  void RunWorkers(WorkerFn fn) override {
    for (std::size_t w = 0; w < workers_; ++w) fn(w);
  }
  const char* kind() const override { return "serial"; }

 private:
  std::size_t workers_;
};

#if EDGEATTN_WITH_TBB
// A oneTBB task_arena with `threads` slots (0: one per hardware thread; at most kMaxThreads).
// The calling thread joins the work as worker 0; oneTBB starts its worker threads on first use
// and puts them to sleep (after a short spin of its own) when the arena has no work. More
// threads than CPUs get their threads: while such executors live, oneTBB's process-wide worker
// limit (tbb::global_control::max_allowed_parallelism) is raised to the largest count among
// them, unless the app holds a lower one of its own (oneTBB keeps the lowest). The worker
// threads oneTBB starts stay, asleep, until the process ends (MakeThreadPoolExecutor's are
// joined when it is destroyed).
// Only in builds with oneTBB (CMake option EDGEATTN_WITH_TBB, the default).
EDGEATTN_API std::unique_ptr<Executor> MakeTbbExecutor(std::size_t threads);
#endif

// A plain pool of threads - 1 std::threads plus the calling thread (0: one per hardware
// thread; at most kMaxThreads), started here and joined by the destructor. If a thread cannot
// be started, the ones already started are stopped and joined and edgeattn::Error is thrown.
// With `spin`, between phases a worker spins for at most 50 microseconds before it blocks on a
// condition variable; without, it blocks at once (slower phase changes, no busy CPU time).
// Either way an idle pool uses no CPU. Calls to RunWorkers from several threads are
// serialised. The default executor of a Context in builds without oneTBB; use it too under
// ThreadSanitizer (Debian's oneTBB is not instrumented) or wherever oneTBB is unwanted.
EDGEATTN_API std::unique_ptr<Executor> MakeThreadPoolExecutor(std::size_t threads,
                                                              bool spin = true);

}  // namespace edgeattn

#endif  // EDGEATTN_EXECUTOR_HPP_
