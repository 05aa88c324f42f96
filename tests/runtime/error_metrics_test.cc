// The error measures the tests' bounds and the bench's rows rest on: an output that went NaN, or
// came short, must never read as close to its reference.
#include "runtime/error_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/test_support.h"

namespace edgeattn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

TEST(ErrorMetricsTest, MaxAbsDiffIsTheLargestDifference) {
  EXPECT_EQ(MaxAbsDiff({1.0f, -2.0f, 3.0f}, {1.5f, -2.0f, 1.0f}), 2.0);
  EXPECT_EQ(MaxAbsDiff({}, {}), 0.0);
  EXPECT_EQ(MaxAbsDiff({kInf, -kInf, 1.0f}, {kInf, -kInf, 1.0f}), 0.0);
  EXPECT_EQ(MaxAbsDiff({kInf, 1.0f}, {1.0f, 1.0f}), kInf);
  EXPECT_EQ(MaxAbsDiff({kInf}, {-kInf}), kInf);
}

// A NaN anywhere, in either, first, last or between larger differences, makes it NaN: a bound
// written as MaxAbsDiff(out, want) <= tol then fails.
TEST(ErrorMetricsTest, MaxAbsDiffOfANanIsNan) {
  const std::vector<float> want = {1.0f, 2.0f, 3.0f, 4.0f};
  for (size_t i = 0; i < want.size(); ++i) {
    std::vector<float> got = want;
    got[i] = kNan;
    got[(i + 1) % got.size()] += 100.0f;
    EXPECT_TRUE(std::isnan(MaxAbsDiff(got, want))) << i;
    EXPECT_TRUE(std::isnan(MaxAbsDiff(want, got))) << i;
  }
  EXPECT_TRUE(std::isnan(MaxAbsDiff({kNan}, {kNan})));
  EXPECT_FALSE(MaxAbsDiff({kNan, 1.0f}, {1.0f, 1.0f}) <= 1e30);
}

TEST(ErrorMetricsTest, UnequalSizesAreNotClose) {
  EXPECT_TRUE(std::isnan(MaxAbsDiff({1.0f, 2.0f}, {1.0f})));
  EXPECT_TRUE(std::isnan(MaxAbsDiff({1.0f}, {1.0f, 2.0f})));
  EXPECT_TRUE(std::isnan(Cosine({1.0f, 2.0f}, {1.0f})));
  EXPECT_TRUE(std::isnan(Cosine({}, {1.0f})));
}

TEST(ErrorMetricsTest, CosineAndMaxAbs) {
  EXPECT_DOUBLE_EQ(Cosine({1.0f, 2.0f}, {2.0f, 4.0f}), 1.0);
  EXPECT_DOUBLE_EQ(Cosine({1.0f, 0.0f}, {0.0f, 3.0f}), 0.0);
  EXPECT_TRUE(std::isnan(Cosine({1.0f, kNan}, {1.0f, 1.0f})));
  EXPECT_EQ(MaxAbs({1.0f, -5.0f, kNan, 2.0f}), 5.0);
}

// A reference that holds an infinity gives no scale: with 1 + MaxAbs, an infinite bound
// passed any output there, the opposite infinity or a finite value.
TEST(ErrorMetricsTest, BoundScaleOfAnInfinityIsNan) {
  using testing_support::BoundScale;
  EXPECT_EQ(BoundScale({1.0f, -5.0f, kNan, 2.0f}), 6.0);
  EXPECT_EQ(BoundScale({}), 1.0);
  EXPECT_TRUE(std::isnan(BoundScale({1.0f, -kInf})));
  const std::vector<float> want = {kInf, 1.0f};
  EXPECT_FALSE(MaxAbsDiff({-kInf, 1.0f}, want) <= 1e-6 * BoundScale(want));
  EXPECT_FALSE(MaxAbsDiff({0.0f, 1.0f}, want) <= 1e-6 * BoundScale(want));
}

}  // namespace
}  // namespace edgeattn
