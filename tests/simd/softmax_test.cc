// The online softmax's row operations (simd/softmax-inl.h) on every compiled target, composed
// into a base-2 row softmax as the attention core composes them, against a double-precision
// softmax, with their defined behaviour on non-finite input; the base-2 exponential on its own;
// and the core's scaled row store.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/softmax_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/softmax-inl.h"
#include "simd/targets.h"
#include "tests/test_support.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using testing_support::kFloatEps;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kSentinel = 777.0f;

// The base-2 softmax 2^x / sum 2^x over each of `rows` rows of `cols` floats, `stride` apart,
// from the row operations, with the attention core's rules: a row holding NaN or +inf becomes
// all NaN, a row whose every entry is -inf becomes all 0. Each row goes through a scratch row
// padded to whole vectors, as the core's are, whose padding holds NaN and +inf: the operations
// may overwrite it but no result may see it.
void SoftmaxRows(float* x, size_t rows, size_t cols, size_t stride) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const size_t N = hn::Lanes(simd::HWY_NAMESPACE::RowTag());
  std::vector<float> row((cols + N - 1) / N * N);
  for (size_t r = 0; r < rows; ++r) {
    std::copy(x + r * stride, x + r * stride + cols, row.begin());
    for (size_t c = cols; c < row.size(); ++c) row[c] = c % 2 == 0 ? nan : kInf;
    // The maximum may miss a NaN: the sum or, when nothing is summed, a scan finds it.
    const float max = simd::HWY_NAMESPACE::RowMaxF32(row.data(), cols);
    float sum = 0.0f;
    if (max == kInf || (max == -kInf && simd::HWY_NAMESPACE::RowHasNaNF32(row.data(), cols))) {
      sum = nan;
    } else if (max != -kInf) {
      const simd::HWY_NAMESPACE::RowTag d;
      sum = hn::GetLane(
          hn::SumOfLanes(d, simd::HWY_NAMESPACE::Exp2ShiftSumF32(row.data(), cols, max)));
    }
    if (sum != sum) {
      simd::HWY_NAMESPACE::FillRowF32(row.data(), cols, nan);
    } else if (sum == 0.0f) {
      simd::HWY_NAMESPACE::FillRowF32(row.data(), cols, 0.0f);
    } else {
      simd::HWY_NAMESPACE::ScaleRowF32(row.data(), cols, 1.0f / sum);
    }
    std::copy(row.begin(), row.begin() + cols, x + r * stride);
  }
}

void TestSoftmaxMatchesScalar() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  uint32_t seed = 10;
  for (size_t cols : {1, 3, 15, 16, 17, 63, 65, 129, 300, 1500}) {
    for (float spread : {4.0f, 0.5f, 12.0f}) {
      const size_t rows = 5, stride = cols + 7;
      std::vector<float> x = testing_support::RandomNormal(rows * stride, seed++, spread);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t c = cols; c < stride; ++c) x[r * stride + c] = kSentinel;
      }
      const std::vector<float> in = x;
      SoftmaxRows(x.data(), rows, cols, stride);
      for (size_t r = 0; r < rows; ++r) {
        const float* row = in.data() + r * stride;
        double max = -INFINITY, sum = 0.0;
        for (size_t c = 0; c < cols; ++c) max = std::fmax(max, double(row[c]));
        for (size_t c = 0; c < cols; ++c) sum += std::exp2(double(row[c]) - max);
        for (size_t c = 0; c < stride; ++c) {
          const float got = x[r * stride + c];
          if (c >= cols) {
            ASSERT_EQ(got, kSentinel);
            continue;
          }
          const double ref = std::exp2(double(row[c]) - max) / sum;
          // 2^x is within 4 u, and the sum of `cols` positive terms loses at most cols * u
          // relative; the argument's rounding (|x - max| * u) adds ln 2 times that.
          const double arg_err = std::fabs(double(row[c]) - max) * kFloatEps;
          const double tol = ((cols + 16) * kFloatEps + arg_err) * ref + 1e-38;
          ASSERT_NEAR(got, ref, tol) << "cols=" << cols << " spread=" << spread << " c=" << c;
        }
      }
    }
  }
}

void TestSoftmaxSpecialValues() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Huge logits: exact up to rounding once the maximum is subtracted (1e4 and 1e4 - 1 keep their
  // ratio 2; -1e4 and 0 underflow to 0).
  std::vector<float> big = {1e4f, 0.0f, -1e4f, 1e4f - 1.0f};
  SoftmaxRows(big.data(), 1, 4, 4);
  EXPECT_NEAR(big[0], 2.0 / 3.0, 1e-6);
  EXPECT_EQ(big[1], 0.0f);
  EXPECT_EQ(big[2], 0.0f);
  EXPECT_NEAR(big[3], 1.0 / 3.0, 1e-6);
  // Masked positions (-inf) get 0; a fully masked row is all 0.
  std::vector<float> masked = {-kInf, 2.0f, -kInf, 2.0f, -kInf, -kInf, -kInf, -kInf};
  SoftmaxRows(masked.data(), 2, 4, 4);
  EXPECT_EQ(masked[0], 0.0f);
  EXPECT_FLOAT_EQ(masked[1], 0.5f);
  EXPECT_EQ(masked[2], 0.0f);
  EXPECT_FLOAT_EQ(masked[3], 0.5f);
  for (size_t c = 4; c < 8; ++c) EXPECT_EQ(masked[c], 0.0f);
  // NaN or +inf anywhere poisons its row only; NaN also among -inf, where nothing is summed.
  for (size_t cols : {3, 17, 40, 100}) {
    std::vector<float> x(4 * cols, 0.5f);
    x[cols + cols - 1] = nan;
    x[2 * cols] = kInf;
    for (size_t c = 0; c < cols; ++c) x[3 * cols + c] = c == cols / 2 ? nan : -kInf;
    SoftmaxRows(x.data(), 4, cols, cols);
    for (size_t c = 0; c < cols; ++c) {
      EXPECT_FLOAT_EQ(x[c], 1.0f / cols);
      EXPECT_TRUE(std::isnan(x[cols + c]));
      EXPECT_TRUE(std::isnan(x[2 * cols + c]));
      EXPECT_TRUE(std::isnan(x[3 * cols + c]));
    }
  }
}

// 2^x for x <= 0 against double precision: within 4 u relative down to 2^-126, below that 0 or
// the rounded value (both within 2^-126), 0 for -inf, NaN for NaN.
void TestExp2NonPositive() {
  const simd::HWY_NAMESPACE::RowTag d;
  const size_t N = hn::Lanes(d);
  std::vector<float> x;
  for (int i = 0; i <= 140000; ++i) x.push_back(-i / 1000.0f);  // steps finer than the reduction
  for (float v : {-0.0f, -1e-30f, -1e-7f, -0.5f, -125.99f, -126.0f, -126.01f, -127.5f, -149.0f,
                  -1e4f, -3e38f, -kInf}) {
    x.push_back(v);
  }
  while (x.size() % N != 0) x.push_back(-1.0f);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); i += N) {
    hn::StoreU(simd::HWY_NAMESPACE::Exp2NonPositive(d, hn::LoadU(d, x.data() + i)), d,
               y.data() + i);
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp2(double(x[i]));
    const double tol = x[i] >= -126.0f ? 4 * kFloatEps * want : 0x1p-126;
    ASSERT_NEAR(y[i], want, tol) << "x=" << x[i];
    ASSERT_GE(y[i], 0.0f) << "x=" << x[i];
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> special(N, nan);
  hn::StoreU(simd::HWY_NAMESPACE::Exp2NonPositive(d, hn::LoadU(d, special.data())), d,
             special.data());
  for (float v : special) EXPECT_TRUE(std::isnan(v));
}

// The exponentials and their sum on their own, for every length up to five vectors: within
// the row operations' contract they may overwrite lanes up to the next whole vector past n, and
// not one float beyond it, where the core keeps the next row's scores.
void TestExp2ShiftSumStaysInRow() {
  const simd::HWY_NAMESPACE::RowTag d;
  const size_t N = hn::Lanes(d);
  for (size_t n = 1; n <= 5 * N; ++n) {
    const size_t padded = (n + N - 1) / N * N;
    std::vector<float> x = testing_support::RandomNormal(padded + 2 * N, 200 + n);
    for (size_t i = n; i < x.size(); ++i) x[i] = kSentinel;
    const std::vector<float> in = x;
    const float shift = 8.0f;  // above every N(0, 1) input
    const float sum = hn::GetLane(
        hn::SumOfLanes(d, simd::HWY_NAMESPACE::Exp2ShiftSumF32(x.data(), n, shift)));
    double want_sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
      const double want = std::exp2(double(in[i]) - shift);
      want_sum += want;
      // 2^x within 4 u, and the argument's rounding (|x - shift| u) ln 2 times that.
      const double tol = (4.0 + std::fabs(double(in[i]) - shift)) * kFloatEps * want;
      ASSERT_NEAR(x[i], want, tol) << "n=" << n << " i=" << i;
    }
    ASSERT_NEAR(sum, want_sum, (n + 16) * kFloatEps * want_sum) << "n=" << n;
    for (size_t i = padded; i < x.size(); ++i) {
      ASSERT_EQ(x[i], kSentinel) << "n=" << n << " wrote past its vectors at " << i;
    }
  }
}

// The epilogue's scaled store: exact products, and nothing written past n (the next columns
// belong to another head).
void TestStoreRowScaled() {
  uint32_t seed = 100;
  for (size_t n : {1, 3, 15, 16, 17, 63, 64, 65, 129}) {
    for (float scale : {1.0f, 0.5f, 1.0f / 3.0f}) {
      const std::vector<float> src = testing_support::RandomNormal(n, seed++);
      std::vector<float> dst(n + 20, kSentinel);
      simd::HWY_NAMESPACE::StoreRowScaledF32(src.data(), n, scale, dst.data());
      for (size_t i = 0; i < dst.size(); ++i) {
        ASSERT_EQ(dst[i], i < n ? src[i] * scale : kSentinel) << "n=" << n << " i=" << i;
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
HWY_BEFORE_TEST(SoftmaxTest);
HWY_EXPORT_AND_TEST_P(SoftmaxTest, TestSoftmaxMatchesScalar);
HWY_EXPORT_AND_TEST_P(SoftmaxTest, TestSoftmaxSpecialValues);
HWY_EXPORT_AND_TEST_P(SoftmaxTest, TestExp2NonPositive);
HWY_EXPORT_AND_TEST_P(SoftmaxTest, TestExp2ShiftSumStaysInRow);
HWY_EXPORT_AND_TEST_P(SoftmaxTest, TestStoreRowScaled);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SoftmaxTest);
}  // namespace edgeattn
#endif
