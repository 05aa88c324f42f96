#include "simd/cpu_features.h"

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__aarch64__) && defined(__linux__) && !defined(__ARM_FEATURE_DOTPROD)
#include <sys/auxv.h>
#endif

namespace edgeattn {
namespace simd {

namespace {

#if defined(__x86_64__) || defined(__i386__)
enum class Leaf7Register { kEax, kEcx, kEdx };

// Bit `bit` of register `reg` of CPUID leaf 7, sub-leaf `subleaf`; false without leaf 7.
bool Leaf7Bit(unsigned subleaf, Leaf7Register reg, unsigned bit) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, subleaf, eax, ebx, ecx, edx);
  const unsigned value =
      reg == Leaf7Register::kEax ? eax : (reg == Leaf7Register::kEcx ? ecx : edx);
  return (value & (1u << bit)) != 0;
}
#endif

#if defined(__x86_64__) && defined(__linux__)
// XCR0, read with xgetbv (its opcode bytes: the instruction needs -mxsave as a mnemonic).
uint64_t ReadXcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// AMX-TILE plus the feature bit `unit` of CPUID leaf 7 EDX, tile state saved by the OS, and the
// process's permission for tile data.
bool DetectAmx(unsigned unit) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 0xd) return false;
  __cpuid_count(1, 0, eax, ebx, ecx, edx);
  if ((ecx & (1u << 27)) == 0) return false;  // OSXSAVE: xgetbv is there
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const unsigned kTile = 1u << 24;
  if ((edx & (kTile | unit)) != (kTile | unit)) return false;
  const uint64_t kTileState = (1ull << 17) | (1ull << 18);  // XTILECFG, XTILEDATA
  if ((ReadXcr0() & kTileState) != kTileState) return false;
  const long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#endif

}  // namespace

bool CpuHasAvx512Bf16() {
#if defined(__x86_64__) || defined(__i386__)
  return Leaf7Bit(1, Leaf7Register::kEax, 5);
#else
  return false;
#endif
}

// The checks on kernels' hot paths are asked once: CPUID exits a virtual machine.
bool CpuHasAvx512Vnni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = Leaf7Bit(0, Leaf7Register::kEcx, 11);
  return has;
#else
  return false;
#endif
}

bool CpuHasAvxVnni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = Leaf7Bit(1, Leaf7Register::kEax, 4);
  return has;
#else
  return false;
#endif
}

bool CpuHasAvx512Fp16() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = Leaf7Bit(0, Leaf7Register::kEdx, 23);
  return has;
#else
  return false;
#endif
}

bool CpuRunsAmxInt8() {
#if defined(__x86_64__) && defined(__linux__)
  static const bool runs = DetectAmx(1u << 25);
  return runs;
#else
  return false;
#endif
}

bool CpuRunsAmxBf16() {
#if defined(__x86_64__) && defined(__linux__)
  // The bf16 tile kernels round their fp32 operands with vcvtneps2bf16 (AVX512-BF16), which a
  // virtual machine may hide while it exposes the tiles.
  static const bool runs = DetectAmx(1u << 22) && CpuHasAvx512Bf16();
  return runs;
#else
  return false;
#endif
}

bool CpuHasNeonDotProduct() {
#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
  return true;
#elif defined(__aarch64__) && defined(__linux__)
  static const bool has = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return has;
#else
  return false;
#endif
}

}  // namespace simd
}  // namespace edgeattn
