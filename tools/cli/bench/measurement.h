// Timing calls: warm-up, when to stop, and the statistics of the times.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_MEASUREMENT_H_
#define EDGEATTN_TOOLS_CLI_BENCH_MEASUREMENT_H_

#include <cstddef>
#include <functional>
#include <vector>

namespace edgeattn {
namespace cli {

// Untimed warm-up calls, then either exactly `repetitions` timed calls or, with repetitions 0,
// timed calls until both min_time seconds and min_calls calls have passed.
struct StopRule {
  std::size_t warmup = 2;
  std::size_t repetitions = 0;
  double min_time = 1.0;
  std::size_t min_calls = 30;
};

// A row never keeps more samples than this (80 MB), whatever the stop rule says.
inline constexpr std::size_t kMaxTimedCalls = 10000000;

struct Statistics {
  std::size_t warmup = 0;
  std::size_t calls = 0;  // timed calls
  double median_ms = 0, p90_ms = 0, p99_ms = 0;
  double mean_ms = 0, stddev_ms = 0, min_ms = 0, max_ms = 0;
};

// Percentiles interpolate linearly between the sorted samples (NumPy's default); the standard
// deviation is the sample one (n - 1), 0 for a single call. `ms` must not be empty.
Statistics Summarize(std::vector<double> ms, std::size_t warmup);

// Called after every call, warm-up included, with the timed calls so far and the seconds
// since the first timed call.
using ProgressFn = std::function<void(bool warming_up, std::size_t calls, double seconds)>;

Statistics Measure(const std::function<void()>& call, const StopRule& rule,
                   const ProgressFn& progress);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_MEASUREMENT_H_
