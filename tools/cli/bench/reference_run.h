// The float reference of a bench group: its output (for the accuracy columns) and its time, or
// why it was not run.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_REFERENCE_RUN_H_
#define EDGEATTN_TOOLS_CLI_BENCH_REFERENCE_RUN_H_

#include <string>
#include <vector>

#include "tools/cli/bench/bench_options.h"
#include "tools/cli/bench/progress.h"
#include "tools/cli/bench/row.h"
#include "tools/cli/bench/workload.h"

namespace edgeattn {
namespace cli {

struct ReferenceResult {
  Row row;                    // mode "reference"
  std::vector<float> output;  // empty unless measured
};

// --reference auto runs the reference when one call is estimated to take at most as long as
// measuring the group's `rows` rows (--min-time each, and at least 1 s in all). The estimate
// times a 4-position reference call on the same model and scales it by the floating-point
// operations. The first call is also the output; further calls run until --min-time.
ReferenceResult RunReference(const BenchGroup& group, const RandomModel& model,
                             const Workload& workload, const BenchPlan& plan, std::size_t rows,
                             const std::string& label, Progress& progress);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_REFERENCE_RUN_H_
