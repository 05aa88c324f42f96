// The seeded random models of a bench plan: one per distinct shape, shared by its groups.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_MODEL_SET_H_
#define EDGEATTN_TOOLS_CLI_BENCH_MODEL_SET_H_

#include <memory>
#include <vector>

#include "runtime/benchmark_case.h"
#include "tools/cli/bench/bench_options.h"

namespace edgeattn {
namespace cli {

class ModelSet {
 public:
  // Builds each model's operators once, for every precision of the plan, so that a shape the
  // library rejects fails with its message before any row is printed.
  explicit ModelSet(const BenchPlan& plan);

  const RandomModel& For(const BenchGroup& group) const;

 private:
  std::vector<std::unique_ptr<RandomModel>> models_;
};

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_MODEL_SET_H_
