// edgeattn bench: times the forward pass on seeded random weights and reports its error
// against the float reference measured in the same run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/reference.hpp"
#include "runtime/benchmark_case.h"
#include "tools/cli/commands.h"

namespace edgeattn {
namespace cli {
namespace {

struct BenchOptions {
  std::string shape = "all";
  std::size_t seq = 0, d_model = 0, heads = 0;
  std::vector<std::size_t> threads;
  std::vector<std::string> precisions = {"fp32", "int8"};
  std::size_t int8_block = kDefaultInt8Block;
  bool json = false;
  double min_time = 1.0;
  std::size_t min_calls = 30;
};

struct Timing {
  double median_ms;
  double p90_ms;
  std::size_t calls;
};

// Calls fn until both min_time seconds and min_calls calls have passed; slow_ok stops after
// min_time alone, for the reference, whose single call can take seconds.
template <class Fn>
Timing Measure(const Fn& fn, double min_time, std::size_t min_calls, bool slow_ok) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> ms;
  const Clock::time_point start = Clock::now();
  while (true) {
    const Clock::time_point t0 = Clock::now();
    fn();
    const Clock::time_point t1 = Clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    const double elapsed = std::chrono::duration<double>(t1 - start).count();
    if (elapsed >= min_time && (slow_ok || ms.size() >= min_calls)) break;
  }
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * (ms.size() - 1) + 0.5))];
  };
  return {at(0.5), at(0.9), ms.size()};
}

struct Row {
  std::string shape, mode;
  std::size_t threads;
  Timing timing;
  double gflops, max_abs_err, cosine, speedup;
  double scaling;  // speed-up over the first thread count measured for this shape and mode
  std::size_t workspace_bytes;
};

void Compare(const std::vector<float>& out, const std::vector<float>& ref, double* max_abs,
             double* cosine) {
  double m = 0, ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    m = std::max(m, std::fabs(double(out[i]) - ref[i]));
    ab += double(out[i]) * ref[i];
    aa += double(out[i]) * out[i];
    bb += double(ref[i]) * ref[i];
  }
  *max_abs = m;
  *cosine = ab / std::sqrt(aa * bb);
}

void PrintRow(const Row& r, bool json) {
  if (json) {
    const nlohmann::json line = {
        {"peer", "edgeattn"},        {"shape", r.shape},
        {"mode", r.mode},            {"threads", r.threads},
        {"median_ms", r.timing.median_ms}, {"p90_ms", r.timing.p90_ms},
        {"gflops", r.gflops},        {"max_abs_err", r.max_abs_err},
        {"cosine", r.cosine},        {"speedup_vs_reference", r.speedup},
        {"speedup_vs_first_threads", r.scaling},
        {"calls", r.timing.calls},   {"workspace_bytes", r.workspace_bytes}};
    std::printf("%s\n", line.dump().c_str());
  } else {
    std::printf("%-8s %-9s %7zu %10.3f %10.3f %9.1f %11.2e %10.7f %9.1fx %8.2fx %9.2f\n",
                r.shape.c_str(), r.mode.c_str(), r.threads, r.timing.median_ms, r.timing.p90_ms,
                r.gflops, r.max_abs_err, r.cosine, r.speedup, r.scaling,
                r.workspace_bytes / 1048576.0);
  }
  std::fflush(stdout);
}

void BenchShape(const ShapeSpec& shape, const BenchOptions& o) {
  const RandomModel model(shape.d_model, shape.heads);
  const std::size_t n = shape.seq * shape.d_model;
  const std::vector<float> x = RandomActivations(n);
  const ConstTensor tx{x.data(), 1, shape.seq, shape.d_model};
  const double flops = ForwardFlops(1, shape.seq, shape.seq, shape.d_model);

  std::vector<float> ref(n);
  const auto run_reference = [&] {
    ReferenceForward(model.config, model.view(), tx, tx, tx, {ref.data(), 1, shape.seq, shape.d_model});
  };
  run_reference();  // warm-up, and the output every other mode is compared with
  const Timing ref_timing = Measure(run_reference, o.min_time, o.min_calls, true);
  PrintRow({shape.name, "reference", 1, ref_timing, flops / ref_timing.median_ms * 1e-6, 0.0, 1.0,
            1.0, 1.0, 0},
           o.json);

  std::vector<float> out(n);
  for (const std::string& precision : o.precisions) {
    Config config = model.config;
    config.precision = precision == "int8" ? Precision::kInt8 : Precision::kFp32;
    config.int8_block = o.int8_block;
    const MultiheadAttention mha(config, model.view());
    double first_median_ms = 0.0;
    for (std::size_t threads : o.threads) {
      Context context(threads);
      const auto run = [&] {
        mha.Forward(context, tx, {out.data(), 1, shape.seq, shape.d_model});
      };
      run();
      run();
      Row row{shape.name, precision, context.threads(),
              Measure(run, o.min_time, o.min_calls, false), 0, 0, 0, 0, 0,
              context.workspace_bytes()};
      if (first_median_ms == 0.0) first_median_ms = row.timing.median_ms;
      row.gflops = flops / row.timing.median_ms * 1e-6;
      row.speedup = ref_timing.median_ms / row.timing.median_ms;
      row.scaling = first_median_ms / row.timing.median_ms;
      Compare(out, ref, &row.max_abs_err, &row.cosine);
      PrintRow(row, o.json);
    }
  }
}

// Decode: each timed call rolls the cache back to DecodeShape().seq positions and decodes one
// more, so every call sees the same cache length. The reference is the same new position
// attending to all cached positions, from the float reference over the whole sequence.
void BenchDecode(const BenchOptions& o) {
  const ShapeSpec& shape = DecodeShape();
  const std::size_t d = shape.d_model;
  const std::size_t cached = shape.seq;
  const RandomModel model(d, shape.heads);
  const std::vector<float> x = RandomActivations((cached + 1) * d);
  const ConstTensor last{x.data() + cached * d, 1, 1, d};
  const ConstTensor all{x.data(), 1, cached + 1, d};
  const double flops = DecodeFlops(cached, d);

  std::vector<float> ref(d);
  const auto run_reference = [&] {
    ReferenceForward(model.config, model.view(), last, all, all, {ref.data(), 1, 1, d});
  };
  run_reference();
  const Timing ref_timing = Measure(run_reference, o.min_time, o.min_calls, true);
  PrintRow({shape.name, "reference", 1, ref_timing, flops / ref_timing.median_ms * 1e-6, 0.0,
            1.0, 1.0, 1.0, 0},
           o.json);

  std::vector<float> prefix_out(cached * d), out(d);
  for (const std::string& precision : o.precisions) {
    Config config = model.config;
    config.precision = precision == "int8" ? Precision::kInt8 : Precision::kFp32;
    config.int8_block = o.int8_block;
    const MultiheadAttention mha(config, model.view());
    double first_median_ms = 0.0;
    for (std::size_t threads : o.threads) {
      Context context(threads);
      KvCache cache(mha, cached + 1);
      mha.Decode(context, {x.data(), 1, cached, d}, cache, {prefix_out.data(), 1, cached, d});
      const auto run = [&] {
        cache.Truncate(cached);
        mha.Decode(context, last, cache, {out.data(), 1, 1, d});
      };
      run();
      run();
      Row row{shape.name, precision, context.threads(),
              Measure(run, o.min_time, o.min_calls, false), 0, 0, 0, 0, 0,
              context.workspace_bytes() + cache.bytes()};
      if (first_median_ms == 0.0) first_median_ms = row.timing.median_ms;
      row.gflops = flops / row.timing.median_ms * 1e-6;
      row.speedup = ref_timing.median_ms / row.timing.median_ms;
      row.scaling = first_median_ms / row.timing.median_ms;
      Compare(out, ref, &row.max_abs_err, &row.cosine);
      PrintRow(row, o.json);
    }
  }
}

int Bench(BenchOptions o) {
  std::vector<ShapeSpec> shapes;
  const bool custom = o.seq != 0 || o.d_model != 0 || o.heads != 0;
  if (custom) {
    if (o.seq == 0 || o.d_model == 0 || o.heads == 0) {
      throw Error("--seq, --d-model and --heads: expected all three for a custom shape");
    }
    shapes.push_back({"custom", o.seq, o.d_model, o.heads});
  } else {
    for (const ShapeSpec& s : ContractShapes()) {
      if (o.shape == "all" || o.shape == s.name) shapes.push_back(s);
    }
  }
  if (o.threads.empty()) {
    o.threads = {1};
    const std::size_t all = std::max(1u, std::thread::hardware_concurrency());
    if (all > 1) o.threads.push_back(all);
  }
  if (!o.json) {
    std::printf("%-8s %-9s %7s %10s %10s %9s %11s %10s %10s %9s %9s\n", "shape", "mode",
                "threads", "median ms", "p90 ms", "GFLOP/s", "max abs err", "cosine", "vs ref",
                "vs 1st", "work MiB");
  }
  for (const ShapeSpec& s : shapes) BenchShape(s, o);
  if (!custom && (o.shape == "all" || o.shape == "decode")) BenchDecode(o);
  return 0;
}

}  // namespace

Command AddBenchCommand(CLI::App& parent) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* app = parent.add_subcommand(
      "bench", "Time the forward pass on seeded random weights against the float reference");
  app->add_option("--shape", o->shape,
                  "Contract shape; decode: one new position against a KV cache of 512 (d 768, "
                  "12 heads), in ms per step (work MiB includes the cache)")
      ->check(CLI::IsMember({"tiny", "minilm", "bert", "whisper", "decode", "all"}))
      ->capture_default_str();
  app->add_option("--seq", o->seq, "Custom shape: sequence length");
  app->add_option("--d-model", o->d_model, "Custom shape: model width");
  app->add_option("--heads", o->heads, "Custom shape: number of heads");
  app->add_option("--threads", o->threads,
                  "Thread counts to measure, e.g. 1,2 (default: 1 and all hardware threads)")
      ->delimiter(',');
  app->add_option("--precision", o->precisions, "Paths to measure, e.g. fp32,int8")
      ->delimiter(',')
      ->check(CLI::IsMember({"fp32", "int8"}))
      ->capture_default_str();
  app->add_option("--int8-block", o->int8_block,
                  "int8: activation values per quantization scale (multiple of 4)")
      ->capture_default_str();
  app->add_flag("--json", o->json, "One JSON object per line instead of a table");
  app->add_option("--min-time", o->min_time, "Seconds to measure each row, at least")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--min-calls", o->min_calls, "Calls to measure each row, at least")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return {app, [o] { return Bench(*o); }};
}

}  // namespace cli
}  // namespace edgeattn
