// edgeattn bench end to end: its rows, options, formats and sweeps (its errors:
// cli_bench_errors_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "edgeattn/cpu_dispatch.hpp"
#include "edgeattn/edgeattn.hpp"
#include "tests/tools/cli_runner.h"

namespace edgeattn {
namespace {

using cli_test::JsonLines;
using cli_test::Lines;
using cli_test::kSmallBench;
using cli_test::Result;
using cli_test::RunCli;
using cli_test::RunOnTerminal;
using cli_test::SmallBenchRows;

// The floating-point operations of one call of a row, from the row's own fields, written out
// here rather than taken from runtime/benchmark_case.h: projections are 2 * rows * in * out,
// the scores and the weighted sum 2 * Lq * Lk * d each. A decode step projects its new rows
// only and attends to the cache and itself; a cross step with a memory projects no frames. The
// reference row of a decode group is the causal forward pass over the whole sequence.
double ExpectedFlops(const nlohmann::json& row) {
  const double b = row["batch"], lq = row["seq"], lk = row["key_len"], d = row["d_model"];
  const double kv = d * row["kv_heads"].get<double>() / row["heads"].get<double>();
  const std::string step = row["case"];
  const double forward = b * (4 * lq * d * d + 4 * lk * d * kv + 4 * lq * lk * d);
  if (step == "forward" || row["mode"] == "reference") return forward;
  if (step == "xmem") return b * (4 * lq * d * d + 4 * lq * lk * d);
  if (step == "xproj") return forward;
  const double cached = row["cache_len"];
  return b * lq * (4 * d * d + 4 * d * kv + 4 * (cached + lq) * d);  // decode, beams
}

// GFLOP/s is the call's operations over its median time: the two columns give the operations
// back exactly, whatever the times were.
void ExpectGflopsOfItsFlops(const nlohmann::json& row) {
  if (row["gflops"].is_null()) return;  // a skipped reference
  const double flops = row["gflops"].get<double>() * row["median_ms"].get<double>() * 1e6;
  EXPECT_NEAR(flops / ExpectedFlops(row), 1.0, 1e-9) << row.dump();
}

TEST(CliTest, BenchJsonLines) {
  const std::vector<nlohmann::json> lines = SmallBenchRows("--seq 9 --threads 1,2");
  // reference, then fp32, int8 and auto (named by what it resolved to) at 1 and 2 threads; the
  // K/V format is the mode's own: fp32, and auto's choice for auto
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0]["mode"], "reference");
  EXPECT_EQ(lines[0]["reference"], "measured");
  EXPECT_EQ(lines[1]["kv_format"], "fp32");
  EXPECT_EQ(lines[3]["mode"], "int8");
  EXPECT_EQ(lines[3]["kv_format"], "fp32");
  EXPECT_GT(lines[3]["cosine"].get<double>(), 0.999);
  EXPECT_NE(lines[5]["mode"], "auto");
  EXPECT_NE(lines[5]["kv_format"], "auto");
  EXPECT_GT(lines[5]["cosine"].get<double>(), 0.999);
  for (const auto& line : lines) {
    // The keys tools/peers/summarize.py and tools/plot_bench.py read, and what was measured.
    for (const char* key : {"peer",
                            "shape",
                            "mode",
                            "threads",
                            "median_ms",
                            "p90_ms",
                            "p99_ms",
                            "stddev_ms",
                            "gflops",
                            "max_abs_err",
                            "cosine",
                            "version",
                            "cpu",
                            "time",
                            "batch",
                            "seq",
                            "key_len",
                            "d_model",
                            "heads",
                            "kv_heads",
                            "mask",
                            "highway_version",
                            "highway_target",
                            "kernel",
                            "calls",
                            "warmup",
                            "peak_rss_bytes",
                            "workspace_bytes",
                            "load_average"}) {
      EXPECT_TRUE(line.contains(key)) << key;
    }
    EXPECT_EQ(line["peer"], "edgeattn");
    EXPECT_EQ(line["version"], EDGEATTN_VERSION_STRING);
    EXPECT_EQ(line["shape"], "custom");
    EXPECT_EQ(line["seq"], 9);
    EXPECT_EQ(line["key_len"], 9);
    EXPECT_EQ(line["d_model"], 24);
    EXPECT_EQ(line["heads"], 3);
    EXPECT_EQ(line["kv_heads"], 3);
    EXPECT_EQ(line["mask"], "none");
    EXPECT_FALSE(line["cpu"].get<std::string>().empty());
    EXPECT_GT(line["median_ms"].get<double>(), 0.0);
    EXPECT_GE(line["p90_ms"].get<double>(), line["median_ms"].get<double>());
    EXPECT_GE(line["p99_ms"].get<double>(), line["p90_ms"].get<double>());
    EXPECT_GE(line["max_ms"].get<double>(), line["p99_ms"].get<double>());
    EXPECT_LE(line["min_ms"].get<double>(), line["median_ms"].get<double>());
    EXPECT_GE(line["stddev_ms"].get<double>(), 0.0);
  }
  EXPECT_EQ(lines[1]["warmup"], 2);
  EXPECT_GE(lines[1]["calls"].get<int>(), 3);
  EXPECT_EQ(lines[2]["threads"], 2);
  EXPECT_LT(lines[1]["max_abs_err"].get<double>(), 1e-4);
  EXPECT_GT(lines[1]["cosine"].get<double>(), 0.99999);
  EXPECT_FALSE(lines[1]["highway_target"].get<std::string>().empty());
  EXPECT_EQ(lines[1]["highway_version"], HighwayVersion());
  EXPECT_TRUE(lines[0]["highway_version"].is_null());  // the reference ran no kernel
  EXPECT_TRUE(lines[0]["kernel"].is_null());           // the reference
  EXPECT_EQ(lines[1]["kernel"], ProjectionKernels(Precision::kFp32).front());
  EXPECT_EQ(lines[3]["kernel"], ProjectionKernels(Precision::kInt8).front());
  EXPECT_EQ(lines[3]["attention_kernel"], AttentionKernels().front());
  EXPECT_EQ(lines[3]["int8_block"], kDefaultInt8Block);
  EXPECT_GT(lines[1]["workspace_bytes"].get<double>(), 0.0);
  EXPECT_GT(lines[1]["peak_rss_bytes"].get<double>(), 0.0);
  EXPECT_GE(lines[1]["load_average"].get<double>(), 0.0);
  for (const auto& line : lines) ExpectGflopsOfItsFlops(line);
  // int8 is measured against the reference, not against itself: some error, a cosine below 1.
  EXPECT_GT(lines[3]["max_abs_err"].get<double>(), 0.0);
  EXPECT_LT(lines[3]["cosine"].get<double>(), 1.0);
  // Speedups are the reference's median over the row's, and the first thread count's over the
  // row's (1 for the first), exactly as the medians printed give them.
  const double reference_ms = lines[0]["median_ms"];
  EXPECT_EQ(lines[0]["speedup_vs_reference"], 1.0);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const double ms = lines[i]["median_ms"];
    EXPECT_NEAR(lines[i]["speedup_vs_reference"].get<double>(), reference_ms / ms,
                1e-12 * reference_ms / ms)
        << i;
    const double first_ms = lines[i % 2 == 1 ? i : i - 1]["median_ms"];
    EXPECT_NEAR(lines[i]["speedup_vs_first_threads"].get<double>(), first_ms / ms,
                1e-12 * first_ms / ms)
        << i;
  }
}

// Two timed calls pin every statistic to their min and max: the median halfway, p90 and p99
// interpolated between them, the sample standard deviation |max - min| / sqrt(2).
TEST(CliTest, BenchStatisticsOfTwoCalls) {
  const std::vector<nlohmann::json> lines = SmallBenchRows(
      "--seq 8 --threads 1 --precision fp32 --warmup 0 --repetitions 2 --reference never");
  ASSERT_EQ(lines.size(), 1u);
  const nlohmann::json& row = lines[0];
  ASSERT_EQ(row["calls"], 2);
  const double lo = row["min_ms"], hi = row["max_ms"];
  const double tolerance = 1e-9 * hi;
  EXPECT_NEAR(row["median_ms"].get<double>(), (lo + hi) / 2, tolerance);
  EXPECT_NEAR(row["mean_ms"].get<double>(), (lo + hi) / 2, tolerance);
  EXPECT_NEAR(row["p90_ms"].get<double>(), lo + 0.9 * (hi - lo), tolerance);
  EXPECT_NEAR(row["p99_ms"].get<double>(), lo + 0.99 * (hi - lo), tolerance);
  EXPECT_NEAR(row["stddev_ms"].get<double>(), (hi - lo) / std::sqrt(2.0), tolerance);
}

// Batch, cross-attention, causal, grouped-query heads, exact repetitions and warm-up.
TEST(CliTest, BenchShapeOptions) {
  const std::vector<nlohmann::json> lines = SmallBenchRows(
      "--seq 5 --key-len 11 --batch 2 --causal --kv-heads 1 --threads 1 "
      "--precision fp32 --warmup 1 --repetitions 4");
  ASSERT_EQ(lines.size(), 2u);
  for (const auto& line : lines) {
    EXPECT_EQ(line["batch"], 2);
    EXPECT_EQ(line["seq"], 5);
    EXPECT_EQ(line["key_len"], 11);
    EXPECT_EQ(line["cross"], true);
    EXPECT_EQ(line["mask"], "causal");
    EXPECT_EQ(line["kv_heads"], 1);
    EXPECT_EQ(line["case"], "forward");
  }
  EXPECT_EQ(lines[1]["mode"], "fp32");
  EXPECT_EQ(lines[1]["warmup"], 1);
  EXPECT_EQ(lines[1]["calls"], 4);
  EXPECT_LT(lines[1]["max_abs_err"].get<double>(), 1e-4);
  // Cross-attention's keys and values are key_len rows of kv_heads' width; causal computes no
  // fewer operations in the count, for the row or for its reference.
  for (const auto& line : lines) ExpectGflopsOfItsFlops(line);
}

// Decode steps against a cache of each length of a sweep; their error is against the causal
// reference over the whole sequence.
// --kv-format applies to forward rows too: each row names its format and prints its accuracy.
TEST(CliTest, BenchForwardKvFormats) {
  const std::vector<nlohmann::json> lines =
      SmallBenchRows("--seq 33 --threads 1 --precision fp32 --kv-format fp32,bf16,int8");
  ASSERT_EQ(lines.size(), 4u);  // reference, then fp32 projections with each K/V format
  EXPECT_TRUE(lines[0]["kv_format"].is_null());
  const char* formats[] = {"fp32", "bf16", "int8"};
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(lines[i]["case"], "forward");
    EXPECT_EQ(lines[i]["kv_format"], formats[i - 1]);
    EXPECT_EQ(lines[i]["attention_kernel"], AttentionKernels(i == 1   ? KvFormat::kFp32
                                                             : i == 2 ? KvFormat::kBf16
                                                                      : KvFormat::kInt8)
                                                .front());
    EXPECT_GT(lines[i]["cosine"].get<double>(), 0.9995) << formats[i - 1];
  }
  // auto rows name what auto resolved to.
  const std::vector<nlohmann::json> automatic =
      SmallBenchRows("--seq 9 --threads 1 --precision auto --kv-format auto --reference never");
  ASSERT_EQ(automatic.size(), 1u);
  EXPECT_EQ(automatic[0]["mode"], PrecisionName(AutoChoiceForThisCpu().precision));
  EXPECT_EQ(automatic[0]["kv_format"], KvFormatName(AutoChoiceForThisCpu().kv_format));
}

TEST(CliTest, BenchDecodeSweep) {
  const std::vector<nlohmann::json> lines = SmallBenchRows(
      "--seq 2 --decode 4:16:x2 --threads 1 --precision fp32,int8 "
      "--reference always");
  ASSERT_EQ(lines.size(), 9u);  // caches 4, 8, 16: reference, fp32, int8
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t cache = std::size_t{4} << (i / 3);
    EXPECT_EQ(lines[i]["case"], "decode");
    EXPECT_EQ(lines[i]["cache_len"], cache);
    EXPECT_EQ(lines[i]["key_len"], cache + 2);
    EXPECT_EQ(lines[i]["mask"], "causal");
  }
  EXPECT_LT(lines[1]["max_abs_err"].get<double>(), 1e-4);
  EXPECT_GT(lines[2]["cosine"].get<double>(), 0.999);
  EXPECT_GT(lines[1]["cache_bytes"].get<double>(), 0.0);
  for (const auto& line : lines) ExpectGflopsOfItsFlops(line);
}

// The decode shape's rows: the self-attention step, 4 beams reordering the cache before each
// step, Whisper-tiny's cross-attention step with a memory and re-projecting the frames, then
// the windowed cache; the memory's bytes are the row's cache bytes.
TEST(CliTest, BenchDecodeShapeRows) {
  const Result r = RunCli(
      "bench --shape decode --threads 1 --precision fp32 --repetitions 1 "
      "--warmup 0 --reference never --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<nlohmann::json> lines = JsonLines(r.output);
  ASSERT_EQ(lines.size(), 5u);
  const char* cases[] = {"decode", "beams", "xmem", "xproj", "decode"};
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i]["case"], cases[i]);
  EXPECT_EQ(lines[1]["batch"], 4);
  EXPECT_EQ(lines[1]["cache_len"], 512);
  for (std::size_t i : {2, 3}) {
    EXPECT_EQ(lines[i]["key_len"], 1500);
    EXPECT_EQ(lines[i]["d_model"], 384);
    EXPECT_EQ(lines[i]["mask"], "none");
  }
  EXPECT_GT(lines[2]["cache_bytes"].get<double>(), 1500.0 * 2 * 384 * sizeof(float) - 1);
  EXPECT_EQ(lines[3]["cache_bytes"], 0);
  EXPECT_EQ(lines[4]["window"], 512);
  EXPECT_EQ(lines[4]["cache_len"], 4096);
  // A ring of 576 slots: 12 heads of 64 dims, keys and values in float.
  EXPECT_LT(lines[4]["cache_bytes"].get<double>(), 577.0 * 2 * 768 * sizeof(float));
  EXPECT_GT(lines[4]["cache_bytes"].get<double>(), 576.0 * 2 * 768 * sizeof(float) - 1);
  for (const auto& line : lines) ExpectGflopsOfItsFlops(line);
}

// A windowed decode row: its cache holds a ring of the window, not the context; the step
// maths' flags reach the operator and the reference alike.
TEST(CliTest, BenchWindowedDecodeAndStepMath) {
  // The reference always runs: auto decides by a timed probe, which a loaded machine can slow.
  const std::string decode =
      "--seq 1 --decode 1000 --threads 1 --precision fp32 --reference always";
  const std::vector<nlohmann::json> plain = SmallBenchRows(decode);
  const std::vector<nlohmann::json> windowed = SmallBenchRows(decode + " --window 16");
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_EQ(windowed.size(), 2u);
  EXPECT_EQ(windowed[1]["window"], 16);
  EXPECT_LT(windowed[1]["max_abs_err"].get<double>(), 1e-4);
  EXPECT_LT(windowed[1]["cache_bytes"].get<double>(), plain[1]["cache_bytes"].get<double>() / 3);
  const std::vector<nlohmann::json> maths = SmallBenchRows(
      "--seq 1 --decode 70 --threads 1 --precision fp32 --reference always --rotary-layout halves "
      "--rotary-dim 4 --softcap 5 --score-scale 0.2 --qk-norm-eps 1e-6");
  ASSERT_EQ(maths.size(), 2u);
  EXPECT_LT(maths[1]["max_abs_err"].get<double>(), 1e-4);
  const Result r = RunCli(kSmallBench + "--seq 4 --softcap inf");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--softcap"), std::string::npos) << r.output;
}

// Lists and sweeps of L and threads give one group per L and one row per thread count.
TEST(CliTest, BenchSequenceAndThreadSweeps) {
  const std::vector<nlohmann::json> lines =
      SmallBenchRows("--seq 4:16:x2,20 --threads 1:2 --precision int8 --reference never");
  ASSERT_EQ(lines.size(), 8u);
  const int seqs[] = {4, 8, 16, 20};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["seq"], seqs[i / 2]);
    EXPECT_EQ(lines[i]["threads"], 1 + i % 2);
    EXPECT_EQ(lines[i]["reference"], "never");
    EXPECT_TRUE(lines[i]["cosine"].is_null());
  }
}

// --threads 0 is what a Context of 0 threads runs on here: listed with that count, in either
// order, it is measured once (tests/tools/cli_count_lists_test.cc sets the CPU count itself).
TEST(CliTest, BenchThreadsZeroIsMeasuredOnce) {
  const std::vector<nlohmann::json> all = SmallBenchRows("--seq 8 --threads 0 --precision fp32");
  ASSERT_EQ(all.size(), 2u);  // reference, fp32
  const std::string cpus = std::to_string(all[1]["threads"].get<std::size_t>());
  for (const std::string& threads : {"0," + cpus, cpus + ",0", cpus + "," + cpus}) {
    const std::vector<nlohmann::json> rows =
        SmallBenchRows("--seq 8 --precision fp32 --threads " + threads);
    ASSERT_EQ(rows.size(), 2u) << threads;
    EXPECT_EQ(rows[1]["threads"], all[1]["threads"]) << threads;
  }
}

// --reference auto skips a reference that would take longer than the rows it serves, and the
// rows say so; always runs it anyway.
TEST(CliTest, BenchReferencePolicy) {
  // A float reference of 13 GFLOP: seconds, where the one int8 call takes milliseconds.
  const std::string big =
      "bench --d-model 512 --heads 8 --seq 2048 --threads 1 --precision "
      "int8 --min-time 0 --min-calls 1 --warmup 0 --json";
  Result r = RunCli(big);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<nlohmann::json> lines = JsonLines(r.output);
  ASSERT_EQ(lines.size(), 2u) << r.output;
  EXPECT_EQ(lines[0]["reference"], "skipped");
  EXPECT_TRUE(lines[0]["median_ms"].is_null());
  EXPECT_GT(lines[0]["reference_estimate_ms"].get<double>(), 1000.0);
  EXPECT_EQ(lines[1]["reference"], "skipped");
  EXPECT_TRUE(lines[1]["max_abs_err"].is_null());
  EXPECT_GT(lines[1]["median_ms"].get<double>(), 0.0);
  lines = SmallBenchRows("--seq 8 --threads 1 --precision fp32 --reference always");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["reference"], "measured");
  EXPECT_TRUE(lines[1]["reference_estimate_ms"].is_null());
  EXPECT_LT(lines[1]["max_abs_err"].get<double>(), 1e-4);
}

// The table and Markdown carry the environment line and the same columns; CSV has a header
// and one line per row with as many fields.
TEST(CliTest, BenchTableCsvMarkdown) {
  const std::string args = kSmallBench + "--seq 8 --threads 1 --precision fp32,int8 ";
  Result r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> lines = Lines(r.output);
  ASSERT_EQ(lines.size(), 5u) << r.output;  // environment, header, reference, fp32, int8
  EXPECT_EQ(lines[0].rfind(std::string("edgeattn ") + EDGEATTN_VERSION_STRING + ", CPU ", 0), 0u)
      << lines[0];
  // "Highway 1.0.3 target AVX3_DL": the version, then the target dispatch chose.
  EXPECT_NE(lines[0].find("Highway " + HighwayVersion() + " target "), std::string::npos)
      << lines[0];
  for (const char* column : {"shape", "B", "Lk", "d/h/kv", "mask", "p50 ms", "p90 ms", "p99 ms",
                             "sd ms", "max abs err", "cosine", "peak MiB", "load", "kernels"}) {
    EXPECT_NE(lines[1].find(column), std::string::npos) << column;
  }
  EXPECT_NE(lines[3].find("24/3/3"), std::string::npos) << lines[3];
  EXPECT_NE(lines[4].find("int8 "), std::string::npos) << lines[4];

  r = RunCli(args + "--format markdown");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  lines = Lines(r.output);
  ASSERT_EQ(lines.size(), 7u) << r.output;  // environment, blank, header, rule, 3 rows
  EXPECT_TRUE(lines[1].empty());
  EXPECT_EQ(lines[2].rfind("| shape | case |", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3].rfind("| --- | --- | ---: |", 0), 0u) << lines[3];
  const auto bars = [](const std::string& s) { return std::count(s.begin(), s.end(), '|'); };
  for (std::size_t i = 3; i < lines.size(); ++i) EXPECT_EQ(bars(lines[i]), bars(lines[2]));

  r = RunCli(args + "--format csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  lines = Lines(r.output);
  ASSERT_EQ(lines.size(), 4u) << r.output;
  EXPECT_EQ(lines[0].rfind("peer,version,cpu,time,load_average,shape,", 0), 0u) << lines[0];
  // The CPU name may hold commas: count fields outside quotes.
  const auto fields = [](const std::string& s) {
    std::size_t n = 1;
    bool quoted = false;
    for (char c : s) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++n;
    }
    return n;
  };
  for (const std::string& line : lines) EXPECT_EQ(fields(line), fields(lines[0])) << line;
  EXPECT_NE(lines[2].find(",fp32,"), std::string::npos) << lines[2];
  // JSON's null is an empty field: fp32's int8_block, the reference's kernel.
  const auto split = [](const std::string& s) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (char c : s) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) {
        out.emplace_back();
      } else {
        out.back() += c;
      }
    }
    return out;
  };
  const std::vector<std::string> header = split(lines[0]);
  const auto column = [&](const char* name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  ASSERT_LT(column("int8_block"), header.size());
  ASSERT_LT(column("kernel"), header.size());
  EXPECT_EQ(split(lines[2])[column("int8_block")], "") << lines[2];
  EXPECT_EQ(split(lines[3])[column("int8_block")], std::to_string(kDefaultInt8Block)) << lines[3];
  EXPECT_EQ(split(lines[1])[column("kernel")], "") << lines[1];
}

// Each table cell sits under its own title: a shape whose B, L and Lk all differ, and an int8
// row whose error and cosine tell apart.
TEST(CliTest, BenchTableColumnsHoldTheirValues) {
  const Result r = RunCli(kSmallBench +
                          "--seq 5 --key-len 11 --batch 2 --kv-heads 1 --causal --threads 1 "
                          "--precision int8 --warmup 0 --repetitions 3 --reference always");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> lines = Lines(r.output);
  ASSERT_EQ(lines.size(), 4u) << r.output;  // environment, header, reference, int8
  const auto words = [](const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  };
  const std::vector<std::string> cells = words(lines[3]);
  ASSERT_GE(cells.size(), 18u) << lines[3];
  const std::vector<std::string> want = {"custom", "fwd",    "2",    "5",   "11",
                                         "24/3/1", "causal",  "int8", "fp32", "1"};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(cells[i], want[i]) << lines[3];
  // p50, p90, p99, sd, then calls.
  EXPECT_LE(std::stod(cells[10]), std::stod(cells[11])) << lines[3];
  EXPECT_LE(std::stod(cells[11]), std::stod(cells[12])) << lines[3];
  EXPECT_EQ(cells[14], "3") << lines[3];
  const double max_abs_err = std::stod(cells[16]), cosine = std::stod(cells[17]);
  EXPECT_NE(cells[16].find('e'), std::string::npos) << lines[3];
  EXPECT_GT(max_abs_err, 0.0) << lines[3];
  EXPECT_LT(max_abs_err, 0.1) << lines[3];
  EXPECT_GT(cosine, 0.99) << lines[3];
  EXPECT_LE(cosine, 1.0) << lines[3];
  EXPECT_EQ(words(lines[2])[8], "-") << lines[2];  // the reference has no K/V format
}

// --kernel measures each named kernel in its own row, whatever its precision.
TEST(CliTest, BenchKernelsByName) {
  const std::string fp32 = ProjectionKernels(Precision::kFp32).front();
  const std::vector<std::string> int8 = ProjectionKernels(Precision::kInt8);
  const std::string names = fp32 + "," + int8.back() + "," + int8.front();
  const std::vector<nlohmann::json> rows =
      SmallBenchRows("--seq 9 --threads 1 --reference never --kernel " + names);
  const std::size_t want = int8.size() == 1 ? 2 : 3;  // a name given twice is one row
  ASSERT_EQ(rows.size(), want);
  EXPECT_EQ(rows[0]["kernel"], fp32);
  EXPECT_EQ(rows[0]["mode"], "fp32");
  EXPECT_EQ(rows[1]["kernel"], int8.back());
  EXPECT_EQ(rows[1]["mode"], "int8");
  EXPECT_EQ(rows.back()["kernel"], int8.front());
}

// Output to a pipe gets no progress line; on a terminal, stderr shows one while rows run and
// clears it before each row.
TEST(CliTest, BenchProgressOnlyOnATerminal) {
  const Result quiet = RunCli(kSmallBench + "--seq 8 --threads 1 --json", "2>&1 >/dev/null");
  ASSERT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.output, "");  // stderr, a pipe here
  const std::string tty =
      RunOnTerminal(std::string(EDGEATTN_CLI_PATH) +
                    " bench --d-model 24 --heads 3 --seq 8 --threads 1 --min-time 0.3 --json "
                    ">/dev/null");
  EXPECT_NE(tty.find("custom B1 L8 Lk8 reference"), std::string::npos) << tty;
  EXPECT_NE(tty.find("fp32 (" + ProjectionKernels(Precision::kFp32).front() + ") kv fp32 1 thr: "),
            std::string::npos)
      << tty;
  EXPECT_NE(tty.find("\r\033[K"), std::string::npos) << tty;
}

}  // namespace
}  // namespace edgeattn
