#include "tools/cli/bench/bench_options.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <limits>
#include <utility>

#include <CLI/CLI.hpp>

#include "runtime/benchmark_case.h"
#include "runtime/text_checks.h"
#include "tools/cli/bench/count_lists.h"
#include "tools/cli/bench/process_memory.h"
#include "tools/cli/config_options.h"
#include "tools/cli/layer_options.h"
#include "tools/cli/name_list.h"
#include "tools/cli/whole_number.h"

namespace edgeattn {
namespace cli {

const char* CaseName(const BenchGroup& group) {
  if (!group.decode) return "fwd";
  switch (group.step) {
    case DecodeStep::kBeams:
      return "beams";
    case DecodeStep::kCrossMemory:
      return "xmem";
    case DecodeStep::kCrossReproject:
      return "xproj";
    case DecodeStep::kSelf:
      break;
  }
  return "decode";
}

namespace {

// What is measured: the shapes, lengths, batch, masks, decode caches and thread counts.
void AddWorkloadOptions(CLI::App* app, BenchOptions* o) {
  app->add_option("--shape", o->shapes,
                  "Contract shapes, e.g. tiny,bert (all: every one); decode: one new position "
                  "against a KV cache of 512 (d 768, 12 heads)")
      ->check(NameList({"tiny", "minilm", "bert", "whisper", "decode", "all"}))
      ->capture_default_str();
  app->add_option("--seq", o->seq,
                  "Query lengths L: 128, a list 64,128 or a sweep 64:4096:x2 / 64:512:+64 "
                  "(decode: new positions per step, default 1)")
      ->check(NotEmpty(kCountListExpected));
  app->add_option("--d-model", o->d_model, "Custom shape: model width (with --heads and --seq)")
      ->check(CheckWholeNumber);
  app->add_option("--heads", o->heads, "Custom shape: number of heads")
      ->check(CheckWholeNumber);
  app->add_option("--kv-heads", o->kv_heads,
                  "Key/value heads, a divisor of the heads (grouped-query attention; default: "
                  "the heads)")
      ->check(CheckWholeNumber);
  app->add_option("--batch", o->batch, "Sequences per call")
      ->check(CheckWholeNumber)
      ->capture_default_str();
  app->add_option("--key-len", o->key_len,
                  "Cross-attention: key/value lengths Lk (list or sweep; default: "
                  "self-attention)")
      ->check(NotEmpty(kCountListExpected));
  app->add_flag("--causal", o->causal, "Causal mask (query i attends keys j <= i)");
  app->add_option("--decode", o->decode,
                  "Time decode steps against a KV cache of this many positions (list or sweep)")
      ->check(NotEmpty(kCountListExpected));
  app->add_option("--threads", o->threads,
                  "Thread counts: 1,2 or a sweep 1:8:x2; 0: all CPUs, measured once with the "
                  "count it equals (default: 1 and all CPUs)")
      ->check(NotEmpty(kCountListExpected));
}

// How the projections and keys/values are stored: precisions, kernels, K/V formats.
void AddKernelOptions(CLI::App* app, BenchOptions* o) {
  CLI::Option* precision =
      app->add_option("--precision", o->precisions,
                      "Projection weight formats to measure, e.g. fp32,int8,bf16,fp16 (auto: "
                      "this CPU's choice, rows name what it resolved to)")
          ->check(NameList(PrecisionNames()))
          ->capture_default_str();
  app->add_option("--kernel", o->kernels,
                  "Projection kernels to measure instead, by name (edgeattn info lists this "
                  "CPU's), e.g. qd8_qc8w_vnni_4x4v,qd8_qc8w_i16_1x1v")
      ->check(NameList({}))
      ->excludes(precision);
  app->add_option("--kv-format", o->kv_formats,
                  "K/V formats to measure (forward calls' keys and values, cross-attention "
                  "memories, decode steps' KV caches), e.g. fp32,bf16,fp16,int8, or auto "
                  "(default: auto for --precision auto, fp32 for the others)")
      ->check(NameList(KvFormatNames()))
      ->capture_default_str();
  app->add_option("--int8-block", o->int8_block,
                  "int8: activation values per quantization scale (multiple of 4)")
      ->check(CheckWholeNumber)
      ->capture_default_str();
}

// How each row is timed, and its accuracy columns.
void AddMeasureOptions(CLI::App* app, BenchOptions* o) {
  app->add_option("--warmup", o->measure.warmup, "Untimed calls before each row")
      ->check(CheckWholeNumber)
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app->add_option("--repetitions", o->measure.repetitions,
                  "Timed calls per row, exactly (default 0: until --min-time and --min-calls)")
      ->check(CheckWholeNumber)
      ->check(CLI::Range(std::size_t{0}, kMaxTimedCalls))
      ->capture_default_str();
  app->add_option("--min-time", o->measure.min_time, "Seconds to measure each row, at least")
      ->check(NotEmpty("a number of seconds in [0, 3600]"))
      // CLI::Range lets NaN through (no comparison fails), which no measured time ever reaches.
      ->check(
          [](const std::string& text) {
            return std::isnan(std::strtod(text.c_str(), nullptr))
                       ? "expected a number of seconds in [0, 3600], got " + text
                       : std::string();
          },
          "FINITE")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app->add_option("--min-calls", o->measure.min_calls, "Calls to measure each row, at least")
      ->check(CheckWholeNumber)
      ->check(CLI::Range(std::size_t{1}, kMaxTimedCalls))
      ->capture_default_str();
  app->add_option("--reference", o->reference,
                  "The float reference (accuracy columns): auto skips it where one call would "
                  "take longer than measuring the rows it serves")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
}

}  // namespace

void AddBenchOptions(CLI::App* app, BenchOptions* o) {
  AddWorkloadOptions(app, o);
  AddKernelOptions(app, o);
  AddMeasureOptions(app, o);
  app->add_option("--format", o->format, "Output: table, json (one object per line), csv, markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}))
      ->capture_default_str();
  app->add_flag("--json", o->json, "Same as --format json");
  AddMathFlags(app, &o->math);
  app->parse_complete_callback([o] {
    for (std::vector<std::string>* list :
         {&o->shapes, &o->precisions, &o->kernels, &o->kv_formats}) {
      *list = SplitNameLists(*list);
    }
  });
}

namespace {

struct ModelSpec {
  std::string name;
  std::size_t d_model, heads;
  std::vector<std::size_t> seqs;    // the shape's query lengths
  std::vector<std::size_t> caches;  // the decode shape's cache length
  std::size_t window = 0;           // the decode shape's windowed row
};

std::vector<ModelSpec> SelectModels(const BenchOptions& o) {
  const bool all = std::find(o.shapes.begin(), o.shapes.end(), "all") != o.shapes.end();
  if (o.d_model != 0 || o.heads != 0) {
    if (!all || o.shapes.size() != 1) {
      throw Error("--shape and --d-model/--heads: expected a contract shape or a custom one, "
                  "not both");
    }
    if (o.d_model == 0 || o.heads == 0 || o.seq.empty()) {
      throw Error("--d-model, --heads and --seq: expected all three for a custom shape");
    }
    return {{"custom", o.d_model, o.heads, {}, {}}};
  }
  std::vector<ModelSpec> models;
  for (const ShapeSpec& s : ContractShapes()) {
    if (all || std::find(o.shapes.begin(), o.shapes.end(), s.name) != o.shapes.end()) {
      models.push_back({s.name, s.d_model, s.heads, {s.seq}, {}});
    }
  }
  if (all || std::find(o.shapes.begin(), o.shapes.end(), "decode") != o.shapes.end()) {
    const ShapeSpec& s = DecodeShape();
    models.push_back({s.name, s.d_model, s.heads, {}, {s.seq}});
    // A windowed cache at a long context: the ring holds the window, whatever the length.
    const WindowedDecodeSpec& w = WindowedDecodeShape();
    if (o.decode.empty() && o.math.window == 0) {
      models.push_back({s.name, s.d_model, s.heads, {}, {w.cache_len}, w.window});
    }
  }
  return models;
}

void CheckModel(const BenchOptions& o, const ModelSpec& m) {
  CheckHeadOptions(m.d_model, m.heads, o.kv_heads);
  CheckRotaryDimOption(o.math.ToMath(), m.d_model / m.heads);
}

// The decode shape's further steps: beam search's batch of kBeams beams reordering the cache
// before each step, and a Whisper-tiny decoder's cross-attention step (CrossStepShape) with and
// without a CrossAttentionMemory.
constexpr std::size_t kBeams = 4;

void AddDecodeStepGroups(const std::vector<BenchGroup>& decode, std::vector<BenchGroup>* groups) {
  for (BenchGroup g : decode) {
    g.batch = kBeams;
    g.step = DecodeStep::kBeams;
    groups->push_back(g);
  }
  const ShapeSpec& whisper = CrossStepShape();
  for (const DecodeStep step : {DecodeStep::kCrossMemory, DecodeStep::kCrossReproject}) {
    BenchGroup g = decode.front();
    g.shape = whisper.name;
    g.d_model = whisper.d_model;
    g.heads = g.kv_heads = whisper.heads;
    g.key_len = whisper.seq;
    g.cache_len = 0;
    g.cross = true;
    g.causal = false;
    g.math = AttentionMath{};  // plain cross-attention: the step maths' flags are the decoder's
    g.step = step;
    groups->push_back(g);
  }
}

// The lengths of one model's groups: each query length, key length (0: self-attention) and
// cache length (0: a forward pass), and how many groups they make.
struct GroupAxes {
  std::vector<std::size_t> seqs, keys, caches;
  bool decode = false;
  std::size_t groups = 0;
};

// The decode shape's own model (not its windowed row) adds AddDecodeStepGroups' groups.
bool HasDecodeSteps(const ModelSpec& m) { return m.name == DecodeShape().name && m.window == 0; }

GroupAxes AxesOf(const BenchOptions& o, const ModelSpec& m) {
  GroupAxes a;
  a.caches = m.caches;
  if (!o.decode.empty()) a.caches = ParseCountList("--decode", o.decode, 0, kMaxSequenceLength);
  a.decode = !a.caches.empty();
  if (a.decode && !o.key_len.empty()) {
    throw Error("--key-len: decode steps attend to their cache; --decode sets its length");
  }
  const std::vector<std::size_t> default_seqs = a.decode ? std::vector<std::size_t>{1} : m.seqs;
  a.seqs = o.seq.empty() ? default_seqs : ParseCountList("--seq", o.seq, 1, kMaxSequenceLength);
  a.keys = o.key_len.empty() ? std::vector<std::size_t>{0}
                             : ParseCountList("--key-len", o.key_len, 1, kMaxSequenceLength);
  if (!a.decode) a.caches = {0};
  // Below 2^64: each list holds at most kMaxListValues values.
  const std::size_t own = a.seqs.size() * a.keys.size() * a.caches.size();
  // A beams group for each decode group, and the two cross-attention steps.
  a.groups = HasDecodeSteps(m) ? 2 * own + 2 : own;
  return a;
}

// The groups of one model: each query length, key length and cache length.
void AddGroups(const BenchOptions& o, const ModelSpec& m, const GroupAxes& a,
               std::vector<BenchGroup>* groups) {
  for (std::size_t seq : a.seqs) {
    for (std::size_t key : a.keys) {
      for (std::size_t cache : a.caches) {
        BenchGroup g;
        g.shape = m.name;
        g.d_model = m.d_model;
        g.heads = m.heads;
        g.kv_heads = o.kv_heads == 0 ? m.heads : o.kv_heads;
        g.batch = o.batch;
        g.seq = seq;
        g.decode = a.decode;
        g.cache_len = cache;
        g.cross = key != 0;
        g.key_len = a.decode ? cache + seq : (key != 0 ? key : seq);
        g.causal = a.decode || o.causal;
        g.math = o.math.ToMath();
        if (m.window != 0) g.math.window = m.window;
        if (g.key_len > kMaxSequenceLength) {
          throw Error("--decode: cache plus new positions must stay within " +
                      Str(kMaxSequenceLength) + ", got " + Str(g.key_len));
        }
        groups->push_back(g);
      }
    }
  }
  if (HasDecodeSteps(m)) {
    const std::vector<BenchGroup> decode(groups->end() - a.seqs.size() * a.caches.size(),
                                         groups->end());
    AddDecodeStepGroups(decode, groups);
  }
}

// The lists and sweeps given, which multiply the rows.
std::string SweepsGiven(const BenchOptions& o) {
  const std::pair<const char*, const std::string*> lists[] = {
      {"--seq", &o.seq}, {"--key-len", &o.key_len}, {"--decode", &o.decode},
      {"--threads", &o.threads}};
  std::string given;
  for (const auto& [flag, text] : lists) {
    if (!text->empty()) given += (given.empty() ? "" : " ") + std::string(flag) + " " + *text;
  }
  return given.empty() ? "--shape, --precision, --kernel, --kv-format" : given;
}

// Refused before any group is built or measured.
void CheckRowCount(const BenchOptions& o, const BenchPlan& plan, std::size_t groups) {
  const std::size_t per_group =
      RowsPerGroup(plan) + (plan.reference != ReferencePolicy::kNever ? 1 : 0);
  if (groups > kMaxBenchRows || groups * per_group > kMaxBenchRows) {
    throw Error(SweepsGiven(o) + ": expected at most " + Str(kMaxBenchRows) +
                " rows in one run, got " + Str(groups * per_group) + " (" + Str(groups) +
                " groups of shape, L, Lk and cache length times " + Str(per_group) +
                " per group)");
  }
}

// Every model's groups, their number checked first.
void AddAllGroups(const BenchOptions& o, BenchPlan* plan) {
  const std::vector<ModelSpec> models = SelectModels(o);
  std::vector<GroupAxes> axes;
  std::size_t groups = 0;
  for (const ModelSpec& m : models) {
    CheckModel(o, m);
    axes.push_back(AxesOf(o, m));
    groups += axes.back().groups;
  }
  CheckRowCount(o, *plan, groups);
  for (std::size_t i = 0; i < models.size(); ++i) AddGroups(o, models[i], axes[i], &plan->groups);
}

// A group's inputs, outputs and reference output must fit in memory: refuse rather than have
// the system kill the process part-way.
void CheckMemory(const BenchGroup& g) {
  const double floats = static_cast<double>(g.batch) * static_cast<double>(g.d_model) *
                        (3.0 * static_cast<double>(g.seq) + 2.0 * static_cast<double>(g.key_len));
  const std::optional<std::size_t> physical = PhysicalMemoryBytes();
  if (physical && floats * sizeof(float) > static_cast<double>(*physical)) {
    char text[200];
    std::snprintf(text, sizeof(text),
                  "--seq, --key-len, --decode, --batch: batch %zu, L %zu, Lk %zu, d %zu needs "
                  "%.1f GiB for its inputs and outputs alone, this machine has %.1f GiB",
                  g.batch, g.seq, g.key_len, g.d_model, floats * sizeof(float) / 1073741824.0,
                  static_cast<double>(*physical) / 1073741824.0);
    throw Error(text);
  }
}

}  // namespace

// The precision whose kernels this CPU runs include `name`; throws naming them otherwise.
Precision KernelPrecision(const std::string& name) {
  std::string names;
  for (Precision precision : kPrecisions) {
    for (const std::string& kernel : ProjectionKernels(precision)) {
      if (kernel == name) return precision;
      names += (names.empty() ? "" : ", ") + kernel;
    }
  }
  throw Error("--kernel: expected one of the kernels this CPU runs (" + names + "), got '" +
              name + "'");
}

// The rows' operators: each --kernel, or each --precision with its best kernel.
std::vector<KvFormat> KvFormatsOf(const BenchPlan& plan, const BenchMode& mode) {
  if (!plan.kv_formats.empty()) return plan.kv_formats;
  return {mode.precision == Precision::kAuto ? KvFormat::kAuto : KvFormat::kFp32};
}

std::size_t RowsPerGroup(const BenchPlan& plan) {
  std::size_t rows = 0;
  for (const BenchMode& mode : plan.modes) rows += KvFormatsOf(plan, mode).size();
  return rows * plan.threads.size();
}

std::vector<BenchMode> Modes(const BenchOptions& o) {
  std::vector<BenchMode> modes;
  const auto add = [&](BenchMode mode) {
    for (const BenchMode& m : modes) {
      if (m.precision == mode.precision && m.kernel == mode.kernel) return;
    }
    modes.push_back(std::move(mode));
  };
  for (const std::string& name : o.kernels) add({KernelPrecision(name), name});
  if (!o.kernels.empty()) return modes;
  for (const std::string& p : o.precisions) {
    add({PrecisionNamed(p), ""});
  }
  return modes;
}

BenchPlan MakeBenchPlan(const BenchOptions& o) {
  if (o.batch < 1 || o.batch > kMaxBatch) {
    throw Error("--batch: expected a value in [1, " + Str(kMaxBatch) + "], got " + Str(o.batch));
  }
  CheckInt8BlockOption(o.int8_block);
  BenchPlan plan;
  plan.modes = Modes(o);
  for (const std::string& name : o.kv_formats) {
    const KvFormat format = KvFormatNamed(name);
    if (std::find(plan.kv_formats.begin(), plan.kv_formats.end(), format) ==
        plan.kv_formats.end()) {
      plan.kv_formats.push_back(format);
    }
  }
  // What a Context of 0 threads runs on (hardware threads, or oneTBB's arena limit).
  plan.threads = ParseThreadCounts(o.threads, Context().threads());
  plan.int8_block = o.int8_block;
  plan.measure = o.measure;
  plan.reference = o.reference == "always"  ? ReferencePolicy::kAlways
                   : o.reference == "never" ? ReferencePolicy::kNever
                                            : ReferencePolicy::kAuto;
  const std::string format = o.json ? "json" : o.format;
  plan.format = format == "json"       ? OutputFormat::kJson
                : format == "csv"      ? OutputFormat::kCsv
                : format == "markdown" ? OutputFormat::kMarkdown
                                       : OutputFormat::kTable;
  if (o.json && o.format != "table" && o.format != "json") {
    throw Error("--json and --format " + o.format + ": expected one output format");
  }
  AddAllGroups(o, &plan);
  for (const BenchGroup& g : plan.groups) CheckMemory(g);
  return plan;
}

}  // namespace cli
}  // namespace edgeattn
