// Activation quantization and the int8 GEMM on every compiled target, bit-exact against scalar
// versions (int32 block sums are exact, and the float steps are the same fused operations).
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/gemm_i8_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/gemm_i8.h"
#include "simd/quantize.h"
#include "simd/targets.h"
#include "tests/test_support.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

using testing_support::RandomNormal;

// The float steps as the target performs them: fused where it has FMA (HWY_NATIVE_FMA),
// otherwise a rounded product then a rounded sum.
float MulAddAsTarget(float a, float b, float c) {
#if HWY_NATIVE_FMA
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

std::vector<int8_t> RandomInt8(size_t n, uint32_t seed, int lo = -127, int hi = 127) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

void TestQuantizeMatchesScalar() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  uint32_t seed = 1;
  for (size_t k : {1, 3, 4, 17, 63, 64, 129, 300}) {
    for (size_t block : {4, 32, 64, 1024}) {
      const size_t rows = 3, ldx = k + 2;
      std::vector<float> x = RandomNormal(rows * ldx, seed++, 3.0f);
      for (size_t i = 0; i < k && i < 8; ++i) x[ldx + i] = 0.0f;  // a zero block in row 1
      const size_t ldq = simd::QuantizedRowStride(k);
      const size_t blocks = simd::QuantBlockCount(k, block);
      std::vector<int8_t> q(rows * ldq, 99);
      std::vector<float> scales(rows * blocks);
      simd::QuantizeRowsI8(x.data(), ldx, rows, k, block, q.data(), scales.data(), {});
      for (size_t r = 0; r < rows; ++r) {
        for (size_t b = 0; b < blocks; ++b) {
          float amax = 0.0f;
          for (size_t i = b * block; i < std::min(k, (b + 1) * block); ++i) {
            amax = std::max(amax, std::fabs(x[r * ldx + i]));
          }
          const bool usable = amax > 1e-30f;
          ASSERT_EQ(scales[r * blocks + b], usable ? amax / 127.0f : 0.0f);
          const float inv = usable ? 127.0f / amax : 0.0f;
          for (size_t i = b * block; i < std::min(k, (b + 1) * block); ++i) {
            ASSERT_EQ(q[r * ldq + i], static_cast<int8_t>(std::nearbyint(x[r * ldx + i] * inv)))
                << "k=" << k << " block=" << block << " r=" << r << " i=" << i;
          }
        }
        for (size_t i = k; i < ldq; ++i) ASSERT_EQ(q[r * ldq + i], 0);
      }
    }
  }
  // Non-finite input: NaN scale for that block only.
  std::vector<float> x(8, 1.0f);
  x[5] = std::numeric_limits<float>::infinity();
  std::vector<int8_t> q(8);
  std::vector<float> scales(2);
  simd::QuantizeRowsI8(x.data(), 8, 1, 8, 4, q.data(), scales.data(), {});
  EXPECT_EQ(scales[0], 1.0f / 127.0f);
  EXPECT_TRUE(std::isnan(scales[1]));
}

struct I8Case {
  size_t m, n, k, block;
};

void CheckGemm(const I8Case& t, const std::vector<int8_t>& xq, const std::vector<int8_t>& wq,
               uint32_t seed) {
  const size_t ldq = simd::QuantizedRowStride(t.k);
  const size_t blocks = simd::QuantBlockCount(t.k, t.block);
  std::vector<float> xs = RandomNormal(t.m * blocks, seed);
  for (float& s : xs) s = std::fabs(s) * 0.01f;
  const size_t padded = simd::GemmI8PanelCount(t.n) * simd::kGemmI8PanelWidth;
  std::vector<float> ws(padded, 0.0f), bias(padded, 0.0f);
  for (size_t j = 0; j < t.n; ++j) {
    ws[j] = 0.001f * (1 + j % 7);
    bias[j] = 0.5f - 0.01f * j;
  }
  std::vector<int8_t> packed(simd::PackedGemmI8WeightsSize(t.n, t.k));
  std::vector<int32_t> starts(simd::GemmI8BlockStartsSize(t.n, t.k, t.block));
  simd::PackGemmI8Weights(wq.data(), t.n, t.k, t.block, packed.data(), starts.data());
  const simd::GemmI8WeightsView w{packed.data(), starts.data(), ws.data(), bias.data(),
                                  t.n,           t.k,         t.block};
  const simd::QuantizedRowsView a{xq.data(), xs.data()};
  const size_t ldc = t.n + 3;
  std::vector<float> c(t.m * ldc, -7.0f);
  simd::GemmI8(a, 0, t.m, w, 0, simd::GemmI8PanelCount(t.n), c.data(), ldc);
  for (size_t i = 0; i < t.m; ++i) {
    for (size_t j = 0; j < ldc; ++j) {
      if (j >= t.n) {
        ASSERT_EQ(c[i * ldc + j], -7.0f) << "wrote outside C";
        continue;
      }
      float f = 0.0f;
      for (size_t b = 0; b < blocks; ++b) {
        int32_t acc = 0;
        for (size_t x = b * t.block; x < std::min(t.k, (b + 1) * t.block); ++x) {
          acc += int32_t{xq[i * ldq + x]} * wq[j * t.k + x];
        }
        f = MulAddAsTarget(static_cast<float>(acc), xs[i * blocks + b], f);
      }
      ASSERT_EQ(c[i * ldc + j], MulAddAsTarget(f, ws[j], bias[j]))
          << "m=" << t.m << " n=" << t.n << " k=" << t.k << " block=" << t.block << " at " << i
          << "," << j;
    }
  }
  // Any split of rows and panels gives the same bits.
  std::vector<float> split(t.m * ldc, -7.0f);
  const size_t cut = t.m / 2, panels = simd::GemmI8PanelCount(t.n);
  simd::GemmI8(a, 0, cut, w, 0, panels, split.data(), ldc);
  for (size_t p = 0; p < panels; ++p) simd::GemmI8(a, cut, t.m, w, p, p + 1, split.data(), ldc);
  ASSERT_EQ(0, std::memcmp(split.data(), c.data(), c.size() * sizeof(float)));
}

void TestGemmI8MatchesScalar() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  uint32_t seed = 50;
  for (size_t m : {1, 2, 3, 4, 7, 17}) {
    for (size_t n : {1, 3, 16, 17, 64, 65, 129}) {
      for (size_t k : {1, 3, 4, 17, 64, 129, 300}) {
        for (size_t block : {4, 32, 64, 1024}) {
          const I8Case t{m, n, k, block};
          std::vector<int8_t> xq(m * simd::QuantizedRowStride(k), 0);
          const std::vector<int8_t> values = RandomInt8(m * k, seed);
          for (size_t i = 0; i < m; ++i) {
            std::copy(values.begin() + i * k, values.begin() + (i + 1) * k,
                      xq.begin() + i * simd::QuantizedRowStride(k));
          }
          CheckGemm(t, xq, RandomInt8(n * k, seed + 1), seed + 2);
          if (::testing::Test::HasFatalFailure()) return;
          seed += 3;
        }
      }
    }
  }
}

// The extremes of int8 on both sides, over long rows: the sums must be exact, so nothing may
// saturate at 16 bits on the way (as vpmaddubsw would). Blocks of 252 values are the longest
// whose sums the NEON kernel takes through the float bias (|sum| < 2^22), 256 the shortest it
// converts.
void TestGemmI8ExtremeValues() {
  for (size_t k : {256, 1024, 4096}) {
    for (size_t block : {size_t{64}, size_t{252}, size_t{256}, k}) {
      for (int8_t wv : {int8_t{127}, int8_t{-128}}) {
        for (int8_t xv : {int8_t{127}, int8_t{-128}}) {
          const I8Case t{5, 70, k, block};
          std::vector<int8_t> xq(t.m * simd::QuantizedRowStride(k), xv);
          CheckGemm(t, xq, std::vector<int8_t>(t.n * k, wv), 9);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// Outlier channels leave the int8 row (quantized as 0, scales from the other values) and come
// back in float: value * dequantized weight, added after the int8 result.
void TestOutliers() {
  const size_t k = 300, block = 64, n = 70;
  std::vector<float> x = RandomNormal(2 * k, 5);
  x[5] = 80.0f;
  x[77] = -120.0f;
  x[200] = 60.0f;  // row 0: three outliers; row 1: none
  const size_t ldq = simd::QuantizedRowStride(k), blocks = simd::QuantBlockCount(k, block);
  std::vector<int8_t> q(2 * ldq);
  std::vector<float> scales(2 * blocks);
  std::vector<uint32_t> count(2), channel(2 * simd::kMaxOutliersPerRow);
  std::vector<float> value(2 * simd::kMaxOutliersPerRow);
  simd::QuantizeRowsI8(x.data(), k, 2, k, block, q.data(), scales.data(),
                       {count.data(), channel.data(), value.data()});
  ASSERT_EQ(count[0], 3u);
  ASSERT_EQ(count[1], 0u);
  EXPECT_EQ(channel[0], 77u);  // largest first
  EXPECT_EQ(channel[1], 5u);
  EXPECT_EQ(channel[2], 200u);
  EXPECT_EQ(value[0], -120.0f);
  EXPECT_EQ(q[5], 0);
  EXPECT_EQ(q[77], 0);
  float amax0 = 0.0f;
  for (size_t i = 0; i < block; ++i) {
    if (i != 5) amax0 = std::max(amax0, std::fabs(x[i]));
  }
  EXPECT_EQ(scales[0], amax0 / 127.0f);

  const std::vector<int8_t> wq = RandomInt8(n * k, 6);
  std::vector<int8_t> packed(simd::PackedGemmI8WeightsSize(n, k));
  std::vector<int32_t> starts(simd::GemmI8BlockStartsSize(n, k, block));
  simd::PackGemmI8Weights(wq.data(), n, k, block, packed.data(), starts.data());
  std::vector<float> ws(simd::GemmI8PanelCount(n) * simd::kGemmI8PanelWidth, 0.0f);
  for (size_t j = 0; j < n; ++j) ws[j] = 0.002f * (1 + j % 5);
  const simd::GemmI8WeightsView w{packed.data(), starts.data(), ws.data(), nullptr, n, k, block};
  std::vector<float> c(2 * n), plain(2 * n);
  simd::GemmI8({q.data(), scales.data(), count.data(), channel.data(), value.data()}, 0, 2, w, 0,
               simd::GemmI8PanelCount(n), c.data(), n);
  simd::GemmI8({q.data(), scales.data()}, 0, 2, w, 0, simd::GemmI8PanelCount(n), plain.data(), n);
  for (size_t j = 0; j < n; ++j) {
    float expected = plain[j];
    for (size_t i = 0; i < 3; ++i) {
      expected = MulAddAsTarget(value[i], static_cast<float>(wq[j * k + channel[i]]) * ws[j], expected);
    }
    ASSERT_EQ(c[j], expected) << j;
    ASSERT_EQ(c[n + j], plain[n + j]) << j;  // row 1 has no outliers
  }
}

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {
HWY_BEFORE_TEST(GemmI8Test);
HWY_EXPORT_AND_TEST_P(GemmI8Test, TestQuantizeMatchesScalar);
HWY_EXPORT_AND_TEST_P(GemmI8Test, TestGemmI8MatchesScalar);
HWY_EXPORT_AND_TEST_P(GemmI8Test, TestGemmI8ExtremeValues);
HWY_EXPORT_AND_TEST_P(GemmI8Test, TestOutliers);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GemmI8Test);

TEST(GemmI8PathTest, NamesThePath) {
  const std::string path = simd::GemmI8Path();
  EXPECT_TRUE(path == "avx512-vnni" || path == "sve-sdot" || path == "neon-sdot" ||
              path == "portable-i16")
      << path;
}
}  // namespace edgeattn
#endif
