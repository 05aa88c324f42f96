// What every bench row says about where it ran: the edgeattn version, the CPU, the kernels.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_ENVIRONMENT_H_
#define EDGEATTN_TOOLS_CLI_BENCH_ENVIRONMENT_H_

#include <optional>
#include <string>

namespace edgeattn {
namespace cli {

struct BenchEnvironment {
  std::string version;          // edgeattn::Version()
  std::string cpu;              // CpuModel()
  std::string highway_version;  // the Highway release the kernels were compiled against
  std::string highway_target;   // the Highway target dispatch chose for the kernels
};

BenchEnvironment DetectEnvironment();

// The CPU's model name as the system reports it, e.g. "AMD EPYC 9R14 96-Core Processor (family
// 25, model 17)"; "unknown" where the system does not say.
std::string CpuModel();

// The system's load average over the last minute (runnable and running processes: above the
// number of cores, rows share the CPU with others), where the system reports it.
std::optional<double> LoadAverage();

// The time now in UTC, ISO 8601 to the second ("2026-05-01T12:34:56Z").
std::string UtcNow();

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_ENVIRONMENT_H_
