// The scalar conversions behind half-precision weights and the kernels' models: every 16-bit
// value widens exactly and narrows back to itself; between two neighbouring halves, floats
// round to the nearer one and ties to the even one; out-of-range values and NaN.
#include "simd/half_float.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace edgeattn {
namespace {

using Widen = float (*)(std::uint16_t);
using Narrow = std::uint16_t (*)(float);

struct Format {
  const char* name;
  Widen widen;
  Narrow narrow;
};

const Format kFormats[] = {{"bf16", &simd::F32FromBf16, &simd::Bf16FromF32},
                           {"fp16", &simd::F32FromF16, &simd::F16FromF32}};

float NextUp(float x) { return std::nextafter(x, std::numeric_limits<float>::infinity()); }
float NextDown(float x) { return std::nextafter(x, -std::numeric_limits<float>::infinity()); }

TEST(HalfFloatTest, EveryValueRoundTripsAndNeighboursRoundToNearestEven) {
  for (const Format& f : kFormats) {
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
      const float x = f.widen(static_cast<std::uint16_t>(h));
      if (std::isnan(x)) {
        EXPECT_TRUE(std::isnan(f.widen(f.narrow(x)))) << f.name << " " << h;
        continue;
      }
      ASSERT_EQ(f.narrow(x), h) << f.name << " " << h;
      // Positive finite values and their successor: the midpoint is exact in float.
      const float next = f.widen(static_cast<std::uint16_t>(h + 1));
      if ((h & 0x8000u) != 0 || !std::isfinite(next) || std::isnan(next)) continue;
      const float mid = x + (next - x) / 2;
      const std::uint16_t even =
          (h & 1u) == 0 ? static_cast<std::uint16_t>(h) : static_cast<std::uint16_t>(h + 1);
      ASSERT_EQ(f.narrow(mid), even) << f.name << " tie above " << h;
      ASSERT_EQ(f.narrow(NextDown(mid)), h) << f.name << " below the tie above " << h;
      ASSERT_EQ(f.narrow(NextUp(mid)), h + 1) << f.name << " above the tie above " << h;
      ASSERT_EQ(f.narrow(-mid), even | 0x8000u) << f.name << " negative tie " << h;
    }
  }
}

TEST(HalfFloatTest, RangeAndSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(simd::F16FromF32(65504.0f), 0x7BFF);
  EXPECT_EQ(simd::F16FromF32(65519.0f), 0x7BFF);
  EXPECT_EQ(simd::F16FromF32(65520.0f), 0x7C00);  // the tie past 65504 rounds to infinity
  EXPECT_EQ(simd::F16FromF32(-1e9f), 0xFC00);
  EXPECT_EQ(simd::F16FromF32(inf), 0x7C00);
  EXPECT_EQ(simd::F16FromF32(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(simd::F16FromF32(NextUp(std::ldexp(1.0f, -25))), 0x0001);
  EXPECT_EQ(simd::F16FromF32(-0.0f), 0x8000);
  EXPECT_EQ(simd::Bf16FromF32(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(simd::Bf16FromF32(-inf), 0xFF80);
  EXPECT_EQ(simd::Bf16FromF32(std::numeric_limits<float>::denorm_min()), 0x0000);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(simd::F32FromBf16(simd::Bf16FromF32(nan))));
  EXPECT_TRUE(std::isnan(simd::F32FromBf16(simd::Bf16FromF32(-nan))));
  EXPECT_TRUE(std::isnan(simd::F32FromF16(simd::F16FromF32(nan))));
  // A signalling NaN whose payload lies in the dropped bits stays NaN.
  EXPECT_TRUE(std::isnan(simd::F32FromBf16(simd::Bf16FromF32(simd::BitsFloat(0x7F800001u)))));
  EXPECT_TRUE(std::isnan(simd::F32FromF16(simd::F16FromF32(simd::BitsFloat(0x7F800001u)))));
}

}  // namespace
}  // namespace edgeattn
