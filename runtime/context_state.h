// What a Context holds: the executor that runs forward calls and the scratch they reuse.
#ifndef EDGEATTN_RUNTIME_CONTEXT_STATE_H_
#define EDGEATTN_RUNTIME_CONTEXT_STATE_H_

#include <atomic>
#include <memory>

#include "edgeattn/edgeattn.hpp"
#include "runtime/workspace.h"

namespace edgeattn {

struct EDGEATTN_HIDDEN Context::State {
  std::unique_ptr<Executor> owned_executor;
  Executor* executor = nullptr;
  Workspace workspace;
  std::atomic<bool> busy{false};  // a forward or decode call is running (ExclusiveUse)
};

// The error of a context used by two calls at once (ExclusiveUse).
extern const char kContextBusy[];

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_CONTEXT_STATE_H_
