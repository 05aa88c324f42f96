// This machine's fp32 FMA peak on one core, measured, so that benchmarks can report a
// fraction of it instead of quoting a figure from another machine.
#ifndef EDGEATTN_BENCH_PEAK_FMA_H_
#define EDGEATTN_BENCH_PEAK_FMA_H_

namespace edgeattn {
namespace bench {

// GFLOP/s of independent fused multiply-adds on the chosen Highway target, best of a few
// short runs (measured once per process).
double PeakFmaGflops();

// GOP/s (2 per int8 multiply-add) of independent AVX512-VNNI vpdpbusd, or 0 where the chosen
// target has none.
double PeakVnniGops();

// GFLOP/s (2 per bf16 multiply-add) of independent AVX512-BF16 vdpbf16ps, or 0 where the chosen
// target has none. Call only on a CPU with AVX512-BF16 (simd::CpuHasAvx512Bf16()).
double PeakBf16DotGflops();

// GFLOP/s (2 per bf16 multiply-add) of independent AMX tdpbf16ps tiles, or 0 where the build has
// no AMX. Call only where simd::CpuRunsAmxBf16() (which also asks for the tiles).
double PeakAmxBf16Gflops();

// GOP/s (2 per int8 multiply-add) of independent AMX tdpbusd tiles, or 0 where the build has no
// AMX. Call only where simd::CpuRunsAmxInt8() (which also asks for the tiles).
double PeakAmxInt8Gops();

}  // namespace bench
}  // namespace edgeattn

#endif  // EDGEATTN_BENCH_PEAK_FMA_H_
