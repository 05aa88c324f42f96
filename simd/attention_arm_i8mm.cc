#include "simd/attention_arm_i8mm.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/attention_arm_i8mm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "simd/attention_arm_i8mm-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ListArmI8mmKernels);

std::vector<const AttentionKernel*> ArmI8mmAttentionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListArmI8mmKernels)();
}

bool CpuHasArmI8mm() {
#if defined(__aarch64__) && defined(__ARM_FEATURE_MATMUL_INT8)
  return true;
#elif defined(__aarch64__) && defined(__linux__)
  static const bool has = (getauxval(AT_HWCAP2) & (1ul << 13)) != 0;  // HWCAP2_I8MM
  return has;
#else
  return false;
#endif
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
