// Scalar conversions between float and the two 16-bit formats of half-precision weights, as
// bit patterns: bf16 (float's sign and 8-bit exponent, 7 mantissa bits) and IEEE fp16 (5-bit
// exponent, 10 mantissa bits, largest finite 65504). Float to half rounds to nearest, ties to
// even, as PyTorch's .to(torch.bfloat16 / torch.float16) does; half to float is exact.
#ifndef EDGEATTN_SIMD_HALF_FLOAT_H_
#define EDGEATTN_SIMD_HALF_FLOAT_H_

#include <stdint.h>
#include <string.h>

namespace edgeattn {
namespace simd {

inline uint32_t FloatBits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  return bits;
}

inline float BitsFloat(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

inline float F32FromBf16(uint16_t h) { return BitsFloat(static_cast<uint32_t>(h) << 16); }

// NaN stays NaN (quiet, sign kept); finite values too large round to infinity.
inline uint16_t Bf16FromF32(float f) {
  const uint32_t bits = FloatBits(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t round = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + round) >> 16);
}

inline float F32FromF16(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) return BitsFloat(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return BitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float.
  const float magnitude = static_cast<float>(mantissa) * BitsFloat(0x33800000u);
  return sign != 0 ? -magnitude : magnitude;
}

// |f| beyond 65504 (after rounding) becomes infinity; below 2^-24 it rounds to zero or to a
// subnormal half. NaN stays NaN (quiet, sign kept).
inline uint16_t F16FromF32(float f) {
  const uint32_t bits = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs < 0x38800000u) {
    // Below the smallest normal half (2^-14): a multiple of 2^-24, rounded by float addition
    // (0.5 has the exponent at which float's last place is 2^-24).
    const float shifted = BitsFloat(abs) + 0.5f;
    return static_cast<uint16_t>(sign | (FloatBits(shifted) - 0x3F000000u));
  }
  const uint32_t round = 0xFFFu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((abs - 0x38000000u + round) >> 13));
}

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_HALF_FLOAT_H_
