// edgeattn bench: times the forward pass (or decode steps) on seeded random weights and reports
// the spread, the memory and the error against the float reference measured in the same run.
#include <memory>

#include <CLI/CLI.hpp>

#include "tools/cli/bench/bench_options.h"
#include "tools/cli/bench/bench_run.h"
#include "tools/cli/commands.h"

namespace edgeattn {
namespace cli {

Command AddBenchCommand(CLI::App& parent) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* app = parent.add_subcommand(
      "bench", "Time the forward pass or decode steps on seeded random weights, with their "
               "error against the float reference");
  AddBenchOptions(app, o.get());
  return {app, [o] { return RunBench(MakeBenchPlan(*o)); }};
}

}  // namespace cli
}  // namespace edgeattn
