// Many readers or one writer at a time on an object that several threads may read at once (a
// CrossAttentionMemory): a writer while anyone else uses it, or a reader while a writer does,
// gets edgeattn::Error instead of a data race.
#ifndef EDGEATTN_RUNTIME_SHARED_USE_H_
#define EDGEATTN_RUNTIME_SHARED_USE_H_

#include <atomic>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {

// users: the number of readers, or -1 while a writer runs.
class ReadingUse {
 public:
  ReadingUse(std::atomic<int>& users, const char* what) : users_(users) {
    int n = users_.load(std::memory_order_relaxed);
    do {
      if (n < 0) throw Error(what);
    } while (!users_.compare_exchange_weak(n, n + 1, std::memory_order_acquire,
                                           std::memory_order_relaxed));
  }
  ~ReadingUse() { users_.fetch_sub(1, std::memory_order_release); }
  ReadingUse(const ReadingUse&) = delete;
  ReadingUse& operator=(const ReadingUse&) = delete;

 private:
  std::atomic<int>& users_;
};

class WritingUse {
 public:
  WritingUse(std::atomic<int>& users, const char* what) : users_(users) {
    int idle = 0;
    if (!users_.compare_exchange_strong(idle, -1, std::memory_order_acquire)) throw Error(what);
  }
  ~WritingUse() { users_.store(0, std::memory_order_release); }
  WritingUse(const WritingUse&) = delete;
  WritingUse& operator=(const WritingUse&) = delete;

 private:
  std::atomic<int>& users_;
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_SHARED_USE_H_
