// The per-head RMS norm and rotary embedding (simd/qk_transforms.h) on every compiled
// target against plain double-precision versions, on odd head widths and rotary dims, with
// several heads in a row (each transformed on its own, nothing written past the row).
#include "simd/qk_transforms.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "simd/targets.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::kFloatEps;
using testing_support::RandomNormal;
constexpr float kSentinel = 777.0f;

// The scalar version of one head: the norm, then rotation of pair i by angle position * f_i.
std::vector<double> ScalarHead(const float* x, size_t dk, const float* weight, double eps,
                               size_t rotary_dim, bool interleaved, float position,
                               const float* inv_freq) {
  std::vector<double> y(x, x + dk);
  if (weight != nullptr) {
    double sum = 0.0;
    for (double v : y) sum += v * v;
    const double scale = 1.0 / std::sqrt(sum / dk + eps);
    for (size_t c = 0; c < dk; ++c) y[c] *= scale * weight[c];
  }
  for (size_t i = 0; i < rotary_dim / 2; ++i) {
    const double angle = double(position * inv_freq[i]);  // the kernel's float angle
    const size_t a = interleaved ? 2 * i : i;
    const size_t b = interleaved ? 2 * i + 1 : i + rotary_dim / 2;
    const double ya = y[a], yb = y[b];
    y[a] = ya * std::cos(angle) - yb * std::sin(angle);
    y[b] = yb * std::cos(angle) + ya * std::sin(angle);
  }
  return y;
}

void TestTransformHeadsMatchesScalar(int64_t target) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  uint32_t seed = 300;
  for (size_t dk : {1, 2, 3, 6, 17, 34, 63, 64, 129}) {
    for (size_t rotary_dim : {size_t{0}, size_t{2}, dk / 2 * 2, (dk / 3) / 2 * 2}) {
      if (rotary_dim > dk) continue;
      for (bool interleaved : {false, true}) {
        for (bool norm : {false, true}) {
          const size_t heads = 3;
          std::vector<float> x = RandomNormal(heads * dk + 5, seed++, 3.0f);
          for (size_t i = heads * dk; i < x.size(); ++i) x[i] = kSentinel;
          const std::vector<float> in = x;
          const std::vector<float> weight = RandomNormal(dk, seed++);
          std::vector<float> inv_freq(rotary_dim / 2);
          for (size_t i = 0; i < inv_freq.size(); ++i) {
            inv_freq[i] = 1.0f / std::pow(10000.0f, float(2 * i) / float(rotary_dim));
          }
          const float position = 1234.0f;
          std::vector<float> cos(rotary_dim), sin(rotary_dim);
          simd::RotaryTables(position, inv_freq.data(), rotary_dim, interleaved, cos.data(),
                             sin.data());
          simd::HeadTransform t;
          if (norm) {
            t.norm_weight = weight.data();
            t.norm_eps = 1e-5f;
          }
          t.rotary_dim = rotary_dim;
          t.interleaved = interleaved;
          t.cos = cos.data();
          t.sin = sin.data();
          simd::TransformHeads(x.data(), heads, dk, t);  // dispatches to the target under test
          for (size_t h = 0; h < heads; ++h) {
            const std::vector<double> want =
                ScalarHead(in.data() + h * dk, dk, norm ? weight.data() : nullptr, 1e-5, rotary_dim,
                           interleaved, position, inv_freq.data());
            double max_abs = 1.0;
            for (double v : want) max_abs = std::fmax(max_abs, std::fabs(v));
            // The norm's float sum of dk squares, then two roundings a product; cos and sin
            // within a few ulp of the float angle.
            const double tol = (2.0 * dk + 16.0) * kFloatEps * max_abs;
            for (size_t c = 0; c < dk; ++c) {
              ASSERT_NEAR(x[h * dk + c], want[c], tol)
                  << "dk=" << dk << " rotary_dim=" << rotary_dim << " interleaved=" << interleaved
                  << " norm=" << norm << " head " << h << " col " << c;
            }
          }
          for (size_t i = heads * dk; i < x.size(); ++i) ASSERT_EQ(x[i], kSentinel);
        }
      }
    }
  }
}

}  // namespace

// An instance per target; the body, compiled once, reaches its kernels by dynamic dispatch.
HWY_BEFORE_TEST(QkTransformsTest);
TEST_P(QkTransformsTest, TestTransformHeadsMatchesScalar) {
  TestTransformHeadsMatchesScalar(GetParam());
}
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(QkTransformsTest);
}  // namespace edgeattn
