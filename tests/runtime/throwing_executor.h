// An application executor of two workers that throws from its fail_at-th RunWorkers call, so that
// a call fails part-way, after the phases before it: for the tests of what a failure leaves.
#ifndef EDGEATTN_TESTS_RUNTIME_THROWING_EXECUTOR_H_
#define EDGEATTN_TESTS_RUNTIME_THROWING_EXECUTOR_H_

#include <cstddef>
#include <stdexcept>

#include "edgeattn/executor.hpp"

namespace edgeattn {
namespace testing_support {

class ThrowingExecutor final : public Executor {
 public:
  explicit ThrowingExecutor(std::size_t fail_at) : fail_at_(fail_at) {}
  std::size_t workers() const override { return 2; }
  void RunWorkers(WorkerFn fn) override {
    if (calls_++ == fail_at_) throw std::runtime_error("the application's pool failed");
    fn(0);
    fn(1);
  }

 private:
  std::size_t fail_at_;
  std::size_t calls_ = 0;
};

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_RUNTIME_THROWING_EXECUTOR_H_
