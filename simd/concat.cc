#include "simd/concat.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/concat.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "simd/concat-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ConcatHeadsF32Impl);

void ConcatHeadsF32(const float* heads, size_t num_heads, size_t rows, size_t dk,
                    size_t head_stride, float* out, size_t ldo) {
  HWY_DYNAMIC_DISPATCH(ConcatHeadsF32Impl)(heads, num_heads, rows, dk, head_stride, out, ldo);
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
