// One line of `edgeattn bench` output: what was measured, on what, and the results.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_ROW_H_
#define EDGEATTN_TOOLS_CLI_BENCH_ROW_H_

#include <cstddef>
#include <optional>
#include <string>

#include "tools/cli/bench/bench_options.h"
#include "tools/cli/bench/measurement.h"

namespace edgeattn {
namespace cli {

// How the float reference stood for the rows of a group.
enum class ReferenceStatus {
  kMeasured,  // run: the rows have accuracy columns
  kSkipped,   // --reference auto judged it too slow (estimate in the row)
  kNever,     // --reference never
};

struct Accuracy {
  double max_abs_err = 0;
  double cosine = 0;
};

struct Row {
  BenchGroup group;
  std::string mode;         // "fp32", "int8", "bf16", "fp16" or "reference"
  std::string kernel;            // the projection kernel ("" for the reference)
  std::string attention_kernel;  // the attention-core kernel ("" for the reference)
  std::size_t threads = 1;  // as the context runs them (0 asked = every hardware thread)
  std::size_t int8_block = 0;
  std::optional<Statistics> stats;  // none for a skipped reference
  double flops = 0;                 // of one call
  ReferenceStatus reference = ReferenceStatus::kNever;
  std::optional<double> reference_estimate_ms;  // --reference auto: one call, estimated
  std::optional<Accuracy> accuracy;             // against the reference
  std::optional<double> speedup_vs_reference;
  std::optional<double> speedup_vs_first_threads;  // over the first thread count measured
  std::size_t weight_bytes = 0;                    // the operator's packed projections
  std::size_t workspace_bytes = 0;                 // the context's scratch memory
  std::size_t cache_bytes = 0;                     // decode: the KV cache
  std::string kv_format;                           // decode: its format ("" without a cache)
  std::size_t cache_bytes_per_position = 0;        // decode: per position of one sequence
  std::optional<std::size_t> peak_rss_bytes;       // the process's RSS high-water mark
  std::optional<std::size_t> added_rss_bytes;      // of which the row added
  std::string time;                                // UTC, when the row finished
  std::optional<double> load_average;              // the system's, when the row finished

  std::optional<double> gflops() const {
    if (!stats || stats->median_ms <= 0.0) return std::nullopt;
    return flops / stats->median_ms * 1e-6;
  }
};

const char* ReferenceStatusName(ReferenceStatus status);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_ROW_H_
