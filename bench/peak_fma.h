// This machine's peaks on one core (fp32 FMA, int8 and bf16 dot products, AMX tiles) and the
// int8 kernels' steps' rates (AMX, VNNI) by where their weights live, measured, so that benchmarks can report a
// fraction of them instead of quoting a figure from another machine.
#ifndef EDGEATTN_BENCH_PEAK_FMA_H_
#define EDGEATTN_BENCH_PEAK_FMA_H_

#include <cstddef>
#include <cstdint>

namespace edgeattn {
namespace bench {

// GFLOP/s of independent fused multiply-adds on the chosen Highway target, best of a few
// short runs (measured once per process).
double PeakFmaGflops();

// GOP/s (2 per int8 multiply-add) of independent vpdpbusd on the chosen target: AVX512-VNNI, or
// on the AVX2 target AVX-VNNI where the CPU has it; 0 elsewhere.
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

// The int8 AMX kernel's tile step (qd8_qc8w_amx_16x64) alone, `steps` times: 16 activation rows
// of kStepsRowBytes (bert's d_model) and 4 KiB of weights a step, the weights cycled through
// weight_bytes from the start, so that where they stay in the cache hierarchy sets the rate.
// Returns the operations done (2 per int8 multiply-add), or 0 where the build has no AMX or
// weight_bytes is not a positive multiple of 4096. activations: 16 x kStepsRowBytes bytes. Call
// only where simd::CpuRunsAmxInt8().
inline constexpr std::size_t kStepsRowBytes = 768;
double AmxInt8StepsOps(const std::uint8_t* activations, const std::int8_t* weights,
                       std::size_t weight_bytes, std::size_t steps);

// The VNNI kernel's step (qd8_qc8w_vnni_4x4v) alone, `steps` times: 4 activation rows of
// kStepsRowBytes and one 256-byte group of weights a step, the weights cycled through
// weight_bytes from the start. Returns the operations done (2 per int8 multiply-add), or 0 where
// the chosen target has no AVX512-VNNI or weight_bytes is not a positive multiple of 256.
// activations: 4 x kStepsRowBytes bytes.
double VnniInt8StepsOps(const std::uint8_t* activations, const std::int8_t* weights,
                        std::size_t weight_bytes, std::size_t steps);

}  // namespace bench
}  // namespace edgeattn

#endif  // EDGEATTN_BENCH_PEAK_FMA_H_
