// Projection weights in the 16-bit formats (Precision::kBf16, kFp16): the kernel weight type a
// precision asks for, and float weights rounded to it once, when an operator is built.
#ifndef EDGEATTN_RUNTIME_HALF_WEIGHTS_H_
#define EDGEATTN_RUNTIME_HALF_WEIGHTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "simd/projection_kernel.h"

namespace edgeattn {

// kFp32 -> kF32, kInt8 -> kQc8, kBf16 -> kBf16, kFp16 -> kF16.
simd::WeightType WeightTypeOf(Precision precision);

// count floats rounded to nearest even as `type` (kBf16 or kF16) bit patterns. NaN and
// infinity stay what they are, as in fp32 weights; a finite value beyond fp16's range (65504)
// is an edgeattn::Error naming `name`, the element and the value.
std::vector<std::uint16_t> NarrowWeights(simd::WeightType type, const float* w, std::size_t count,
                                         const std::string& name);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_HALF_WEIGHTS_H_
