#include "tools/cli/bench/bench_run.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "runtime/error_metrics.h"
#include "tools/cli/bench/environment.h"
#include "tools/cli/bench/model_set.h"
#include "tools/cli/bench/process_memory.h"
#include "tools/cli/bench/progress.h"
#include "tools/cli/bench/reference_run.h"
#include "tools/cli/bench/row_writers.h"
#include "tools/cli/bench/workload.h"

namespace edgeattn {
namespace cli {
namespace {

std::string GroupLabel(const BenchGroup& g) {
  std::string label = g.shape + (g.decode ? std::string(" ") + CaseName(g) : "") + " B" + std::to_string(g.batch) +
                      " L" + std::to_string(g.seq) + " Lk" + std::to_string(g.key_len);
  label += g.causal ? " causal" : "";
  return label + (g.math.window != 0 ? " window" + std::to_string(g.math.window) : "");
}

std::unique_ptr<RowWriter> MakeWriter(OutputFormat format, const BenchEnvironment& env) {
  switch (format) {
    case OutputFormat::kJson:
      return MakeJsonLinesWriter(env, stdout);
    case OutputFormat::kCsv:
      return MakeCsvWriter(env, stdout);
    case OutputFormat::kMarkdown:
      return MakeTableWriter(env, stdout, true);
    case OutputFormat::kTable:
      break;
  }
  return MakeTableWriter(env, stdout, false);
}

// Everything the rows of one group share.
struct GroupRun {
  const BenchGroup& group;
  const RandomModel& model;
  const Workload& workload;
  const BenchPlan& plan;
  const ReferenceResult& reference;
  std::string label;
};

// Builds the operator and the context inside the memory watch, so that the row's added RSS
// counts the packed weights, the threads, the scratch memory and the cache.
Row MeasureRow(const GroupRun& run, const BenchMode& mode, KvFormat kv_format,
               std::size_t threads, Progress& progress) {
  Row row;
  row.group = run.group;
  row.int8_block = run.plan.int8_block;
  row.flops = run.workload.flops();
  row.reference = run.reference.row.reference;
  row.reference_estimate_ms = run.reference.row.reference_estimate_ms;
  const RssWatch rss;
  Config config = run.model.config;
  config.precision = mode.precision;
  config.int8_block = run.plan.int8_block;
  config.projection_kernel = mode.kernel;
  // The format of a forward call's keys and values, a cross-attention memory's and a cache's.
  config.kv_format = kv_format;
  const MultiheadAttention mha(config, run.model.view());
  row.mode = PrecisionName(mha.config().precision);  // auto: what it resolved to
  row.kernel = mha.projection_kernel();
  row.weight_bytes = mha.weight_bytes();
  row.attention_kernel = mha.attention_kernel();
  Context context(threads);
  row.threads = context.threads();
  KvCacheOptions kv;
  kv.format = kv_format;
  const std::unique_ptr<WorkloadRun> calls = run.workload.Start(mha, context, kv);
  row.kv_format = KvFormatName(mha.config().kv_format);
  if (run.workload.has_cache()) {
    row.kv_format = KvFormatName(kv_format != KvFormat::kAuto ? kv_format
                                                               : AutoChoiceForThisCpu().cache_format);
    row.cache_bytes_per_position = calls->cache_bytes_per_position();
    row.attention_kernel = calls->cache_kernel();
  }
  const std::string label = run.label + " " + row.mode + " (" + row.kernel + ") " +
                            (row.kv_format.empty() ? "" : "kv " + row.kv_format + " ") +
                            std::to_string(row.threads) + " thr";
  row.stats =
      Measure([&] { calls->Call(); }, run.plan.measure,
              [&](bool warming_up, std::size_t n, double seconds) {
                if (!progress.Due()) return;
                progress.Show(label + ": " + (warming_up ? "warm-up" : CallsText(n, seconds)));
              });
  const RssPeak peak = rss.Read();
  row.peak_rss_bytes = peak.peak_bytes;
  row.added_rss_bytes = peak.added_bytes;
  row.workspace_bytes = context.workspace_bytes();
  row.cache_bytes = calls->cache_bytes();
  if (!run.reference.output.empty()) {
    row.accuracy = Accuracy{MaxAbsDiff(calls->output(), run.reference.output),
                            Cosine(calls->output(), run.reference.output)};
    row.speedup_vs_reference = run.reference.row.stats->median_ms / row.stats->median_ms;
  }
  return row;
}

void RunGroup(const BenchGroup& g, const RandomModel& model, const BenchPlan& plan,
              RowWriter& writer, Progress& progress) {
  const std::unique_ptr<Workload> workload = MakeWorkload(g, model);
  const std::size_t rows = RowsPerGroup(plan);
  const std::string label = GroupLabel(g);
  // When each row finished, and how busy the machine was then.
  const auto write = [&](Row row) {
    row.time = UtcNow();
    row.load_average = LoadAverage();
    progress.Clear();
    writer.Write(row);
  };
  const ReferenceResult reference = RunReference(g, model, *workload, plan, rows, label, progress);
  if (plan.reference != ReferencePolicy::kNever) write(reference.row);
  const GroupRun run{g, model, *workload, plan, reference, label};
  for (const BenchMode& mode : plan.modes) {
    for (KvFormat kv_format : KvFormatsOf(plan, mode)) {
      std::optional<double> first_ms;
      for (std::size_t threads : plan.threads) {
        Row row = MeasureRow(run, mode, kv_format, threads, progress);
        if (!first_ms) first_ms = row.stats->median_ms;
        row.speedup_vs_first_threads = *first_ms / row.stats->median_ms;
        write(row);
      }
    }
  }
}

}  // namespace

int RunBench(const BenchPlan& plan) {
  const ModelSet models(plan);
  const BenchEnvironment env = DetectEnvironment();
  const std::unique_ptr<RowWriter> writer = MakeWriter(plan.format, env);
  Progress progress(stderr);
  for (const BenchGroup& g : plan.groups) {
    RunGroup(g, models.For(g), plan, *writer, progress);
  }
  return 0;
}

}  // namespace cli
}  // namespace edgeattn
