#include "runtime/context_state.h"

namespace edgeattn {

Context::Context(std::size_t threads) : state_(std::make_unique<State>()) {
  state_->owned_executor = MakeTbbExecutor(threads);
  state_->executor = state_->owned_executor.get();
}

Context::Context(Executor& executor) : state_(std::make_unique<State>()) {
  if (executor.workers() == 0) {
    throw Error("Context: executor.workers() must be at least 1, got 0");
  }
  state_->executor = &executor;
}

Context::~Context() = default;

std::size_t Context::threads() const { return state_->executor->workers(); }

std::size_t Context::workspace_bytes() const { return state_->workspace.bytes(); }

}  // namespace edgeattn
