#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/executor.hpp"
#include "runtime/thread_count.h"

namespace edgeattn {
namespace {

// How long a thread spins for the next phase (or for the workers to finish) before it blocks on
// a condition variable. A forward call runs several phases back to back, and a blocked thread
// takes tens of microseconds to wake; after the call, the spin ends within this bound, so an
// idle pool uses no CPU.
constexpr std::chrono::microseconds kSpin(50);

template <class Pred>
bool SpinUntil(bool spin, const Pred& done) {
  if (!spin) return done();
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
  }
  return true;
}

class ThreadPoolExecutor;
// The pool whose job this thread is running, if any.
thread_local const ThreadPoolExecutor* running_here = nullptr;

class ThreadPoolExecutor final : public Executor {
 public:
  ThreadPoolExecutor(std::size_t threads, bool spin) : workers_(threads), spin_(spin) {
    threads_.reserve(workers_ - 1);
    try {
      for (std::size_t w = 1; w < workers_; ++w) threads_.emplace_back([this, w] { Work(w); });
    } catch (const std::system_error& e) {
      // The destructor does not run for a failed constructor: stop and join here, or the
      // started workers would wait on condition variables that are about to be destroyed.
      const std::size_t started = threads_.size();
      StopAndJoin();
      throw Error("MakeThreadPoolExecutor: could start only " + std::to_string(started) +
                  " of the " + std::to_string(workers_ - 1) + " threads of a " +
                  std::to_string(workers_) + "-worker pool: " + e.what());
    }
  }

  ~ThreadPoolExecutor() override { StopAndJoin(); }

  std::size_t workers() const override { return workers_; }
  const char* kind() const override { return "std::thread"; }
  bool spins() const override { return spin_; }

  void RunWorkers(WorkerFn fn) override {
    if (running_here == this) {
      // Called from inside one of this pool's jobs (by a worker, or by the caller while it runs
      // worker 0): the pool is busy with the outer job, so waiting for it would deadlock.
      return RunAllHere(fn);
    }
    std::unique_lock<std::mutex> one_call_at_a_time(run_mutex_, std::defer_lock);
    if (running_here != nullptr) {
      // Called from a job of another pool: waiting here for this pool, busy with a job of its
      // own, could close a cycle (two pools whose jobs each call edgeattn over the other, every
      // thread waiting). Run every worker on this thread instead when it is busy.
      if (!one_call_at_a_time.try_lock()) return RunAllHere(fn);
    } else {
      one_call_at_a_time.lock();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      pending_.store(workers_ - 1);
      generation_.fetch_add(1);
    }
    start_.notify_all();
    const ThreadPoolExecutor* const outer = running_here;  // another pool's worker may call us
    running_here = this;
    fn(0);
    running_here = outer;
    const auto finished = [this] { return pending_.load() == 0; };
    if (!SpinUntil(spin_, finished)) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, finished);
    }
  }

 private:
  // Every worker's share on the calling thread; results do not depend on who runs a worker.
  void RunAllHere(const WorkerFn& fn) {
    for (std::size_t w = 0; w < workers_; ++w) fn(w);
  }

  void StopAndJoin() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true);
    }
    start_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  void Work(std::size_t worker) {
    running_here = this;
    std::uint64_t seen = 0;
    while (true) {
      const auto started = [&] { return stop_.load() || generation_.load() != seen; };
      const WorkerFn* job;
      if (!SpinUntil(spin_, started)) {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, started);
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stop_.load()) return;
        seen = generation_.load();
        job = job_;
      }
      (*job)(worker);
      if (pending_.fetch_sub(1) == 1) {
        // Taking the mutex orders this with a caller about to wait, so no wake-up is lost.
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_one();
      }
    }
  }

  const std::size_t workers_;
  const bool spin_;
  std::vector<std::thread> threads_;
  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  const WorkerFn* job_ = nullptr;  // guarded by mutex_
  std::atomic<std::size_t> pending_{0};
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace

std::unique_ptr<Executor> MakeThreadPoolExecutor(std::size_t threads, bool spin) {
  CheckThreadCount("MakeThreadPoolExecutor: threads", threads);
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  return std::make_unique<ThreadPoolExecutor>(threads, spin);
}

}  // namespace edgeattn
