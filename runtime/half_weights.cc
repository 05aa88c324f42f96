#include "runtime/half_weights.h"

#include <cmath>

#include "runtime/text_checks.h"
#include "simd/half_float.h"

namespace edgeattn {

simd::WeightType WeightTypeOf(Precision precision) {
  switch (precision) {
    case Precision::kInt8:
      return simd::WeightType::kQc8;
    case Precision::kBf16:
      return simd::WeightType::kBf16;
    case Precision::kFp16:
      return simd::WeightType::kF16;
    default:
      return simd::WeightType::kF32;
  }
}

std::vector<std::uint16_t> NarrowWeights(simd::WeightType type, const float* w, std::size_t count,
                                         const std::string& name) {
  std::vector<std::uint16_t> out(count);
  if (type == simd::WeightType::kBf16) {
    for (std::size_t i = 0; i < count; ++i) out[i] = simd::Bf16FromF32(w[i]);
    return out;
  }
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = simd::F16FromF32(w[i]);
    if (std::isfinite(w[i]) && !std::isfinite(simd::F32FromF16(out[i]))) {
      throw Error(name + ": expected values within fp16's range (|w| <= 65504), got " +
                  std::to_string(w[i]) + " at element " + Str(i) +
                  " (use Precision::kBf16, whose range is float's)");
    }
  }
  return out;
}

}  // namespace edgeattn
