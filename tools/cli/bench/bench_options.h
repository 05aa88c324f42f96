// The options of `edgeattn bench` and the plan of rows they ask for.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_BENCH_OPTIONS_H_
#define EDGEATTN_TOOLS_CLI_BENCH_BENCH_OPTIONS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "tools/cli/bench/measurement.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/math_options.h"

namespace edgeattn {
namespace cli {

// The options as typed: lists and sweeps stay text until MakeBenchPlan checks them.
struct BenchOptions {
  std::vector<std::string> shapes = {"all"};
  std::string seq, key_len, decode, threads;
  std::size_t d_model = 0, heads = 0, kv_heads = 0, batch = 1;
  bool causal = false;
  std::vector<std::string> precisions = {"fp32", "int8", "auto"};
  std::vector<std::string> kernels;  // projection kernels by name, instead of precisions
  // K/V formats; none given: each mode's own (BenchPlan::KvFormatsOf)
  std::vector<std::string> kv_formats;
  std::size_t int8_block = kDefaultInt8Block;
  StopRule measure;
  std::string reference = "auto";
  std::string format = "table";
  bool json = false;
  MathFlags math;
};

// What a decode group's step does: a causal step against a KV cache (kSelf), the same for beams
// that reorder the cache before each step (kBeams), or a cross-attention step against an
// encoder output through a CrossAttentionMemory (kCrossMemory) or by projecting the frames again
// (kCrossReproject).
enum class DecodeStep { kSelf, kBeams, kCrossMemory, kCrossReproject };

// The rows' case column: "fwd", "decode", "beams", "xmem" or "xproj".
const char* CaseName(const struct BenchGroup& group);

// The rows that share one model and one set of inputs: one float reference, then each
// precision at each thread count.
struct BenchGroup {
  std::string shape;  // a contract shape's name, or "custom"
  std::size_t d_model = 0, heads = 0, kv_heads = 0;  // kv_heads == heads: multi-head attention
  std::size_t batch = 1;
  std::size_t seq = 0;      // query positions; decode: new positions per step
  std::size_t key_len = 0;  // keys each query sees; decode: cache_len + seq
  std::size_t cache_len = 0;
  bool decode = false;
  bool causal = false;  // decode steps are causal too
  bool cross = false;   // key and value are inputs of their own (Lk may differ from L)
  DecodeStep step = DecodeStep::kSelf;  // decode groups
  AttentionMath math{};  // the operator's (the decode shape's windowed row: a window)
};

enum class ReferencePolicy { kAuto, kAlways, kNever };
enum class OutputFormat { kTable, kJson, kCsv, kMarkdown };

// What one row's operator runs: a precision and its projection kernel ("": the best).
struct BenchMode {
  Precision precision;
  std::string kernel;
};

struct BenchPlan;
std::vector<KvFormat> KvFormatsOf(const BenchPlan& plan, const BenchMode& mode);
// The measured rows of each group: every mode in each of its K/V formats at each thread count
// (the reference row, when there is one, comes on top).
std::size_t RowsPerGroup(const BenchPlan& plan);

struct BenchPlan {
  std::vector<BenchGroup> groups;
  std::vector<BenchMode> modes;
  // The K/V formats every mode is measured with; empty: each mode's own, auto for auto and fp32
  // for the others (KvFormatsOf).
  std::vector<KvFormat> kv_formats;
  std::vector<std::size_t> threads;
  std::size_t int8_block = kDefaultInt8Block;
  StopRule measure;
  ReferencePolicy reference = ReferencePolicy::kAuto;
  OutputFormat format = OutputFormat::kTable;
};

void AddBenchOptions(CLI::App* app, BenchOptions* o);

// Checks the options against each other and expands the lists and sweeps; throws Error naming
// the option.
BenchPlan MakeBenchPlan(const BenchOptions& o);

// The most rows one bench run may ask for, refused before any work: each row builds an operator
// and times it for --min-time (1 s by default), so 10,000 rows already take hours, and a product
// of sweeps beyond it (--seq 1:1000 --key-len 1:1000: 10^6 groups) is a slip, not a plan.
inline constexpr std::size_t kMaxBenchRows = 10000;

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_BENCH_OPTIONS_H_
