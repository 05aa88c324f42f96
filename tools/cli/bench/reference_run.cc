#include "tools/cli/bench/reference_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "edgeattn/reference.hpp"
#include "tools/cli/bench/process_memory.h"

namespace edgeattn {
namespace cli {
namespace {

constexpr std::size_t kProbeRows = 4;

// Milliseconds of one reference call of `flops` operations on this model, from a small call.
double EstimateReferenceMs(const RandomModel& model, double flops) {
  const std::size_t d = model.config.d_model;
  const std::size_t kv_heads =
      model.config.num_kv_heads == 0 ? model.config.num_heads : model.config.num_kv_heads;
  const std::vector<float> x = RandomActivations(kProbeRows * d, 3);
  std::vector<float> out(x.size());
  const ConstTensor tx{x.data(), 1, kProbeRows, d};
  const auto t0 = std::chrono::steady_clock::now();
  ReferenceForward(model.config, model.view(), tx, tx, tx, {out.data(), 1, kProbeRows, d});
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double probe_flops =
      ForwardFlops(1, kProbeRows, kProbeRows, d, kv_heads * (d / model.config.num_heads));
  return ms * flops / probe_flops;
}

std::string Seconds(double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", ms / 1000.0);
  return text;
}

}  // namespace

ReferenceResult RunReference(const BenchGroup& group, const RandomModel& model,
                             const Workload& workload, const BenchPlan& plan, std::size_t rows,
                             const std::string& label, Progress& progress) {
  ReferenceResult result;
  Row& row = result.row;
  row.group = group;
  row.mode = "reference";
  row.flops = workload.reference_flops();
  row.reference = plan.reference == ReferencePolicy::kNever ? ReferenceStatus::kNever
                                                            : ReferenceStatus::kMeasured;
  if (plan.reference == ReferencePolicy::kAuto) {
    if (progress.Due()) progress.Show(label + " reference: estimating its time");
    row.reference_estimate_ms = EstimateReferenceMs(model, row.flops);
    const double budget_ms =
        std::max(1000.0, static_cast<double>(rows) * plan.measure.min_time * 1000.0);
    if (*row.reference_estimate_ms > budget_ms) row.reference = ReferenceStatus::kSkipped;
  }
  if (row.reference != ReferenceStatus::kMeasured) return result;
  progress.Show(label + " reference: first call" +
                (row.reference_estimate_ms ? ", about " + Seconds(*row.reference_estimate_ms)
                                           : std::string()));
  const RssWatch rss;
  const StopRule rule{0, 0, plan.measure.min_time, 1};
  row.stats = Measure([&] { workload.Reference(&result.output); }, rule,
                      [&](bool, std::size_t calls, double seconds) {
                        if (!progress.Due()) return;
                        progress.Show(label + " reference: " + CallsText(calls, seconds));
                      });
  row.speedup_vs_reference = 1.0;
  const RssPeak peak = rss.Read();
  row.peak_rss_bytes = peak.peak_bytes;
  row.added_rss_bytes = peak.added_bytes;
  return result;
}

}  // namespace cli
}  // namespace edgeattn
