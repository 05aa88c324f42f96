// The rounding and rotation of int8 K/V rows (simd/kv_int8_rows-inl.h) on every compiled target:
// the rounding within half a step of the row's scale, the rotation against Sylvester's matrix in
// double, and both bit for bit against the scalar model (kv_int8_model.h) that the compact-KV
// kernels' tests (attention_kv_test.cc) build their expected results on.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/kv_int8_rows_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/kv_int8_rows-inl.h"
#include "tests/simd/kv_int8_model.h"
#include "tests/test_support.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

using testing_support::kFloatEps;
using testing_support::ModelQuantizeI8;
using testing_support::ModelRotateI8;
using testing_support::RandomNormal;

// This target's rounding of int8 rows: within half a step of the scale, scale = max / 127, zeros
// and rows below kMinI8RowMax give zeros of scale 0, a non-finite value zeros of scale NaN.
void TestI8RowRounding() {
  for (size_t n : {1, 3, 17, 129}) {
    std::vector<float> x = RandomNormal(n, 9 + n, 100.0f);
    std::vector<int8_t> q(n);
    const float scale = simd::HWY_NAMESPACE::QuantizeI8Row(x.data(), n, q.data());
    float max = 0.0f;
    for (float f : x) max = std::max(max, std::fabs(f));
    ASSERT_EQ(scale, max / 127.0f);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_LE(std::fabs(q[i] * scale - x[i]), 0.5f * scale * (1.0f + 1e-5f)) << i;
    }
  }
  for (float special : {0.0f, 1e-37f, std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> x(19, special < 1.0f ? special : 2.0f);
    x[17] = special;
    std::vector<int8_t> q(19, 1);
    const float scale = simd::HWY_NAMESPACE::QuantizeI8Row(x.data(), 19, q.data());
    if (std::isfinite(special)) {
      ASSERT_EQ(scale, 0.0f) << special;
    } else {
      ASSERT_TRUE(std::isnan(scale)) << special;
    }
    ASSERT_EQ(std::count(q.begin(), q.end(), 0), 19) << special;
  }
}

// This target's rotation against Sylvester's matrix H[i][j] = (-1)^popcount(i & j) per block, in
// double: each of the log2(block) butterfly levels rounds once, an error within
// eps * sum |x| of the block per output.
void TestI8RowRotation() {
  const size_t sizes[] = {1, 3, 6, 17, 64, 96, 256, 384};
  const size_t blocks[] = {1, 1, 2, 1, 64, 32, 128, 128};
  for (size_t s = 0; s < 8; ++s) {
    const size_t n = sizes[s], block = blocks[s];
    ASSERT_EQ(simd::I8RotationBlock(n), block) << n;
    const std::vector<float> x = RandomNormal(n, 40 + n, 3.0f);
    std::vector<float> got = x;
    simd::HWY_NAMESPACE::RotateI8Row(got.data(), n);
    const double levels = std::log2(double(block));
    for (size_t b0 = 0; b0 < n; b0 += block) {
      double abs_sum = 0.0;
      for (size_t j = 0; j < block; ++j) abs_sum += std::fabs(x[b0 + j]);
      for (size_t i = 0; i < block; ++i) {
        double want = 0.0;
        for (size_t j = 0; j < block; ++j) {
          want += (__builtin_popcountll(i & j) % 2 == 0 ? 1.0 : -1.0) * x[b0 + j];
        }
        ASSERT_NEAR(got[b0 + i], want, levels * kFloatEps * abs_sum) << "n=" << n << " " << i;
      }
    }
  }
}

// This target's rotation and rounding give the scalar model's bits for every row length up to
// 136 (every tail of every block size and vector width) and longer rows, on rows with an outlier
// channel.
void TestI8RowsMatchModel() {
  std::vector<size_t> sizes;
  for (size_t n = 1; n <= 136; ++n) sizes.push_back(n);
  for (size_t n : {255, 256, 384, 1000}) sizes.push_back(n);
  for (size_t n : sizes) {
    std::vector<float> x = RandomNormal(n, 70 + n, 2.0f);
    x[n / 2] *= 40.0f;
    std::vector<float> got = x, want = x;
    simd::HWY_NAMESPACE::RotateI8Row(got.data(), n);
    ModelRotateI8(want.data(), n);
    ASSERT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0) << "rotation, n=" << n;
    std::vector<int8_t> q_got(n), q_want(n);
    const float scale_got = simd::HWY_NAMESPACE::QuantizeI8Row(got.data(), n, q_got.data());
    const float scale_want = ModelQuantizeI8(want.data(), n, q_want.data());
    ASSERT_EQ(scale_got, scale_want) << "n=" << n;
    ASSERT_EQ(q_got, q_want) << "n=" << n;
  }
}

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {
HWY_BEFORE_TEST(KvInt8RowsTest);
HWY_EXPORT_AND_TEST_P(KvInt8RowsTest, TestI8RowRounding);
HWY_EXPORT_AND_TEST_P(KvInt8RowsTest, TestI8RowRotation);
HWY_EXPORT_AND_TEST_P(KvInt8RowsTest, TestI8RowsMatchModel);
}  // namespace edgeattn
#endif
