// Long runs: many forward calls on the tiny shape with 2 threads must not leak resident memory.
// EDGEATTN_SOAK_CALLS sets the count (default 5,000 here; docs/robustness.md reports 100,000).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "runtime/benchmark_case.h"

namespace edgeattn {
namespace {

double ResidentMiB() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * double(sysconf(_SC_PAGESIZE)) / (1024 * 1024);
}

// The calls run in five rounds, and the least any round grew the resident set must stay under
// 0.2 MiB: a leak grows every round by its bytes per call times the round's calls, while the
// process's one-off growth (the allocator oneTBB loads mapping a pool, the kernel's huge pages
// filling in) lands in one round; on a loaded machine such a step of 2-5 MiB has come within
// 5,000 calls of the tiny shape.
TEST(SoakTest, ResidentMemoryDoesNotGrow) {
  const char* env = std::getenv("EDGEATTN_SOAK_CALLS");
  const long calls = env != nullptr ? std::atol(env) : 5000;
  constexpr int kRounds = 5;
  const ShapeSpec& s = ContractShapes()[0];
  const RandomModel model(s.d_model, s.heads);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations(s.seq * s.d_model);
  std::vector<float> y(x.size());
  Context context(2);
  const auto forward = [&] {
    mha.Forward(context, {x.data(), 1, s.seq, s.d_model}, {y.data(), 1, s.seq, s.d_model});
  };
  for (int i = 0; i < 200; ++i) forward();
  const double start = ResidentMiB();
  double before = start, least_growth = 0.0;
  for (int round = 0; round < kRounds; ++round) {
    for (long i = 0; i < calls / kRounds; ++i) forward();
    const double after = ResidentMiB();
    least_growth = round == 0 ? after - before : std::min(least_growth, after - before);
    before = after;
  }
  std::printf("soak: %ld calls, resident %.2f MiB -> %.2f MiB, least growth of %d rounds %.2f MiB\n",
              calls, start, before, kRounds, least_growth);
  EXPECT_LT(least_growth, 0.2);
}

}  // namespace
}  // namespace edgeattn
