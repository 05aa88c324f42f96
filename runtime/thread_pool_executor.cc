#include <condition_variable>
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "edgeattn/executor.hpp"

namespace edgeattn {
namespace {

class ThreadPoolExecutor final : public Executor {
 public:
  explicit ThreadPoolExecutor(std::size_t threads) : workers_(threads) {
    for (std::size_t w = 1; w < workers_; ++w) threads_.emplace_back([this, w] { Work(w); });
  }

  ~ThreadPoolExecutor() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  std::size_t workers() const override { return workers_; }

  void RunWorkers(WorkerFn fn) override {
    std::lock_guard<std::mutex> one_call_at_a_time(run_mutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      pending_ = workers_ - 1;
      ++generation_;
    }
    start_.notify_all();
    fn(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void Work(std::size_t worker) {
    std::uint64_t seen = 0;
    while (true) {
      const WorkerFn* job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
      }
      (*job)(worker);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  const std::size_t workers_;
  std::vector<std::thread> threads_;
  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  const WorkerFn* job_ = nullptr;
  std::size_t pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace

std::unique_ptr<Executor> MakeThreadPoolExecutor(std::size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  return std::make_unique<ThreadPoolExecutor>(threads);
}

}  // namespace edgeattn
