// Long runs: many forward calls on the tiny shape with 2 threads must not grow resident memory.
// EDGEATTN_SOAK_CALLS sets the count (default 5,000 here; docs/robustness.md reports 100,000).
#include <unistd.h>

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

TEST(SoakTest, ResidentMemoryDoesNotGrow) {
  const char* env = std::getenv("EDGEATTN_SOAK_CALLS");
  const long calls = env != nullptr ? std::atol(env) : 5000;
  const ShapeSpec& s = ContractShapes()[0];
  const RandomModel model(s.d_model, s.heads);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations(s.seq * s.d_model);
  std::vector<float> y(x.size());
  Context context(2);
  for (int i = 0; i < 200; ++i) {
    mha.Forward(context, {x.data(), 1, s.seq, s.d_model}, {y.data(), 1, s.seq, s.d_model});
  }
  const double start = ResidentMiB();
  for (long i = 0; i < calls; ++i) {
    mha.Forward(context, {x.data(), 1, s.seq, s.d_model}, {y.data(), 1, s.seq, s.d_model});
  }
  const double end = ResidentMiB();
  std::printf("soak: %ld calls, resident %.2f MiB -> %.2f MiB\n", calls, start, end);
  EXPECT_LT(end - start, 1.0);
}

}  // namespace
}  // namespace edgeattn
