#include "simd/attention_arm_half.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/attention_arm_half.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "simd/attention_arm_half-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ListArmHalfKernels);

std::vector<const AttentionKernel*> ArmHalfAttentionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListArmHalfKernels)();
}

// The kernel's bits, as <asm/hwcap.h> defines them (older libc headers may lack the names).
bool CpuHasArmFp16Arithmetic() {
#if defined(__aarch64__) && defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
  return true;
#elif defined(__aarch64__) && defined(__linux__)
  static const bool has = (getauxval(AT_HWCAP) & (1ul << 10)) != 0;  // HWCAP_ASIMDHP
  return has;
#else
  return false;
#endif
}

bool CpuHasArmBf16() {
#if defined(__aarch64__) && defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC)
  return true;
#elif defined(__aarch64__) && defined(__linux__)
  static const bool has = (getauxval(AT_HWCAP2) & (1ul << 14)) != 0;  // HWCAP2_BF16
  return has;
#else
  return false;
#endif
}

size_t ArmHalfAttentionScratch(size_t dk) {
  // Per row of a block: the query as 16-bit values (whole 8-lane vectors) and a key tile's
  // probabilities, after the compact-KV kernels' scratch (whose first part is the fp32 queries).
  const size_t halves = (dk + 7) / 8 * 8 + kAttentionKeyTile;
  return CompactKvScratch(dk) + kAttentionMaxBlockRows * halves / 2;
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
