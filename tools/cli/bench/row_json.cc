// JSON lines, and the row-to-JSON mapping the CSV shares.
#include <optional>

#include "tools/cli/bench/row_writers.h"

namespace edgeattn {
namespace cli {
namespace {

template <class T>
nlohmann::ordered_json Opt(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json OptText(const std::string& s) {
  return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s);
}

void AddWhat(const Row& r, const BenchEnvironment& env, nlohmann::ordered_json& j) {
  const BenchGroup& g = r.group;
  j["shape"] = g.shape;
  j["case"] = g.decode ? CaseName(g) : "forward";
  j["mode"] = r.mode;
  j["batch"] = g.batch;
  j["seq"] = g.seq;
  j["key_len"] = g.key_len;
  j["cache_len"] = g.cache_len;
  j["window"] = g.math.window;
  j["cross"] = g.cross;
  j["d_model"] = g.d_model;
  j["heads"] = g.heads;
  j["kv_heads"] = g.kv_heads;
  j["mask"] = g.causal ? "causal" : "none";
  j["int8_block"] = r.mode == "int8" ? nlohmann::ordered_json(r.int8_block) : nullptr;
  j["threads"] = r.threads;
  j["highway_version"] = r.mode == "reference" ? nullptr : OptText(env.highway_version);
  j["highway_target"] = r.mode == "reference" ? nullptr : OptText(env.highway_target);
  j["kernel"] = OptText(r.kernel);
  j["attention_kernel"] = OptText(r.attention_kernel);
}

void AddTimes(const Row& r, nlohmann::ordered_json& j) {
  const auto stat = [&](double Statistics::*field) {
    return r.stats ? nlohmann::ordered_json((*r.stats).*field) : nullptr;
  };
  j["warmup"] = r.stats ? nlohmann::ordered_json(r.stats->warmup) : nullptr;
  j["calls"] = r.stats ? nlohmann::ordered_json(r.stats->calls) : nullptr;
  j["median_ms"] = stat(&Statistics::median_ms);
  j["p90_ms"] = stat(&Statistics::p90_ms);
  j["p99_ms"] = stat(&Statistics::p99_ms);
  j["mean_ms"] = stat(&Statistics::mean_ms);
  j["stddev_ms"] = stat(&Statistics::stddev_ms);
  j["min_ms"] = stat(&Statistics::min_ms);
  j["max_ms"] = stat(&Statistics::max_ms);
  j["gflops"] = Opt(r.gflops());
}

void AddResults(const Row& r, nlohmann::ordered_json& j) {
  j["reference"] = ReferenceStatusName(r.reference);
  j["reference_estimate_ms"] = Opt(r.reference_estimate_ms);
  j["max_abs_err"] = r.accuracy ? nlohmann::ordered_json(r.accuracy->max_abs_err) : nullptr;
  j["cosine"] = r.accuracy ? nlohmann::ordered_json(r.accuracy->cosine) : nullptr;
  j["speedup_vs_reference"] = Opt(r.speedup_vs_reference);
  j["speedup_vs_first_threads"] = Opt(r.speedup_vs_first_threads);
  j["weight_bytes"] = r.weight_bytes ? nlohmann::ordered_json(r.weight_bytes) : nullptr;
  j["workspace_bytes"] = r.workspace_bytes;
  j["cache_bytes"] = r.cache_bytes;
  j["kv_format"] = OptText(r.kv_format);
  j["cache_bytes_per_position"] = r.cache_bytes_per_position;
  j["peak_rss_bytes"] = Opt(r.peak_rss_bytes);
  j["added_rss_bytes"] = Opt(r.added_rss_bytes);
}

class JsonLinesWriter : public RowWriter {
 public:
  JsonLinesWriter(const BenchEnvironment& env, std::FILE* out) : env_(env), out_(out) {}
  void Write(const Row& row) override {
    std::fprintf(out_, "%s\n", RowToJson(row, env_).dump().c_str());
    std::fflush(out_);
  }

 private:
  BenchEnvironment env_;
  std::FILE* out_;
};

}  // namespace

const char* ReferenceStatusName(ReferenceStatus status) {
  switch (status) {
    case ReferenceStatus::kMeasured: return "measured";
    case ReferenceStatus::kSkipped: return "skipped";
    case ReferenceStatus::kNever: return "never";
  }
  return "never";
}

nlohmann::ordered_json RowToJson(const Row& row, const BenchEnvironment& env) {
  nlohmann::ordered_json j;
  j["peer"] = "edgeattn";
  j["version"] = env.version;
  j["cpu"] = env.cpu;
  j["time"] = row.time;
  j["load_average"] = Opt(row.load_average);
  AddWhat(row, env, j);
  AddTimes(row, j);
  AddResults(row, j);
  return j;
}

std::string RowKernels(const Row& row, const BenchEnvironment& env) {
  if (row.mode == "reference") return "scalar reference";
  return row.kernel + " + " + row.attention_kernel + " (" + env.highway_target + ", Highway " +
         env.highway_version + ")";
}

std::unique_ptr<RowWriter> MakeJsonLinesWriter(const BenchEnvironment& env, std::FILE* out) {
  return std::make_unique<JsonLinesWriter>(env, out);
}

}  // namespace cli
}  // namespace edgeattn
