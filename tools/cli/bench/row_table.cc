// The table for people: aligned columns (or Markdown's), the environment in a line above.
#include <cstdarg>
#include <functional>
#include <vector>

#include "tools/cli/bench/row_writers.h"

namespace edgeattn {
namespace cli {
namespace {

std::string Format(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  std::vsnprintf(&text[0], text.size() + 1, format, again);
  va_end(again);
  return text;
}

std::string Number(const std::optional<double>& v, const char* format) {
  return v ? Format(format, *v) : "-";
}

std::optional<double> Stat(const Row& r, double Statistics::*field) {
  if (!r.stats) return std::nullopt;
  return (*r.stats).*field;
}

std::optional<double> Mib(const std::optional<std::size_t>& bytes) {
  if (!bytes) return std::nullopt;
  return static_cast<double>(*bytes) / 1048576.0;
}

struct Column {
  const char* title;
  int width;  // negative: left-aligned
  std::function<std::string(const Row&)> cell;
};

std::string Kernels(const Row& r, const BenchEnvironment& env) {
  if (r.reference == ReferenceStatus::kSkipped && r.mode == "reference") {
    return Format("scalar reference: skipped, about %.0f s a call (--reference always runs it)",
                  r.reference_estimate_ms.value_or(0.0) / 1000.0);
  }
  return RowKernels(r, env);
}

std::vector<Column> Columns(const BenchEnvironment& env) {
  const auto count = [](std::size_t v) { return std::to_string(v); };
  return {
      {"shape", -7, [](const Row& r) { return r.group.shape; }},
      {"case", -6, [](const Row& r) { return std::string(CaseName(r.group)); }},
      {"B", 3, [count](const Row& r) { return count(r.group.batch); }},
      {"L", 6, [count](const Row& r) { return count(r.group.seq); }},
      {"Lk", 6, [count](const Row& r) { return count(r.group.key_len); }},
      {"d/h/kv", 10, [](const Row& r) {
         return Format("%zu/%zu/%zu", r.group.d_model, r.group.heads, r.group.kv_heads);
       }},
      {"mask", -6,
       [](const Row& r) {
         const std::string window =
             r.group.math.window != 0 ? " w" + std::to_string(r.group.math.window) : "";
         return std::string(r.group.causal ? "causal" : "none") + window;
       }},
      {"mode", -9, [](const Row& r) { return r.mode; }},
      {"kv", -4, [](const Row& r) { return r.kv_format.empty() ? "-" : r.kv_format; }},
      {"thr", 3, [count](const Row& r) { return count(r.threads); }},
      {"p50 ms", 10, [](const Row& r) {
         return r.stats ? Format("%.3f", r.stats->median_ms) : "skipped";
       }},
      {"p90 ms", 10, [](const Row& r) { return Number(Stat(r, &Statistics::p90_ms), "%.3f"); }},
      {"p99 ms", 10, [](const Row& r) { return Number(Stat(r, &Statistics::p99_ms), "%.3f"); }},
      {"sd ms", 9, [](const Row& r) { return Number(Stat(r, &Statistics::stddev_ms), "%.3f"); }},
      {"calls", 6, [count](const Row& r) { return r.stats ? count(r.stats->calls) : "-"; }},
      {"GFLOP/s", 8, [](const Row& r) { return Number(r.gflops(), "%.1f"); }},
      {"max abs err", 11, [](const Row& r) {
         return r.accuracy ? Format("%.2e", r.accuracy->max_abs_err) : "-";
       }},
      {"cosine", 10, [](const Row& r) {
         return r.accuracy ? Format("%.7f", r.accuracy->cosine) : "-";
       }},
      {"vs ref", 8, [](const Row& r) { return Number(r.speedup_vs_reference, "%.1fx"); }},
      {"vs 1st", 7, [](const Row& r) { return Number(r.speedup_vs_first_threads, "%.2fx"); }},
      {"wts MiB", 8, [](const Row& r) {
         return r.weight_bytes ? Format("%.2f", r.weight_bytes / 1048576.0) : "-";
       }},
      {"work MiB", 9, [](const Row& r) {
         return Format("%.2f", (r.workspace_bytes + r.cache_bytes) / 1048576.0);
       }},
      {"kv B/pos", 8, [count](const Row& r) {
         return r.cache_bytes_per_position ? count(r.cache_bytes_per_position) : "-";
       }},
      {"peak MiB", 9, [](const Row& r) { return Number(Mib(r.peak_rss_bytes), "%.1f"); }},
      {"load", 5, [](const Row& r) { return Number(r.load_average, "%.1f"); }},
      {"kernels", -1, [env](const Row& r) { return Kernels(r, env); }},
  };
}

class TableWriter : public RowWriter {
 public:
  TableWriter(const BenchEnvironment& env, std::FILE* out, bool markdown)
      : out_(out), markdown_(markdown), columns_(Columns(env)) {
    std::fprintf(out_, "edgeattn %s, CPU %s, Highway %s target %s, %s\n%s", env.version.c_str(),
                 env.cpu.c_str(), env.highway_version.c_str(), env.highway_target.c_str(),
                 UtcNow().c_str(),
                 markdown_ ? "\n" : "");
    std::vector<std::string> titles, rules;
    for (const Column& c : columns_) {
      titles.push_back(c.title);
      rules.push_back(c.width < 0 ? "---" : "---:");
    }
    Line(titles);
    if (markdown_) Line(rules);
    std::fflush(out_);
  }

  void Write(const Row& row) override {
    std::vector<std::string> cells;
    for (const Column& c : columns_) cells.push_back(c.cell(row));
    Line(cells);
    std::fflush(out_);
  }

 private:
  void Line(const std::vector<std::string>& cells) {
    std::string line = markdown_ ? "|" : "";
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const int width = columns_[i].width;
      const bool last = i + 1 == cells.size();
      if (markdown_) {
        line += " " + cells[i] + " |";
      } else {
        line += (i ? " " : "") + (last ? cells[i] : Format("%*s", width, cells[i].c_str()));
      }
    }
    std::fprintf(out_, "%s\n", line.c_str());
  }

  std::FILE* out_;
  bool markdown_;
  std::vector<Column> columns_;
};

}  // namespace

std::unique_ptr<RowWriter> MakeTableWriter(const BenchEnvironment& env, std::FILE* out,
                                           bool markdown) {
  return std::make_unique<TableWriter>(env, out, markdown);
}

}  // namespace cli
}  // namespace edgeattn
