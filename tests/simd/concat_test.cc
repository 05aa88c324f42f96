// concat on every compiled target: exact copies into each head's columns and nowhere else.
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/concat_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/concat.h"
#include "simd/targets.h"
#include "tests/test_support.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

void TestConcatMatchesScalar() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  uint32_t seed = 100;
  for (size_t heads : {1, 3, 12}) {
    for (size_t dk : {1, 3, 16, 17, 63, 64, 65}) {
      for (size_t rows : {1, 3, 17}) {
        const size_t head_stride = rows * dk + 5;
        const size_t ldo = heads * dk + 3;
        const std::vector<float> in = testing_support::RandomNormal(heads * head_stride, seed++);
        std::vector<float> out(rows * ldo, -1.0f);
        simd::ConcatHeadsF32(in.data(), heads, rows, dk, head_stride, out.data(), ldo);
        for (size_t r = 0; r < rows; ++r) {
          for (size_t c = 0; c < ldo; ++c) {
            const float expected =
                c < heads * dk ? in[(c / dk) * head_stride + r * dk + c % dk] : -1.0f;
            ASSERT_EQ(out[r * ldo + c], expected) << heads << " " << dk << " " << rows;
          }
        }
      }
    }
  }
}

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {
HWY_BEFORE_TEST(ConcatTest);
HWY_EXPORT_AND_TEST_P(ConcatTest, TestConcatMatchesScalar);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConcatTest);
}  // namespace edgeattn
#endif
