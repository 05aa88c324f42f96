// The attention core on every compiled target against a double-precision softmax(Q K^T) V.
#include <cmath>
#include <algorithm>
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

// The attention kernels of the target under test: each test runs every one of them.
std::vector<const simd::AttentionKernel*> Kernels() {
  std::vector<const simd::AttentionKernel*> kernels = simd::AttentionKernels(simd::KvType::kF32);
  EXPECT_FALSE(kernels.empty());
  for (const simd::AttentionKernel* kernel : kernels) {
    EXPECT_EQ(simd::FindAttentionKernel(kernel->kv, kernel->name), kernel);
  }
  return kernels;
}

// Runs check on every kernel of the target under test, stopping at the first fatal failure.
void ForEachKernel(void (*check)(const simd::AttentionKernel&)) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  for (const simd::AttentionKernel* kernel : Kernels()) {
    SCOPED_TRACE(kernel->name);
    check(*kernel);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

struct Head {
  const simd::AttentionKernel& kernel;
  size_t lq, lk, dk, ld;  // ld: row stride of q, k, v and out (wider than dk, like a head slice)
  std::vector<float> q, k, v;
  hwy::AlignedFreeUniquePtr<uint8_t[]> keys, values;
  hwy::AlignedFreeUniquePtr<float[]> scratch;

  Head(const simd::AttentionKernel& kernel_, size_t lq_, size_t lk_, size_t dk_, uint32_t seed)
      : kernel(kernel_), lq(lq_), lk(lk_), dk(dk_), ld(dk_ + 5) {
    q = RandomNormal(lq * ld, seed);
    k = RandomNormal(lk * ld, seed + 1);
    v = RandomNormal(lk * ld, seed + 2);
    keys = hwy::AllocateAligned<uint8_t>(kernel.keys_bytes(lk, dk));
    values = hwy::AllocateAligned<uint8_t>(kernel.values_bytes(lk, dk));
    scratch = hwy::AllocateAligned<float>(kernel.scratch_floats(dk));
  }

  // Packs the keys and values in pieces (as a KV cache appends them) into buffers of all-ones
  // bytes (NaN as floats): no stale lane may reach a result.
  void Pack() {
    std::fill_n(keys.get(), kernel.keys_bytes(lk, dk), 0xFF);
    std::fill_n(values.get(), kernel.values_bytes(lk, dk), 0xFF);
    for (size_t first = 0; first < lk;) {
      const size_t count = std::min(lk - first, first % 3 == 0 ? size_t{70} : size_t{1});
      kernel.pack(k.data() + first * ld, ld, v.data() + first * ld, ld, first, count,
                  first + count, dk,
                  keys.get(), values.get());
      first += count;
    }
  }

  simd::AttentionHeadArgs Args(float* out) const {
    return {q.data(), ld, keys.get(), values.get(), lk, dk, Scale(), out, ld};
  }

  std::vector<float> Run(const std::vector<size_t>& cuts) {
    std::vector<float> out(lq * ld, -3.0f);
    RunArgs(Args(out.data()), cuts);
    return out;
  }

  void RunArgs(const simd::AttentionHeadArgs& args, const std::vector<size_t>& cuts) {
    Pack();
    size_t begin = 0;
    for (size_t end : cuts) {
      kernel.run(args, begin, end, scratch.get());
      begin = end;
    }
    kernel.run(args, begin, lq, scratch.get());
  }
  float Scale() const { return 1.0f / std::sqrt(float(dk)); }
};

void CheckAttentionMatchesScalar(const simd::AttentionKernel& kernel) {
  uint32_t seed = 1000;
  for (size_t dk : {1, 3, 8, 17, 32, 64, 80}) {
    for (size_t lk : {1, 3, 17, 255, 256, 257, 300, 513}) {
      for (size_t lq : {1, 3, 17, 65}) {
        if (lq * lk * dk > 600000) continue;
        Head head(kernel, lq, lk, dk, seed);
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

void CheckAttentionNonFinite(const simd::AttentionKernel& kernel) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t lk : {5, 300}) {
    Head head(kernel, 4, lk, 17, 77);
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

// Masked attention and its weights against a double-precision softmax(Q K^T * scale + masks) V:
// an additive mask with -inf holes and whole masked tiles, key padding, causal limits with an
// offset (as a KV cache uses), and rows with every key masked.
void CheckAttentionMasks(const simd::AttentionKernel& kernel) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  uint32_t seed = 5000;
  for (size_t dk : {3, 17, 64}) {
    for (size_t lk : {1, 17, 300, 513}) {
      for (size_t lq : {1, 9, 33}) {
        for (int variant = 0; variant < 4; ++variant) {
          Head head(kernel, lq, lk, dk, seed);
          seed += 3;
          const bool use_mask = variant != 1, use_bias = variant != 2;
          const bool causal = variant >= 2;
          const size_t offset = variant == 3 ? lk / 2 : 0;
          // Additive mask: N(0, 1) values, -inf holes, and every row of row 2 masked.
          std::vector<float> mask = testing_support::RandomNormal(lq * (lk + 1), seed);
          for (size_t i = 0; i < mask.size(); ++i) {
            if (i % 7 == 3 || i / (lk + 1) == 2) mask[i] = kNegInf;
          }
          // Key padding: every other key of the first 256 (a whole tile when lk > 256).
          std::vector<float> key_bias(lk, 0.0f);
          for (size_t j = 0; j < lk; ++j) {
            if (j % 2 == 1 || (lk > 256 && j < 256)) key_bias[j] = kNegInf;
          }
          const size_t ldw = lk + 2;
          std::vector<float> out(lq * head.ld, -3.0f), weights(lq * ldw, -3.0f);
          simd::AttentionHeadArgs args = head.Args(out.data());
          if (use_mask) {
            args.mask.additive = mask.data();
            args.mask.ld_additive = lk + 1;
          }
          if (use_bias) args.mask.key_bias = key_bias.data();
          args.mask.causal = causal;
          args.mask.causal_offset = offset;
          args.weights = weights.data();
          args.ldw = ldw;
          head.RunArgs(args, {lq / 3});

          const double scale = head.Scale();
          std::vector<double> p(lk);
          for (size_t i = 0; i < lq; ++i) {
            double max = -INFINITY, score_err = 0.0;
            for (size_t j = 0; j < lk; ++j) {
              double dot = 0.0, abs_dot = 0.0;
              for (size_t c = 0; c < dk; ++c) {
                const double t = double(head.q[i * head.ld + c]) * head.k[j * head.ld + c];
                dot += t;
                abs_dot += std::fabs(t);
              }
              p[j] = dot * scale;
              if (use_mask) p[j] += mask[i * (lk + 1) + j];
              if (use_bias) p[j] += key_bias[j];
              if (causal && j > i + offset) p[j] = -INFINITY;
              score_err = std::fmax(score_err, ((dk + 4) * abs_dot * scale + 16.0) * kFloatEps);
              max = std::fmax(max, p[j]);
            }
            double sum = 0.0;
            for (size_t j = 0; j < lk; ++j) sum += (p[j] = max == -INFINITY ? 0.0 : std::exp(p[j] - max));
            for (size_t j = 0; j < lk + 2; ++j) {
              const float got = weights[i * ldw + j];
              if (j >= lk) {
                ASSERT_EQ(got, -3.0f) << "wrote outside the row's weights";
              } else if (sum == 0.0) {
                ASSERT_EQ(got, 0.0f) << "fully masked row " << i;
              } else {
                ASSERT_NEAR(got, p[j] / sum, 4.0 * score_err * p[j] / sum + 4 * kFloatEps)
                    << "dk=" << dk << " lk=" << lk << " lq=" << lq << " variant " << variant
                    << " weight " << i << "," << j;
              }
            }
            for (size_t c = 0; c < dk; ++c) {
              const float got = out[i * head.ld + c];
              if (sum == 0.0) {
                ASSERT_EQ(got, 0.0f) << "fully masked row " << i;
                continue;
              }
              double ref = 0.0, abs_ref = 0.0;
              for (size_t j = 0; j < lk; ++j) {
                ref += p[j] * head.v[j * head.ld + c];
                abs_ref += p[j] * std::fabs(head.v[j * head.ld + c]);
              }
              const double tol = 2.0 * abs_ref / sum * (2.0 * score_err + (lk + 2) * kFloatEps);
              ASSERT_NEAR(got, ref / sum, tol + 1e-30)
                  << "dk=" << dk << " lk=" << lk << " lq=" << lq << " variant " << variant
                  << " row " << i << " col " << c;
            }
          }
        }
      }
    }
  }
}

// The masked-out upper triangle is never computed: keys past a causal row's limit may hold
// NaN without reaching any result.
void CheckAttentionCausalSkipsMaskedKeys(const simd::AttentionKernel& kernel) {
  for (size_t lk : {23, 300, 700}) {  // every case has keys past the last row's limit
    Head head(kernel, 20, lk, 8, 91);
    std::vector<float> out(head.lq * head.ld), with_nan(head.lq * head.ld);
    simd::AttentionHeadArgs args = head.Args(out.data());
    args.mask.causal = true;
    head.RunArgs(args, {});
    for (size_t j = head.lq; j < lk; ++j) head.k[j * head.ld] = head.v[j * head.ld] = NAN;
    args.out = with_nan.data();
    head.RunArgs(args, {});
    ASSERT_EQ(0, std::memcmp(out.data(), with_nan.data(), out.size() * sizeof(float)));
  }
}


// The attention step's extras against a double-precision reference: a sliding window (causal
// with an offset, and two-sided), a ring of key slots (a windowed KV cache's), soft-capped
// scores and an attention sink, with their weights; and any split of rows bit-identical.
void CheckAttentionStepMath(const simd::AttentionKernel& kernel) {
  uint32_t seed = 9000;
  for (size_t dk : {3, 17, 64}) {
    for (size_t lk : {17, 300, 700}) {
      for (size_t lq : {1, 9, 33}) {
        for (int variant = 0; variant < 5; ++variant) {
          Head head(kernel, lq, lk, dk, seed);
          seed += 3;
          const bool causal = variant != 1;
          const size_t window = variant == 4 ? 0 : 1 + (seed % 2 == 0 ? lk / 3 : 5);
          const bool ring = variant == 2;
          const float softcap = variant == 3 || variant == 4 ? 1.5f : 0.0f;
          const float sink = variant >= 3 ? 0.7f : -INFINITY;
          // Ring: slot j holds the latest position <= last with position % lk == j.
          const size_t last = ring ? 3 * lk + lk / 2 : lk - 1;
          const size_t offset = ring ? last + 1 - lq : variant == 0 ? lk / 2 : 0;
          const auto key_position = [&](size_t j) { return j + (last - j) / lk * lk; };
          const size_t ldw = lk + 1;
          std::vector<float> out(lq * head.ld, -3.0f), weights(lq * ldw, -3.0f);
          simd::AttentionHeadArgs args = head.Args(out.data());
          args.mask.causal = causal;
          args.mask.causal_offset = offset;
          args.mask.window = window;
          if (ring) {
            args.mask.ring = lk;
            args.mask.ring_last = last;
          }
          args.softcap = softcap;
          args.sink = sink;
          args.weights = weights.data();
          args.ldw = ldw;
          head.RunArgs(args, {lq / 2});

          std::vector<double> p(lk);
          for (size_t i = 0; i < lq; ++i) {
            const size_t row_position = i + offset;
            double max = sink, score_err = 0.0;
            for (size_t j = 0; j < lk; ++j) {
              double dot = 0.0, abs_dot = 0.0;
              for (size_t c = 0; c < dk; ++c) {
                const double t = double(head.q[i * head.ld + c]) * head.k[j * head.ld + c];
                dot += t;
                abs_dot += std::fabs(t);
              }
              p[j] = dot * head.Scale();
              if (softcap > 0.0f) p[j] = softcap * std::tanh(p[j] / softcap);
              const size_t kp = key_position(j);
              const size_t distance = kp > row_position ? kp - row_position : row_position - kp;
              if ((causal && kp > row_position) || (window != 0 && distance >= window)) {
                p[j] = -INFINITY;
              }
              score_err = std::fmax(score_err, ((dk + 4) * abs_dot * head.Scale() + 16.0) * kFloatEps);
              max = std::fmax(max, p[j]);
            }
            double sum = sink == -INFINITY ? 0.0 : std::exp(sink - max);
            for (size_t j = 0; j < lk; ++j) {
              sum += (p[j] = max == -INFINITY ? 0.0 : std::exp(p[j] - max));
            }
            for (size_t j = 0; j < lk; ++j) {
              const double want = sum == 0.0 ? 0.0 : p[j] / sum;
              ASSERT_NEAR(weights[i * ldw + j], want, 4.0 * score_err * want + 4 * kFloatEps)
                  << "dk=" << dk << " lk=" << lk << " lq=" << lq << " variant " << variant
                  << " weight " << i << "," << j;
            }
            for (size_t c = 0; c < dk; ++c) {
              double ref = 0.0, abs_ref = 0.0;
              for (size_t j = 0; j < lk; ++j) {
                ref += p[j] * head.v[j * head.ld + c];
                abs_ref += p[j] * std::fabs(head.v[j * head.ld + c]);
              }
              const double want = sum == 0.0 ? 0.0 : ref / sum;
              const double tol = sum == 0.0 ? 0.0
                                 : 2.0 * abs_ref / sum * (2.0 * score_err + (lk + 2) * kFloatEps);
              ASSERT_NEAR(out[i * head.ld + c], want, tol + 1e-30)
                  << "dk=" << dk << " lk=" << lk << " lq=" << lq << " variant " << variant
                  << " row " << i << " col " << c;
            }
          }
          std::vector<float> whole(out.size(), -3.0f);
          args.out = whole.data();
          args.weights = nullptr;
          head.RunArgs(args, {});
          ASSERT_EQ(0, std::memcmp(whole.data(), out.data(), out.size() * sizeof(float)));
        }
      }
    }
  }
}

// Key tiles wholly before a row block's window are never read: NaN there reaches no result.
void CheckAttentionWindowSkipsEarlyTiles(const simd::AttentionKernel& kernel) {
  Head head(kernel, 8, 900, 8, 93);
  std::vector<float> out(head.lq * head.ld), with_nan(head.lq * head.ld);
  simd::AttentionHeadArgs args = head.Args(out.data());
  args.mask.causal = true;
  args.mask.causal_offset = 890;  // rows at positions 890..897 see 826..897 with a window of 72
  args.mask.window = 72;
  head.RunArgs(args, {});
  for (size_t j = 0; j < 768; ++j) head.k[j * head.ld] = head.v[j * head.ld] = NAN;
  args.out = with_nan.data();
  head.RunArgs(args, {});
  ASSERT_EQ(0, std::memcmp(out.data(), with_nan.data(), out.size() * sizeof(float)));
}

void TestAttentionMatchesScalar() { ForEachKernel(CheckAttentionMatchesScalar); }

void TestAttentionNonFinite() { ForEachKernel(CheckAttentionNonFinite); }

void TestAttentionMasks() { ForEachKernel(CheckAttentionMasks); }

void TestAttentionCausalSkipsMaskedKeys() { ForEachKernel(CheckAttentionCausalSkipsMaskedKeys); }

void TestAttentionStepMath() { ForEachKernel(CheckAttentionStepMath); }

void TestAttentionWindowSkipsEarlyTiles() { ForEachKernel(CheckAttentionWindowSkipsEarlyTiles); }

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
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttentionMasks);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttentionCausalSkipsMaskedKeys);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttentionStepMath);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttentionWindowSkipsEarlyTiles);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionTest);
}  // namespace edgeattn
#endif
