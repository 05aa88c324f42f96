// The thread counts callers may ask for, checked in one place for every entry point.
#ifndef EDGEATTN_RUNTIME_THREAD_COUNT_H_
#define EDGEATTN_RUNTIME_THREAD_COUNT_H_

#include <cstddef>
#include <string>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/executor.hpp"

namespace edgeattn {

// Throws edgeattn::Error naming `name` unless `threads` is 0 (one per hardware thread) or in
// [1, kMaxThreads]. A negative count that came through a size_t shows up here as a huge one.
inline void CheckThreadCount(const char* name, std::size_t threads) {
  if (threads > kMaxThreads) {
    throw Error(std::string(name) + ": expected 0 (one per hardware thread) or a count in [1, " +
                std::to_string(kMaxThreads) + "], got " + std::to_string(threads));
  }
}

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_THREAD_COUNT_H_
