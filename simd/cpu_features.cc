#include "simd/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace edgeattn {
namespace simd {

bool CpuHasAvx512Bf16() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 1, eax, ebx, ecx, edx);
  return (eax & (1u << 5)) != 0;
#else
  return false;
#endif
}

}  // namespace simd
}  // namespace edgeattn
