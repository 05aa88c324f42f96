#include "tools/cli/bench/measurement.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

namespace edgeattn {
namespace cli {
namespace {

double Percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t below = static_cast<std::size_t>(pos);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (pos - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

}  // namespace

Statistics Summarize(std::vector<double> ms, std::size_t warmup) {
  std::sort(ms.begin(), ms.end());
  Statistics s;
  s.warmup = warmup;
  s.calls = ms.size();
  s.median_ms = Percentile(ms, 0.5);
  s.p90_ms = Percentile(ms, 0.9);
  s.p99_ms = Percentile(ms, 0.99);
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  double sum = 0.0;
  for (double x : ms) sum += x;
  s.mean_ms = sum / static_cast<double>(ms.size());
  double squares = 0.0;
  for (double x : ms) squares += (x - s.mean_ms) * (x - s.mean_ms);
  s.stddev_ms = ms.size() > 1 ? std::sqrt(squares / static_cast<double>(ms.size() - 1)) : 0.0;
  return s;
}

Statistics Measure(const std::function<void()>& call, const StopRule& rule,
                   const ProgressFn& progress) {
  using Clock = std::chrono::steady_clock;
  for (std::size_t i = 0; i < rule.warmup; ++i) {
    call();
    progress(true, 0, 0.0);
  }
  const auto done = [&](std::size_t calls, double seconds) {
    if (calls >= kMaxTimedCalls) return true;
    if (rule.repetitions > 0) return calls >= rule.repetitions;
    return seconds >= rule.min_time && calls >= rule.min_calls;
  };
  std::vector<double> ms;
  const Clock::time_point start = Clock::now();
  while (true) {
    const Clock::time_point t0 = Clock::now();
    call();
    const Clock::time_point t1 = Clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    const double seconds = std::chrono::duration<double>(t1 - start).count();
    progress(false, ms.size(), seconds);
    if (done(ms.size(), seconds)) break;
  }
  return Summarize(std::move(ms), rule.warmup);
}

}  // namespace cli
}  // namespace edgeattn
