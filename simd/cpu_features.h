// CPU features that select kernels beyond what a Highway target implies: a target names a
// family of CPUs, and some instructions exist on only part of it (AVX512-BF16 is on Zen 4 and
// Cooper Lake, not on Ice Lake, all of which run Highway's AVX3_DL code).
#ifndef EDGEATTN_SIMD_CPU_FEATURES_H_
#define EDGEATTN_SIMD_CPU_FEATURES_H_

namespace edgeattn {
namespace simd {

// AVX512-BF16 (vcvtneps2bf16, vdpbf16ps): CPUID leaf 7, sub-leaf 1, EAX bit 5. Whether the OS
// saves AVX-512 state is the AVX3 targets' own check, which every caller has passed.
bool CpuHasAvx512Bf16();

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_CPU_FEATURES_H_
