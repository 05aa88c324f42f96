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

// AVX512-VNNI (vpdpbusd on 512-bit vectors): CPUID leaf 7, sub-leaf 0, ECX bit 11. Every CPU of
// Highway's AVX3_DL and later x86 targets has it; of its AVX3 target (AVX-512 without Ice Lake's
// additions) Cascade Lake and Cooper Lake do, Skylake-SP does not. Whether the OS saves AVX-512
// state is the AVX3 targets' own check, which every caller has passed.
bool CpuHasAvx512Vnni();

// AVX-VNNI (the VEX-encoded vpdpbusd on 256-bit vectors: Intel cores from Alder Lake and
// Gracemont): CPUID leaf 7, sub-leaf 1, EAX bit 4. Whether the OS saves AVX state is the AVX2
// target's own check, which every caller has passed.
bool CpuHasAvxVnni();

// AVX512-FP16 (vfmadd231ph and the other fp16 arithmetic): CPUID leaf 7, sub-leaf 0, EDX bit 23,
// with the same reliance on the AVX3 targets' check of the OS's AVX-512 state.
bool CpuHasAvx512Fp16();

// AMX with int8 tiles (tdpbusd): CPUID leaf 7 EDX bits 24 (AMX-TILE) and 25 (AMX-INT8), the OS
// saving tile state (XCR0 bits 17 and 18) and, on Linux, the process's permission to use it
// (arch_prctl ARCH_REQ_XCOMP_PERM, asked once per process: without it the first tile instruction
// faults). False elsewhere.
bool CpuRunsAmxInt8();

// AMX with bf16 tiles (tdpbf16ps): the same checks with CPUID leaf 7 EDX bit 22 (AMX-BF16), and
// AVX512-BF16, with which the bf16 tile kernels round their operands.
bool CpuRunsAmxBf16();

// The Armv8.2 dot product (sdot, udot) on AArch64: always where the whole build targets it
// (-march=...+dotprod defines __ARM_FEATURE_DOTPROD, e.g. iOS), else HWCAP_ASIMDDP on Linux and
// Android. False elsewhere.
bool CpuHasNeonDotProduct();

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_CPU_FEATURES_H_
