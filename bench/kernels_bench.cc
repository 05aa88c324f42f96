// Per-kernel speed: the projection GEMM and the attention core on the contract shapes, in
// GFLOP/s and as a percentage of this machine's measured single-core FMA peak.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bench/peak_fma.h"
#include "hwy/aligned_allocator.h"
#include "runtime/benchmark_case.h"
#include "simd/attention.h"
#include "simd/attention_bf16dot.h"
#include "simd/cpu_features.h"
#include "simd/gemm_f32.h"
#include "simd/gemm_i8.h"
#include "simd/half_float.h"
#include "simd/projection_kernel.h"
#include "simd/quantize.h"

namespace edgeattn {
namespace {

void SetFlopCounters(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["%peak"] =
      benchmark::Counter(flops_per_iteration * 1e-9 * 100.0 / bench::PeakFmaGflops(),
                         benchmark::Counter::kIsIterationInvariantRate);
}

// The kernels with float activations this CPU runs: fp32, then bf16, then fp16 weights.
std::vector<const simd::ProjectionKernel*> FloatActivationKernels() {
  std::vector<const simd::ProjectionKernel*> kernels;
  for (simd::WeightType type :
       {simd::WeightType::kF32, simd::WeightType::kBf16, simd::WeightType::kF16}) {
    for (const simd::ProjectionKernel* kernel : simd::ProjectionKernels(type)) {
      kernels.push_back(kernel);
    }
  }
  return kernels;
}

// w as the kernel's weight type takes it: floats, or their bf16 / fp16 rounding.
std::vector<std::uint8_t> WeightsFor(const simd::ProjectionKernel& kernel,
                                     const std::vector<float>& w) {
  if (kernel.weights == simd::WeightType::kF32) {
    std::vector<std::uint8_t> bytes(w.size() * sizeof(float));
    std::memcpy(bytes.data(), w.data(), bytes.size());
    return bytes;
  }
  std::vector<std::uint8_t> bytes(w.size() * sizeof(std::uint16_t));
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::uint16_t h = kernel.weights == simd::WeightType::kBf16 ? simd::Bf16FromF32(w[i])
                                                                      : simd::F16FromF32(w[i]);
    std::memcpy(bytes.data() + 2 * i, &h, sizeof(h));
  }
  return bytes;
}

// C [m x n] = A [m x k] W^T + b, W packed once, with the fp32 and half-weight kernels (by
// index in FloatActivationKernels, named in the label).
void BM_GemmFloat(benchmark::State& state) {
  const std::size_t m = state.range(0), n = state.range(1), k = state.range(2);
  const std::vector<const simd::ProjectionKernel*> kernels = FloatActivationKernels();
  if (static_cast<std::size_t>(state.range(3)) >= kernels.size()) {
    state.SkipWithError("this CPU runs fewer kernels");
    return;
  }
  const simd::ProjectionKernel& kernel = *kernels[state.range(3)];
  const std::vector<float> a = RandomActivations(m * k, 1);
  const std::vector<std::uint8_t> w = WeightsFor(kernel, RandomActivations(n * k, 2));
  const std::size_t panels = (n + kernel.panel_width - 1) / kernel.panel_width;
  const std::vector<float> bias(panels * kernel.panel_width, 0.5f);
  auto packed = hwy::AllocateAligned<std::uint8_t>(kernel.packed_bytes(n, k, 0));
  kernel.pack(w.data(), n, k, 0, packed.get());
  std::vector<float> c(m * n);
  const simd::PackedProjectionView view{packed.get(), nullptr, bias.data(), n, k, 0};
  for (auto _ : state) {
    kernel.run({a.data(), k, {}}, 0, m, view, 0, panels, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlopCounters(state, 2.0 * m * n * k);
  state.SetLabel(kernel.name);
}
// The projections of each contract shape: fused Q/K/V width (3d) and the output width (d), for
// up to four kernels (fp32, bf16 dot product, bf16 and fp16 widening on AVX512-BF16 CPUs).
BENCHMARK(BM_GemmFloat)
    ->ArgNames({"M", "N", "K", "kernel"})
    ->ArgsProduct({{64}, {768, 256}, {256}, {0, 1, 2, 3}})
    ->ArgsProduct({{128}, {1152, 384}, {384}, {0, 1, 2, 3}})
    ->ArgsProduct({{128}, {2304, 768}, {768}, {0, 1, 2, 3}})
    ->ArgsProduct({{1500}, {1152, 384}, {384}, {0, 1, 2, 3}})
    ->Unit(benchmark::kMicrosecond);

// int8 GEMM: C [m x n] from activations quantized per row and block, weights packed once.
// Counts 2 ops per multiply-add; "%vnni" is against the measured vpdpbusd peak (BM_PeakVnni;
// elsewhere 4x the fp32 FMA peak, what a 4-byte dot product per fp32 FMA slot would give).
void BM_GemmI8(benchmark::State& state) {
  const std::size_t m = state.range(0), n = state.range(1), k = state.range(2);
  const std::size_t block = state.range(3);
  const std::vector<float> x = RandomActivations(m * k, 1);
  std::vector<std::int8_t> wq(n * k);
  for (std::size_t i = 0; i < wq.size(); ++i) wq[i] = static_cast<std::int8_t>(i * 37 % 255 - 127);
  std::vector<std::int8_t> xq(m * simd::QuantizedRowStride(k));
  std::vector<float> xs(m * simd::QuantBlockCount(k, block));
  // The kernel the operator chooses, its weights aligned as the operator aligns them: 64-byte
  // vector loads then never split lines.
  const simd::ProjectionKernel& kernel = *simd::ProjectionKernels(simd::WeightType::kQc8).front();
  auto packed = hwy::AllocateAligned<std::uint8_t>(kernel.packed_bytes(n, k, block));
  kernel.pack(wq.data(), n, k, block, packed.get());
  const std::size_t panels = (n + kernel.panel_width - 1) / kernel.panel_width;
  const std::vector<float> scales(panels * kernel.panel_width, 0.01f);
  std::vector<float> c(m * n);
  const simd::PackedProjectionView w{packed.get(), scales.data(), scales.data(), n, k, block};
  for (auto _ : state) {
    simd::QuantizeRowsI8(x.data(), k, m, k, block, xq.data(), xs.data(), {},
                         simd::QuantizedBytesOf(kernel.activations));
    simd::ProjectionInput in;
    in.qd8 = {xq.data(), xs.data()};
    kernel.run(in, 0, m, w, 0, panels, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  const double ops = 2.0 * m * n * k;
  state.counters["GOP/s"] =
      benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  // A fraction of the peak of the unit the kernel runs on: the AMX tiles (its name says so), or
  // vpdpbusd (4 FMAs' worth where the target has none).
  const bool tiles = std::strstr(kernel.name, "_amx_") != nullptr;
  const double peak = tiles                         ? bench::PeakAmxInt8Gops()
                      : bench::PeakVnniGops() > 0.0 ? bench::PeakVnniGops()
                                                    : 4 * bench::PeakFmaGflops();
  state.counters[tiles ? "%amx" : "%vnni"] =
      benchmark::Counter(ops * 1e-9 * 100.0 / peak, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(kernel.name);
}
BENCHMARK(BM_GemmI8)
    ->ArgNames({"M", "N", "K", "block"})
    ->Args({64, 768, 256, 64})
    ->Args({128, 1152, 384, 64})
    ->Args({128, 2304, 768, 32})
    ->Args({128, 2304, 768, 64})
    ->Args({128, 2304, 768, 128})
    ->Args({128, 2304, 768, 256})
    ->Args({128, 2304, 768, 768})
    ->Args({128, 768, 768, 64})
    ->Args({1500, 1152, 384, 64})
    // The QKV projections of whisper, minilm and tiny in the operator's default blocks (256).
    ->Args({1500, 1152, 384, 256})
    ->Args({128, 1152, 384, 256})
    ->Args({64, 768, 256, 256})
    ->Unit(benchmark::kMicrosecond);

// Dynamic quantization of activation rows as the int8 projections take them (per row and
// block, with the row's outliers kept in float): M rows of K values, in G values/s.
void BM_QuantizeRows(benchmark::State& state) {
  const std::size_t m = state.range(0), k = state.range(1), block = state.range(2);
  const std::vector<float> x = RandomActivations(m * k, 1);
  std::vector<std::int8_t> xq(m * simd::QuantizedRowStride(k));
  std::vector<float> xs(m * simd::QuantBlockCount(k, block));
  std::vector<std::uint32_t> count(m), channel(m * simd::kMaxOutliersPerRow);
  std::vector<float> value(m * simd::kMaxOutliersPerRow);
  const simd::RowOutliers outliers{count.data(), channel.data(), value.data()};
  for (auto _ : state) {
    simd::QuantizeRowsI8(x.data(), k, m, k, block, xq.data(), xs.data(), outliers,
                         simd::QuantizedBytes::kOffsetUnsigned);
    benchmark::DoNotOptimize(xq.data());
  }
  state.counters["Gvalues/s"] =
      benchmark::Counter(double(m) * k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_QuantizeRows)
    ->ArgNames({"M", "K", "block"})
    ->Args({128, 768, 256})
    ->Args({1500, 384, 256})
    ->Args({128, 768, 64})
    ->Unit(benchmark::kMicrosecond);

// The kernels a head is timed with: the best fp32 kernel, then every bf16-K/V and fp16-K/V
// kernel this CPU runs, best first (AMX tiles, widening, vdpbf16ps; vfmadd231ph, widening).
std::vector<const simd::AttentionKernel*> HeadKernels() {
  std::vector<const simd::AttentionKernel*> kernels = {
      simd::AttentionKernels(simd::KvType::kF32).front()};
  for (simd::KvType type : {simd::KvType::kBf16, simd::KvType::kF16}) {
    for (const simd::AttentionKernel* kernel : simd::AttentionKernels(type)) {
      kernels.push_back(kernel);
    }
  }
  return kernels;
}

// One head of the attention core with kernel `kernel` of HeadKernels (named in the label): L
// queries against L keys of width dk, unmasked or causal. FLOPs count Q K^T and P V over the
// keys each row sees (causal: about half); "%dpbf16" is their rate against the measured
// vdpbf16ps peak, where the CPU has AVX512-BF16.
void BM_AttentionHead(benchmark::State& state) {
  const std::size_t l = state.range(0), dk = state.range(1);
  const bool causal = state.range(2) != 0;
  const simd::AttentionKernel& kernel = *HeadKernels()[state.range(3)];
  const std::vector<float> q = RandomActivations(l * dk, 1);
  const std::vector<float> k = RandomActivations(l * dk, 2);
  const std::vector<float> v = RandomActivations(l * dk, 3);
  auto keys = hwy::AllocateAligned<std::uint8_t>(kernel.keys_bytes(l, dk));
  auto values = hwy::AllocateAligned<std::uint8_t>(kernel.values_bytes(l, dk));
  auto scratch = hwy::AllocateAligned<float>(kernel.scratch_floats(dk));
  kernel.pack(k.data(), dk, v.data(), dk, 0, l, l, dk, keys.get(), values.get());
  std::vector<float> out(l * dk);
  simd::AttentionHeadArgs args{
      q.data(), dk, keys.get(), values.get(), l, dk, 1.0f / std::sqrt(float(dk)), out.data(), dk};
  args.mask.causal = causal;
  for (auto _ : state) {
    kernel.run(args, 0, l, scratch.get());
    benchmark::DoNotOptimize(out.data());
  }
  const double pairs = causal ? 0.5 * l * (l + 1) : double(l) * l;
  SetFlopCounters(state, 4.0 * pairs * dk);
  if (simd::CpuHasAvx512Bf16() && bench::PeakBf16DotGflops() > 0.0) {
    state.counters["%dpbf16"] =
        benchmark::Counter(4.0 * pairs * dk * 1e-9 * 100.0 / bench::PeakBf16DotGflops(),
                           benchmark::Counter::kIsIterationInvariantRate);
  }
  state.SetLabel(kernel.name);
}
BENCHMARK(BM_AttentionHead)
    ->ArgNames({"L", "dk", "causal", "kernel"})
    ->Args({64, 64, 0, 0})    // tiny
    ->Args({128, 32, 0, 0})   // minilm
    ->Args({128, 64, 0, 0})   // bert
    ->Args({1500, 64, 0, 0})  // whisper
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (std::int64_t l : {128, 512, 1500}) {
        for (std::int64_t dk : {32, 64, 128}) {
          for (std::int64_t causal : {0, 1}) {
            for (std::size_t i = 0; i < HeadKernels().size(); ++i) {
              b->Args({l, dk, causal, static_cast<std::int64_t>(i)});
            }
          }
        }
      }
    })
    ->Unit(benchmark::kMicrosecond);

// Every attention kernel of every KV format, fp32 first: what a decode step's core reads.
std::vector<const simd::AttentionKernel*> AllAttentionKernels() {
  std::vector<const simd::AttentionKernel*> all;
  for (simd::KvType type :
       {simd::KvType::kF32, simd::KvType::kBf16, simd::KvType::kF16, simd::KvType::kI8}) {
    for (const simd::AttentionKernel* kernel : simd::AttentionKernels(type)) all.push_back(kernel);
  }
  return all;
}

// The attention core over `cached` keys and values of each of `heads` heads of width dk 64, in
// each kernel's KV format, for `rows` query rows per head: one is a decode step (12 x 64 at 2048
// positions: 12.6 MB in fp32, far beyond L2; at 256, 1.6 MB, within it: the core's compute
// alone), as many as the keys a forward call's (whisper's 1500 over 6 heads). The bytes the
// heads' keys and values occupy are counted as read once (kv GB/s).
void BM_AttentionCompactKv(benchmark::State& state) {
  const std::size_t rows = state.range(0), cached = state.range(1), heads = state.range(2);
  const std::size_t dk = 64;
  const simd::AttentionKernel& kernel = *AllAttentionKernels()[state.range(3)];
  const std::size_t keys_bytes = kernel.keys_bytes(cached, dk);
  const std::size_t values_bytes = kernel.values_bytes(cached, dk);
  auto keys = hwy::AllocateAligned<std::uint8_t>(heads * keys_bytes);
  auto values = hwy::AllocateAligned<std::uint8_t>(heads * values_bytes);
  auto scratch = hwy::AllocateAligned<float>(kernel.scratch_floats(dk));
  for (std::size_t h = 0; h < heads; ++h) {
    const std::vector<float> k = RandomActivations(cached * dk, 2 + h);
    const std::vector<float> v = RandomActivations(cached * dk, 200 + h);
    kernel.pack(k.data(), dk, v.data(), dk, 0, cached, cached, dk, keys.get() + h * keys_bytes,
                values.get() + h * values_bytes);
  }
  const std::vector<float> q = RandomActivations(rows * heads * dk, 1);
  std::vector<float> out(rows * heads * dk);
  for (auto _ : state) {
    for (std::size_t h = 0; h < heads; ++h) {
      simd::AttentionHeadArgs args{q.data() + h * dk,
                                   heads * dk,
                                   keys.get() + h * keys_bytes,
                                   values.get() + h * values_bytes,
                                   cached,
                                   dk,
                                   1.0f / std::sqrt(float(dk)),
                                   out.data() + h * dk,
                                   heads * dk};
      kernel.run(args, 0, rows, scratch.get());
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["kv GB/s"] = benchmark::Counter(double(heads * (keys_bytes + values_bytes)) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(kernel.name);
}
BENCHMARK(BM_AttentionCompactKv)
    ->ArgNames({"rows", "cached", "heads", "kernel"})
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (std::size_t i = 0; i < AllAttentionKernels().size(); ++i) {
        const auto kernel = static_cast<std::int64_t>(i);
        b->Args({1, 2048, 12, kernel});
        b->Args({1, 256, 12, kernel});
        b->Args({1500, 1500, 6, kernel});
      }
    })
    ->Unit(benchmark::kMicrosecond);

// One head's keys and values packed into each kernel's layout, as a forward call packs them
// before it attends: `positions` rows of dk 64 in one call, read as bert's projections hold them
// (a head's 64 columns of rows 768 wide). 32 positions stay in L1; 128 (bert's) and 1500
// (whisper's) come from L2.
void BM_PackCompactKv(benchmark::State& state) {
  const std::size_t positions = state.range(0), dk = 64, ld = 768;
  const simd::AttentionKernel& kernel = *AllAttentionKernels()[state.range(1)];
  auto keys = hwy::AllocateAligned<std::uint8_t>(kernel.keys_bytes(positions, dk));
  auto values = hwy::AllocateAligned<std::uint8_t>(kernel.values_bytes(positions, dk));
  const std::vector<float> k = RandomActivations(positions * ld, 2);
  const std::vector<float> v = RandomActivations(positions * ld, 3);
  for (auto _ : state) {
    kernel.pack(k.data(), ld, v.data(), ld, 0, positions, positions, dk, keys.get(), values.get());
    benchmark::DoNotOptimize(keys.get());
    benchmark::DoNotOptimize(values.get());
  }
  state.counters["ns/position"] = benchmark::Counter(
      double(positions) * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                    benchmark::Counter::kInvert);
  state.SetLabel(kernel.name);
}
BENCHMARK(BM_PackCompactKv)
    ->ArgNames({"positions", "kernel"})
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (std::size_t i = 0; i < AllAttentionKernels().size(); ++i) {
        for (std::int64_t positions : {32, 128, 1500}) {
          b->Args({positions, static_cast<std::int64_t>(i)});
        }
      }
    })
    ->Unit(benchmark::kMicrosecond);

void BM_PeakFma(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(bench::PeakFmaGflops());
  state.counters["GFLOP/s"] = bench::PeakFmaGflops();
}
BENCHMARK(BM_PeakFma)->Iterations(1);

void BM_PeakBf16Dot(benchmark::State& state) {
  if (!simd::CpuHasAvx512Bf16()) {
    state.SkipWithError("this CPU has no AVX512-BF16");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(bench::PeakBf16DotGflops());
  state.counters["GFLOP/s"] = bench::PeakBf16DotGflops();
}
BENCHMARK(BM_PeakBf16Dot)->Iterations(1);

void BM_PeakAmxBf16(benchmark::State& state) {
  if (!simd::CpuRunsAmxBf16()) {
    state.SkipWithError("this CPU or process runs no AMX-BF16 tiles");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(bench::PeakAmxBf16Gflops());
  state.counters["GFLOP/s"] = bench::PeakAmxBf16Gflops();
}
BENCHMARK(BM_PeakAmxBf16)->Iterations(1);

void BM_PeakAmxInt8(benchmark::State& state) {
  if (!simd::CpuRunsAmxInt8()) {
    state.SkipWithError("this CPU or process runs no AMX-INT8 tiles");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(bench::PeakAmxInt8Gops());
  state.counters["GOP/s"] = bench::PeakAmxInt8Gops();
}
BENCHMARK(BM_PeakAmxInt8)->Iterations(1);

// An int8 kernel's step alone (bench::AmxInt8StepsOps or VnniInt8StepsOps: `rows` activation
// rows, `steps` steps a call) with its weights cycled through weights_kib KiB: from L1 (48 KiB
// here), L2 or beyond; `unit` (e.g. "%amx") is the rate against `peak`, which loads nothing.
template <class StepsOps>
void RunInt8Steps(benchmark::State& state, std::size_t rows, std::size_t steps, double peak,
                  const char* unit, StepsOps steps_ops) {
  const std::size_t weight_bytes = static_cast<std::size_t>(state.range(0)) * 1024;
  auto activations = hwy::AllocateAligned<std::uint8_t>(rows * bench::kStepsRowBytes);
  auto weights = hwy::AllocateAligned<std::int8_t>(weight_bytes);
  // Written, so that every page is its own (untouched pages would all map the one zero page).
  for (std::size_t i = 0; i < rows * bench::kStepsRowBytes; ++i) {
    activations[i] = static_cast<std::uint8_t>(i * 7 % 251);
  }
  for (std::size_t i = 0; i < weight_bytes; ++i) {
    weights[i] = static_cast<std::int8_t>(i * 13 % 251);
  }
  double ops = 0.0;
  for (auto _ : state) ops = steps_ops(activations.get(), weights.get(), weight_bytes, steps);
  state.counters["GOP/s"] =
      benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters[unit] =
      benchmark::Counter(ops * 1e-9 * 100.0 / peak, benchmark::Counter::kIsIterationInvariantRate);
}

// The int8 AMX kernel's tile step (16 rows, four weight tiles).
void BM_AmxInt8Steps(benchmark::State& state) {
  if (!simd::CpuRunsAmxInt8()) {
    state.SkipWithError("this CPU or process runs no AMX-INT8 tiles");
    return;
  }
  RunInt8Steps(state, 16, 4096, bench::PeakAmxInt8Gops(), "%amx", &bench::AmxInt8StepsOps);
}
BENCHMARK(BM_AmxInt8Steps)
    ->ArgName("weights_kib")
    ->Arg(16)
    ->Arg(48)  // one bert panel (64 features x 768)
    ->Arg(64)
    ->Arg(256)
    ->Arg(2048)
    ->Unit(benchmark::kMicrosecond);

void BM_PeakVnni(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(bench::PeakVnniGops());
  state.counters["GOP/s"] = bench::PeakVnniGops();
}
BENCHMARK(BM_PeakVnni)->Iterations(1);

// The VNNI kernel's step (4 rows, one group of four weight vectors).
void BM_VnniInt8Steps(benchmark::State& state) {
  if (bench::PeakVnniGops() == 0.0) {
    state.SkipWithError("this CPU or build runs no AVX512-VNNI");
    return;
  }
  RunInt8Steps(state, 4, 16384, bench::PeakVnniGops(), "%vnni", &bench::VnniInt8StepsOps);
}
BENCHMARK(BM_VnniInt8Steps)
    ->ArgName("weights_kib")
    ->Arg(16)
    ->Arg(32)
    ->Arg(48)  // one bert panel (64 features x 768)
    ->Arg(64)
    ->Arg(256)
    ->Arg(2048)
    ->Arg(8192)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace edgeattn

BENCHMARK_MAIN();
