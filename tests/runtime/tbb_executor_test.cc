// oneTBB executors with more threads than the CPUs: every worker index runs, and oneTBB's
// worker limit follows the largest of them while they live, so that oneTBB writes no warning to
// the app's stderr.
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"

#if EDGEATTN_WITH_TBB
#include <oneapi/tbb/global_control.h>

namespace edgeattn {
namespace {

std::size_t MoreThreadsThanCpus() { return MakeTbbExecutor(0)->workers() + 1; }

std::size_t WorkerLimit() {
  return tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
}

// Runs two executors of more threads than CPUs, of different counts, with this process's stderr
// in a file, then exits 0 if every worker index ran once per call and nothing was written there;
// otherwise prints what was and exits 1. For a death test's child: oneTBB warns once per process.
void RunOversubscribedWithStderrCaptured() {
  FILE* captured = tmpfile();
  const int saved = dup(STDERR_FILENO);
  if (captured == nullptr || saved < 0 || dup2(fileno(captured), STDERR_FILENO) < 0) _Exit(2);
  bool each_once = true;
  {
    const std::unique_ptr<Executor> executors[] = {MakeTbbExecutor(MoreThreadsThanCpus()),
                                                   MakeTbbExecutor(MoreThreadsThanCpus() + 1)};
    for (int call = 0; call < 20; ++call) {
      for (const auto& executor : executors) {
        std::vector<std::atomic<int>> runs(executor->workers());
        executor->RunWorkers([&](std::size_t w) { runs[w].fetch_add(1); });
        for (const auto& r : runs) each_once = each_once && r.load() == 1;
      }
    }
  }
  fflush(stderr);
  std::string written(4096, '\0');
  rewind(captured);
  written.resize(fread(&written[0], 1, written.size(), captured));
  dup2(saved, STDERR_FILENO);
  if (each_once && written.empty()) _Exit(0);
  fprintf(stderr, "every worker once: %d; written to stderr: '%s'\n", each_once, written.c_str());
  _Exit(1);
}

TEST(TbbExecutorDeathTest, MoreThreadsThanCpusWriteNothingToStderr) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: oneTBB warns only once
  EXPECT_EXIT(RunOversubscribedWithStderrCaptured(), ::testing::ExitedWithCode(0), "");
}

// The limit follows the largest executor alive; oneTBB would keep the lowest of two controls.
TEST(TbbExecutorTest, WorkerLimitFollowsTheLargestExecutorAlive) {
  const std::size_t before = WorkerLimit();
  const std::size_t threads = MoreThreadsThanCpus();
  {
    const std::unique_ptr<Executor> executor = MakeTbbExecutor(threads);
    EXPECT_EQ(WorkerLimit(), threads);
    {
      const std::unique_ptr<Executor> larger = MakeTbbExecutor(threads + 2);
      EXPECT_EQ(WorkerLimit(), threads + 2);
      const std::unique_ptr<Executor> same = MakeTbbExecutor(threads + 2);
      const std::unique_ptr<Executor> fewer = MakeTbbExecutor(1);
      EXPECT_EQ(WorkerLimit(), threads + 2) << "an executor within the limit leaves it alone";
    }
    EXPECT_EQ(WorkerLimit(), threads);
  }
  EXPECT_EQ(WorkerLimit(), before);
}

}  // namespace
}  // namespace edgeattn
#endif  // EDGEATTN_WITH_TBB
