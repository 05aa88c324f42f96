// One call at a time on an object that calls mutate (a Context's workspace, a KvCache): a second
// concurrent caller gets edgeattn::Error instead of a data race.
#ifndef EDGEATTN_RUNTIME_EXCLUSIVE_USE_H_
#define EDGEATTN_RUNTIME_EXCLUSIVE_USE_H_

#include <atomic>
#include <string>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {

class ExclusiveUse {
 public:
  // what: e.g. "context: already in use by another call on another thread".
  ExclusiveUse(std::atomic<bool>& busy, const char* what) : busy_(busy) {
    if (busy_.exchange(true, std::memory_order_acquire)) throw Error(what);
  }
  ~ExclusiveUse() { busy_.store(false, std::memory_order_release); }
  ExclusiveUse(const ExclusiveUse&) = delete;
  ExclusiveUse& operator=(const ExclusiveUse&) = delete;

 private:
  std::atomic<bool>& busy_;
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_EXCLUSIVE_USE_H_
