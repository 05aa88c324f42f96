#include "simd/softmax.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/softmax.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "simd/softmax-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(SoftmaxRowsF32Impl);

void SoftmaxRowsF32(float* x, size_t rows, size_t cols, size_t stride, float scale) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRowsF32Impl)(x, rows, cols, stride, scale);
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
