#include "simd/cpu_features.h"

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

#if defined(__x86_64__) || defined(__i386__)
namespace {

struct CpuidRegisters {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// Leaf 7, the given sub-leaf; zeros where the CPU has no leaf 7.
CpuidRegisters Leaf7(unsigned subleaf) {
  CpuidRegisters r;
  if (__get_cpuid_max(0, nullptr) >= 7) __cpuid_count(7, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

}  // namespace
#endif

bool CpuHasAvx512Bf16() {
#if defined(__x86_64__) || defined(__i386__)
  return (Leaf7(1).eax & (1u << 5)) != 0;
#else
  return false;
#endif
}

#if defined(__x86_64__) && defined(__linux__)
namespace {

bool OsSavesTileState() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  __cpuid(1, eax, ebx, ecx, edx);
  if ((ecx & (1u << 27)) == 0) return false;  // OSXSAVE: xgetbv is available
  unsigned xcr0_low = 0, xcr0_high = 0;
  asm volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  const unsigned tile_state = (1u << 17) | (1u << 18);  // XTILECFG, XTILEDATA
  return (xcr0_low & tile_state) == tile_state;
}

bool DetectAmxInt8() {
  const unsigned amx = (1u << 24) | (1u << 25);  // AMX-TILE, AMX-INT8
  if ((Leaf7(0).edx & amx) != amx || !OsSavesTileState()) return false;
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

}  // namespace
#endif

bool CpuHasAmxInt8() {
#if defined(__x86_64__) && defined(__linux__)
  static const bool has = DetectAmxInt8();
  return has;
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
