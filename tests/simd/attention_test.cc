// The attention core on every compiled target against a double-precision softmax(Q K^T) V.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/attention_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/attention.h"
#include "simd/targets.h"
#include "tests/test_support.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

using testing_support::kFloatEps;
using testing_support::RandomNormal;

struct Head {
  size_t lq, lk, dk, ld;  // ld: row stride of q, k, v and out (wider than dk, like a head slice)
  std::vector<float> q, k, v;
  hwy::AlignedFreeUniquePtr<float[]> keys, values, scratch;

  Head(size_t lq_, size_t lk_, size_t dk_, uint32_t seed)
      : lq(lq_), lk(lk_), dk(dk_), ld(dk_ + 5) {
    q = RandomNormal(lq * ld, seed);
    k = RandomNormal(lk * ld, seed + 1);
    v = RandomNormal(lk * ld, seed + 2);
    keys = hwy::AllocateAligned<float>(simd::AttentionPackedKeysSize(lk, dk));
    values = hwy::AllocateAligned<float>(simd::AttentionPackedValuesSize(lk, dk));
    scratch = hwy::AllocateAligned<float>(simd::AttentionScratchSize(dk));
  }

  std::vector<float> Run(const std::vector<size_t>& cuts) {
    simd::PackAttentionKeysValues(k.data(), ld, v.data(), ld, lk, dk, keys.get(), values.get());
    std::vector<float> out(lq * ld, -3.0f);
    const simd::AttentionHeadArgs args{q.data(), ld, keys.get(), values.get(), lk, dk,
                                       Scale(), out.data(), ld};
    size_t begin = 0;
    for (size_t end : cuts) {
      simd::AttentionHeadF32(args, begin, end, scratch.get());
      begin = end;
    }
    simd::AttentionHeadF32(args, begin, lq, scratch.get());
    return out;
  }
  float Scale() const { return 1.0f / std::sqrt(float(dk)); }
};

void TestAttentionMatchesScalar() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  uint32_t seed = 1000;
  for (size_t dk : {1, 3, 8, 17, 32, 64, 80}) {
    for (size_t lk : {1, 3, 17, 255, 256, 257, 300, 513}) {
      for (size_t lq : {1, 3, 17, 65}) {
        if (lq * lk * dk > 600000) continue;
        Head head(lq, lk, dk, seed);
        seed += 3;
        const std::vector<float> out = head.Run({});
        const double scale = head.Scale();
        double max_v = 0.0;
        for (size_t j = 0; j < lk; ++j) {
          for (size_t c = 0; c < dk; ++c) max_v = std::fmax(max_v, std::fabs(head.v[j * head.ld + c]));
        }
        std::vector<double> p(lk);
        for (size_t i = 0; i < lq; ++i) {
          double max = -INFINITY, sum = 0.0, score_err = 0.0;
          for (size_t j = 0; j < lk; ++j) {
            double dot = 0.0, abs_dot = 0.0;
            for (size_t c = 0; c < dk; ++c) {
              const double t = double(head.q[i * head.ld + c]) * head.k[j * head.ld + c];
              dot += t;
              abs_dot += std::fabs(t);
            }
            p[j] = dot * scale;
            // Scores: dk fused multiply-adds on scaled q (gamma_{dk+1}); exp adds a few ulp.
            score_err = std::fmax(score_err, ((dk + 2) * abs_dot * scale + 8.0) * kFloatEps);
            max = std::fmax(max, p[j]);
          }
          for (size_t j = 0; j < lk; ++j) sum += (p[j] = std::exp(p[j] - max));
          // Each weight p_j/sum is off by at most ~2 score_err relative; the weighted sum of
          // lk values adds gamma_lk * max|v|; doubled for margin.
          const double tol = 2.0 * max_v * (2.0 * score_err + (lk + 2) * kFloatEps);
          for (size_t c = 0; c < head.ld; ++c) {
            const float got = out[i * head.ld + c];
            if (c >= dk) {
              ASSERT_EQ(got, -3.0f) << "wrote outside the head's columns";
              continue;
            }
            double ref = 0.0;
            for (size_t j = 0; j < lk; ++j) ref += p[j] * head.v[j * head.ld + c];
            ASSERT_NEAR(got, ref / sum, tol) << "dk=" << dk << " lk=" << lk << " lq=" << lq
                                             << " row " << i << " col " << c;
          }
        }
        // Any split of the query rows gives bit-identical rows.
        if (lq > 2) {
          const std::vector<float> split = head.Run({1, lq / 2});
          ASSERT_EQ(0, std::memcmp(split.data(), out.data(), out.size() * sizeof(float)));
        }
      }
    }
  }
}

void TestAttentionNonFinite() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t lk : {5, 300}) {
    Head head(4, lk, 17, 77);
    head.q[1 * head.ld + 3] = nan;                         // row 1: every score NaN
    head.k[(lk - 1) * head.ld + 2] = std::numeric_limits<float>::infinity();  // +-inf scores
    head.q[2 * head.ld + 2] = 0.0f;                        // row 2: 0 * inf = NaN score
    const std::vector<float> out = head.Run({});
    for (size_t c = 0; c < head.dk; ++c) {
      EXPECT_TRUE(std::isnan(out[1 * head.ld + c]));
      EXPECT_TRUE(std::isnan(out[2 * head.ld + c]));
    }
    // Rows 0 and 3 see a score of +inf or -inf from the last key: +inf poisons the row (NaN,
    // as in PyTorch), -inf only removes that key.
    for (size_t row : {size_t{0}, size_t{3}}) {
      const bool plus_inf = head.q[row * head.ld + 2] > 0;
      for (size_t c = 0; c < head.dk; ++c) {
        const float got = out[row * head.ld + c];
        EXPECT_EQ(std::isnan(got), plus_inf) << "row " << row;
        if (!plus_inf) {
          EXPECT_TRUE(std::isfinite(got));
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
HWY_BEFORE_TEST(AttentionTest);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttentionMatchesScalar);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttentionNonFinite);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionTest);
}  // namespace edgeattn
#endif
