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

// Reads an executor's worker count once for a whole call (every phase's items and scratch follow
// it) and throws edgeattn::Error naming `name` unless it is in [1, kMaxThreads]: an application
// executor whose count changed to 0 after its Context was made would otherwise run no items and
// return as if it had computed the result.
inline std::size_t CheckedWorkers(const char* name, const Executor& executor) {
  const std::size_t workers = executor.workers();
  if (workers == 0 || workers > kMaxThreads) {
    throw Error(std::string(name) + ": expected executor.workers() in [1, " +
                std::to_string(kMaxThreads) + "], got " + std::to_string(workers));
  }
  return workers;
}

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_THREAD_COUNT_H_
