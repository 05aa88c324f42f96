// The whole forward pass per contract shape: fp32 and int8 at 1 and 2 threads, and the float
// reference as the in-run baseline (compare the times in the same run). "%peak" is against the
// measured fp32 FMA peak of the threads used, for int8 too (its projections count as flops).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bench/peak_fma.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/executor.hpp"
#include "edgeattn/reference.hpp"
#include "runtime/benchmark_case.h"

namespace edgeattn {
namespace {

const ShapeSpec& Shape(benchmark::State& state) {
  return ContractShapes().at(static_cast<std::size_t>(state.range(0)));
}

void SetCounters(benchmark::State& state, const ShapeSpec& s, std::size_t threads) {
  const double flops = ForwardFlops(1, s.seq, s.seq, s.d_model);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["%peak"] =
      benchmark::Counter(flops * 1e-9 * 100.0 / (bench::PeakFmaGflops() * threads),
                         benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(s.name);
}

void Forward(benchmark::State& state, Precision precision) {
  const ShapeSpec& s = Shape(state);
  const std::size_t threads = static_cast<std::size_t>(state.range(1));
  const RandomModel model(s.d_model, s.heads);
  const std::vector<float> x = RandomActivations(s.seq * s.d_model);
  std::vector<float> y(x.size());
  Config config = model.config;
  config.precision = precision;
  const MultiheadAttention mha(config, model.view());
  Context context(threads);
  for (auto _ : state) {
    mha.Forward(context, {x.data(), 1, s.seq, s.d_model}, {y.data(), 1, s.seq, s.d_model});
    benchmark::DoNotOptimize(y.data());
  }
  SetCounters(state, s, threads);
}

// An empty parallel phase, back to back: what each phase of a forward call (3 to 5 of them)
// costs 2 workers beyond its work, on oneTBB (executor 0) and on the std::thread pool, which
// spins between phases (1).
std::unique_ptr<Executor> PhaseExecutor(std::int64_t kind) {
#if EDGEATTN_WITH_TBB
  if (kind == 0) return MakeTbbExecutor(2);
#endif
  return kind == 1 ? MakeThreadPoolExecutor(2) : nullptr;
}
void BM_EmptyPhase(benchmark::State& state) {
  const std::unique_ptr<Executor> executor = PhaseExecutor(state.range(0));
  if (executor == nullptr) {
    state.SkipWithError("built without oneTBB");
    return;
  }
  std::atomic<std::size_t> calls{0};
  for (auto _ : state) executor->RunWorkers([&](std::size_t) { calls.fetch_add(1); });
  benchmark::DoNotOptimize(calls.load());
}
BENCHMARK(BM_EmptyPhase)
    ->ArgName("executor")
    ->DenseRange(0, 1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_ForwardF32(benchmark::State& state) { Forward(state, Precision::kFp32); }
void BM_ForwardInt8(benchmark::State& state) { Forward(state, Precision::kInt8); }
BENCHMARK(BM_ForwardF32)
    ->ArgNames({"shape", "threads"})
    ->ArgsProduct({{0, 1, 2, 3}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ForwardInt8)
    ->ArgNames({"shape", "threads"})
    ->ArgsProduct({{0, 1, 2, 3}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Causal self-attention skips the key tiles above the diagonal: compare with BM_ForwardF32
// of the same shape (about half the attention core's work is left). The counters count the
// full, non-causal work, so they show the effective rate.
void BM_ForwardCausalF32(benchmark::State& state) {
  const ShapeSpec& s = Shape(state);
  const RandomModel model(s.d_model, s.heads);
  const std::vector<float> x = RandomActivations(s.seq * s.d_model);
  std::vector<float> y(x.size());
  const MultiheadAttention mha(model.config, model.view());
  Context context(1);
  ForwardOptions causal;
  causal.is_causal = true;
  for (auto _ : state) {
    mha.Forward(context, {x.data(), 1, s.seq, s.d_model}, {y.data(), 1, s.seq, s.d_model}, causal);
    benchmark::DoNotOptimize(y.data());
  }
  SetCounters(state, s, 1);
}
BENCHMARK(BM_ForwardCausalF32)
    ->ArgNames({"shape", "threads"})
    ->ArgsProduct({{2, 3}, {1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One decode step (one new position) against a KV cache of `cached` positions, d 768, 12 heads:
// the time per step grows linearly with the cache (compare cached = 128 ... 2048).
void Decode(benchmark::State& state, Precision precision) {
  const ShapeSpec& s = DecodeShape();
  const std::size_t cached = static_cast<std::size_t>(state.range(0));
  const std::size_t threads = static_cast<std::size_t>(state.range(1));
  const std::size_t d = s.d_model;
  const RandomModel model(d, s.heads);
  Config config = model.config;
  config.precision = precision;
  const MultiheadAttention mha(config, model.view());
  const std::vector<float> x = RandomActivations((cached + 1) * d);
  std::vector<float> prefix_out(cached * d), y(d);
  Context context(threads);
  KvCache cache(mha, cached + 1);
  mha.Decode(context, {x.data(), 1, cached, d}, cache, {prefix_out.data(), 1, cached, d});
  for (auto _ : state) {
    cache.Truncate(cached);
    mha.Decode(context, {x.data() + cached * d, 1, 1, d}, cache, {y.data(), 1, 1, d});
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(DecodeFlops(1, 1, cached, d) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
void BM_DecodeF32(benchmark::State& state) { Decode(state, Precision::kFp32); }
void BM_DecodeInt8(benchmark::State& state) { Decode(state, Precision::kInt8); }
BENCHMARK(BM_DecodeF32)
    ->ArgNames({"cached", "threads"})
    ->ArgsProduct({{128, 512, 2048}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_DecodeInt8)
    ->ArgNames({"cached", "threads"})
    ->ArgsProduct({{128, 512, 2048}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One cross-attention decoder step of Whisper-tiny (d 384, 6 heads) against 1500 encoder frames:
// memory = 1 attends to a CrossAttentionMemory projected once, memory = 0 re-projects the frames
// with the cross-attention Forward on every step (the same outputs).
void BM_CrossStepF32(benchmark::State& state) {
  const ShapeSpec& s = CrossStepShape();
  const bool memory = state.range(0) != 0;
  const std::size_t threads = static_cast<std::size_t>(state.range(1));
  const std::size_t d = s.d_model;
  const RandomModel model(d, s.heads);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> encoder = RandomActivations(s.seq * d, 8), x = RandomActivations(d);
  std::vector<float> y(d);
  Context context(threads);
  const ConstTensor frames{encoder.data(), 1, s.seq, d};
  CrossAttentionMemory projected(mha, s.seq);
  mha.ProjectMemory(context, frames, projected);
  for (auto _ : state) {
    if (memory) {
      mha.DecodeCross(context, {x.data(), 1, 1, d}, projected, {y.data(), 1, 1, d});
    } else {
      mha.Forward(context, {x.data(), 1, 1, d}, frames, frames, {y.data(), 1, 1, d});
    }
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_CrossStepF32)
    ->ArgNames({"memory", "threads"})
    ->ArgsProduct({{0, 1}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A beam-search step: 4 beams sharing a cached prompt of 512 positions (d 768, 12 heads) reorder
// the cache (one beam forked, one dropped), then each decodes one position.
void BM_BeamStepF32(benchmark::State& state) {
  const ShapeSpec& s = DecodeShape();
  const std::size_t beams = 4, cached = s.seq, d = s.d_model;
  const std::size_t threads = static_cast<std::size_t>(state.range(0));
  const RandomModel model(d, s.heads);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> prompt = RandomActivations(beams * cached * d),
                           x = RandomActivations(beams * d, 9);
  std::vector<float> prompt_out(prompt.size()), y(beams * d);
  Context context(threads);
  KvCache cache(mha, cached + 1, beams);
  mha.Decode(context, {prompt.data(), beams, cached, d}, cache,
             {prompt_out.data(), beams, cached, d});
  const std::size_t order[] = {0, 0, 1, 2};
  for (auto _ : state) {
    cache.Truncate(cached);
    cache.Reorder({order, beams});
    mha.Decode(context, {x.data(), beams, 1, d}, cache, {y.data(), beams, 1, d});
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_BeamStepF32)
    ->ArgNames({"threads"})
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same step with a sliding window of 512: the cache is a ring of the window, so the time
// per step stops growing once the context passes it (compare BM_DecodeF32 at 2048). The cache
// is filled in the chunks its ring takes.
void BM_DecodeWindowF32(benchmark::State& state) {
  const ShapeSpec& s = DecodeShape();
  const std::size_t cached = static_cast<std::size_t>(state.range(0));
  const std::size_t threads = static_cast<std::size_t>(state.range(1));
  const std::size_t d = s.d_model;
  RandomModel model(d, s.heads);
  AttentionMath math;
  math.window = WindowedDecodeShape().window;
  model.SetMath(math);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations((cached + 1) * d);
  std::vector<float> prefix_out(cached * d), y(d);
  Context context(threads);
  KvCache cache(mha, cached + 1);
  const std::size_t chunk = cache.slots() - math.window + 1;
  for (std::size_t first = 0; first < cached; first += chunk) {
    const std::size_t n = std::min(chunk, cached - first);
    mha.Decode(context, {x.data() + first * d, 1, n, d}, cache,
               {prefix_out.data() + first * d, 1, n, d});
  }
  for (auto _ : state) {
    cache.Truncate(cached);
    mha.Decode(context, {x.data() + cached * d, 1, 1, d}, cache, {y.data(), 1, 1, d});
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["cache_bytes"] = static_cast<double>(cache.bytes());
  state.counters["GFLOP/s"] =
      benchmark::Counter(DecodeFlops(1, 1, std::min(cached, math.window), d) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DecodeWindowF32)
    ->ArgNames({"cached", "threads"})
    ->ArgsProduct({{512, 2048, 4096}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_ForwardReference(benchmark::State& state) {
  const ShapeSpec& s = Shape(state);
  const RandomModel model(s.d_model, s.heads);
  const std::vector<float> x = RandomActivations(s.seq * s.d_model);
  std::vector<float> y(x.size());
  const ConstTensor tx{x.data(), 1, s.seq, s.d_model};
  for (auto _ : state) {
    ReferenceForward(model.config, model.view(), tx, tx, tx, {y.data(), 1, s.seq, s.d_model});
    benchmark::DoNotOptimize(y.data());
  }
  SetCounters(state, s, 1);
}
BENCHMARK(BM_ForwardReference)
    ->ArgName("shape")
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

}  // namespace
}  // namespace edgeattn

BENCHMARK_MAIN();
