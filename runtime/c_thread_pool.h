// An Executor over the C API's edgeattn_thread_pool: the caller's pool runs the workers.
#ifndef EDGEATTN_RUNTIME_C_THREAD_POOL_H_
#define EDGEATTN_RUNTIME_C_THREAD_POOL_H_

#include <memory>

#include "edgeattn/edgeattn.h"
#include "edgeattn/executor.hpp"

namespace edgeattn {

// Throws edgeattn::Error naming the field for a NULL run or a worker count outside
// [1, kMaxThreads]. RunWorkers throws edgeattn::Error when the pool broke its contract (an
// item out of range, run twice, or not run by the time run() returned, or an exception out of
// run()), after every item call the pool began has returned.
std::unique_ptr<Executor> MakeCallerPoolExecutor(const edgeattn_thread_pool& pool);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_C_THREAD_POOL_H_
