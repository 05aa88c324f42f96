#include "simd/qk_transforms.h"

#include <math.h>

#include "simd/targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/qk_transforms.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "simd/qk_transforms-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(TransformHeadsF32);

void RotaryTables(float position, const float* inv_freq, size_t rotary_dim, bool interleaved,
                  float* cos, float* sin) {
  for (size_t i = 0; i < rotary_dim / 2; ++i) {
    const float angle = position * inv_freq[i];
    const float c = cosf(angle);
    const float s = sinf(angle);
    if (interleaved) {
      cos[2 * i] = cos[2 * i + 1] = c;
      sin[2 * i] = -s;
      sin[2 * i + 1] = s;
    } else {
      cos[i] = c;
      sin[i] = s;
    }
  }
}

void TransformHeads(float* x, size_t heads, size_t dk, const HeadTransform& transform) {
  HWY_DYNAMIC_DISPATCH(TransformHeadsF32)(x, heads, dk, transform);
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
