// Runs a bench plan: for each group its reference, then every precision at every thread count,
// writing each row as it finishes.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_BENCH_RUN_H_
#define EDGEATTN_TOOLS_CLI_BENCH_BENCH_RUN_H_

#include "tools/cli/bench/bench_options.h"

namespace edgeattn {
namespace cli {

int RunBench(const BenchPlan& plan);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_BENCH_RUN_H_
