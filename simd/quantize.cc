#include "simd/quantize.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/quantize.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "simd/quantize-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(QuantizeRowsI8Impl);

void QuantizeRowsI8(const float* x, size_t ldx, size_t rows, size_t k, size_t block, int8_t* q,
                    float* scales, const RowOutliers& outliers, QuantizedBytes bytes) {
  HWY_DYNAMIC_DISPATCH(QuantizeRowsI8Impl)(x, ldx, rows, k, block, q, scales, outliers, bytes);
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
