#include "runtime/context_state.h"
#include "runtime/thread_count.h"

namespace edgeattn {

Context::Context(std::size_t threads) : state_(std::make_unique<State>()) {
  CheckThreadCount("Context: threads", threads);
#if EDGEATTN_WITH_TBB
  state_->owned_executor = MakeTbbExecutor(threads);
#else
  state_->owned_executor = MakeThreadPoolExecutor(threads);
#endif
  state_->executor = state_->owned_executor.get();
}

Context::Context(Executor& executor) : state_(std::make_unique<State>()) {
  CheckedWorkers("Context", executor);
  state_->executor = &executor;
}

Context::~Context() = default;

std::size_t Context::threads() const { return state_->executor->workers(); }

const Executor& Context::executor() const { return *state_->executor; }

std::size_t Context::workspace_bytes() const { return state_->workspace.bytes(); }

}  // namespace edgeattn
