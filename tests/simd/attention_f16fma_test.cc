// The fp16-arithmetic attention core (f16kv_f16fma_8x64, vfmadd231ph) on every compiled target
// that lists it, against a scalar model of its rounding (simd/attention_f16fma.h): scores are
// modelled bit for bit (the query rounded to fp16, chunks of fp16 fused multiply-adds widened
// into fp32, the fp32 sum where a chunk's sum is not finite), checked through the attention
// weights; softmax and P V in double precision within the bound of fp16 probabilities and fp16
// chunk sums of P V. Then fp16 overflow inside a chunk where fp32 does not overflow, a query past
// fp16's range (against f16kv_f32_6x4v), and the accuracy bound against float attention
// on the unrounded data. Skipped on CPUs without AVX512-FP16.
#include "simd/attention_f16fma.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "simd/attention.h"
#include "simd/cpu_features.h"
#include "simd/targets.h"
#include "tests/simd/compact_kv_core_harness.h"
#include "tests/simd/target_facts.h"

namespace edgeattn {
namespace {

using testing_support::CoreCase;
using testing_support::CoreHead;
using testing_support::CoreModel;
using testing_support::ForEachSize;
using testing_support::HeadLayout;
using testing_support::kFloatEps;
using testing_support::kLog2e;
using testing_support::MakeCase;
using testing_support::ReferenceRow;
using testing_support::RoundF16;
using testing_support::RowBounds;

constexpr const char* kName = "f16kv_f16fma_8x64";
constexpr double kF16Eps = 1.0 / (1 << 11);  // unit roundoff of fp16 (11 significant bits)

// The kernel of the target under test, or null (and the test skipped) where it is not listed.
const simd::AttentionKernel* KernelOrSkip(int64_t target) {
  const bool expected =
      testing_support::FactsOf(target).can_build_avx512_fp16 && simd::CpuHasAvx512Fp16();
  const simd::AttentionKernel* kernel = simd::FindAttentionKernel(simd::KvType::kF16, kName);
  EXPECT_EQ(kernel != nullptr, expected);
  return kernel;
}

#define EDGEATTN_KERNEL_OR_SKIP(target, kernel)                                            \
  const simd::AttentionKernel* kernel = KernelOrSkip(target);                              \
  if (kernel == nullptr) {                                                                 \
    GTEST_SKIP() << kName << ": needs AVX512-FP16, an AVX-512 target, g++ 12 or clang 16"; \
  }

// x rounded to fp16 (nearest even; past 65504 infinity), exactly from double.
double RoundF16Exact(double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  const int e = std::max(std::ilogb(x), -14);
  const double quantum = std::ldexp(1.0, e - 10);
  const double r = std::nearbyint(x / quantum) * quantum;
  return std::fabs(r) > 65504.0 ? std::copysign(HUGE_VAL, x) : r;
}

// The kernel's score of fp16 query q and fp16 key k (dk channels): fp16 chunks widened into fp32,
// or the fp32 sum of the exact products where that is not finite.
double ModelScore(const std::vector<double>& q, const double* key, size_t dk) {
  float score = 0.0f;
  for (size_t c0 = 0; c0 < dk; c0 += simd::kF16ScoreChunk) {
    double chunk = 0.0;  // fp16 values: q k + chunk is exact in double for these magnitudes
    for (size_t c = c0; c < std::min(dk, c0 + simd::kF16ScoreChunk); ++c) {
      chunk = RoundF16Exact(q[c] * key[c] + chunk);
    }
    score = c0 == 0 ? float(chunk) : score + float(chunk);
  }
  if (std::isfinite(score)) return score;
  float sum = 0.0f;
  for (size_t c = 0; c < dk; ++c) sum = std::fma(float(q[c]), float(key[c]), sum);
  return sum;
}

// The query row scaled in fp32 and rounded to fp16, keys and values rounded to fp16, scores as
// ModelScore sums them.
CoreModel Model() {
  CoreModel model;
  model.round_query = &RoundF16;
  model.round_kv = &RoundF16;
  model.score = &ModelScore;
  // Softcap's and the masks' fp32 roundings: a few ulp of the score and of the mask's term.
  model.score_err = [](const CoreCase&, double abs_dot) {
    return (4 * abs_dot + 16.0) * kFloatEps;
  };
  // P V: each fp16 probability off by u16, each chunk's fp16 sum by gamma_n of its terms'
  // magnitudes; exp2, the sums and the division in fp32.
  model.bounds = [](const CoreCase& c, const ReferenceRow& m) {
    const double n = double(simd::kF16ValueChunk);
    const double pv_err = kF16Eps + n * kF16Eps / (1.0 - n * kF16Eps);
    RowBounds b;
    b.p_err = pv_err + 2.0 * std::log(2.0) * m.score_err + (c.lk + 32) * kFloatEps;
    b.weight_rel = 4.0 * m.score_err + (c.lk + 32) * kFloatEps;
    b.weight_abs = 1e-30;
    return b;
  };
  return model;
}

// Listed exactly where the target has AVX-512 and the CPU AVX512-FP16, first of the fp16
// kernels (measured faster than f16kv_f32, docs/fp16_core.md).
void TestF16FmaListed(int64_t target) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  EDGEATTN_KERNEL_OR_SKIP(target, kernel);
  EXPECT_EQ(simd::AttentionKernels(simd::KvType::kF16).front(), kernel);
}

// Every size and tail: rows 1 to 129 (blocks of 8 and their remainders), keys across panel (64)
// and tile (256) edges, dk across chunk (16) and vector (32, 64) edges; causal or not, with
// masks, softcap and sink on some.
void TestF16FmaSizes(int64_t target) {
  EDGEATTN_KERNEL_OR_SKIP(target, kernel);
  ForEachSize({1, 3, 16, 17, 32, 33, 63, 64, 80, 128}, {1, 3, 17, 63, 129, 300},
              {1, 3, 17, 63, 129}, 1500000, 100, [&](CoreCase& c) {
                c.additive = c.seed % 5 == 0 && c.lq > 2;
                if (c.seed % 7 == 0) {
                  c.softcap = 1.5f;
                  c.sink = 0.7f;
                }
                c.weights = true;
                testing_support::CheckCase(Model(), *kernel, c);
              });
}

// Chunk sums past fp16's 65504 where fp32's are finite take the fp32 sums: scores of two large
// products (each < 65504, their sum beyond it), and values of 30000 that a zero query weights
// equally (a chunk of 16 sums to 480000).
void TestF16FmaOverflowFallsBackToF32(int64_t target) {
  EDGEATTN_KERNEL_OR_SKIP(target, kernel);
  const CoreCase c = MakeCase(3, 40, 17);
  CoreHead h(*kernel, c, HeadLayout());
  const float big = 40000.0f / (h.scale * kLog2e);  // a query channel's base-2 product 40000
  for (size_t ch : {0, 1}) h.q[0 * h.ld + ch] = big;
  for (size_t j = 0; j < c.lk; ++j) {
    h.k[j * h.ld + 0] = h.k[j * h.ld + 1] = j == 7 ? 1.0f : -1.0f;
    h.v[j * h.ld + 5] = 30000.0f;
  }
  for (size_t ch = 0; ch < c.dk; ++ch) h.q[1 * h.ld + ch] = 0.0f;
  std::vector<float> out(c.lq * h.ld);
  h.Run(h.Args(out.data(), nullptr), {});
  // Up to a few fp32 ulp: exp2 and the fp32 sum of the probabilities.
  for (size_t ch = 0; ch < c.dk; ++ch) {
    const double want = RoundF16(h.v[7 * h.ld + ch]);
    EXPECT_NEAR(out[0 * h.ld + ch], want, 8 * kFloatEps * std::fabs(want)) << "key 7 only";
  }
  EXPECT_NEAR(out[1 * h.ld + 5], 30000.0, 64 * kFloatEps * 30000.0) << "the mean of 30000s";
  for (size_t ch = 0; ch < c.dk; ++ch) EXPECT_TRUE(std::isfinite(out[2 * h.ld + ch]));
}

// Scores whose fp16 chunk sums overflow to -inf are not taken as masked: they take the fp32
// sums as +inf ones do. Base-2 products of -40000 and -30000 (key 7) or -40000 (the others) in
// two channels: every fp16 sum is -inf, the fp32 scores put all the weight on key 7.
void TestF16FmaNegativeOverflowFallsBackToF32(int64_t target) {
  EDGEATTN_KERNEL_OR_SKIP(target, kernel);
  const CoreCase c = MakeCase(1, 40, 17);
  CoreHead h(*kernel, c, HeadLayout());
  const float big = 40000.0f / (h.scale * kLog2e);
  for (size_t ch = 0; ch < c.dk; ++ch) h.q[ch] = ch < 2 ? big : 0.0f;
  for (size_t j = 0; j < c.lk; ++j) {
    h.k[j * h.ld + 0] = -1.0f;
    h.k[j * h.ld + 1] = j == 7 ? -0.75f : -1.0f;
  }
  std::vector<float> out(c.lq * h.ld);
  h.Run(h.Args(out.data(), nullptr), {});
  for (size_t ch = 0; ch < c.dk; ++ch) {
    const double want = RoundF16(h.v[7 * h.ld + ch]);
    EXPECT_NEAR(out[ch], want, 8 * kFloatEps * std::fabs(want)) << "key 7 only, channel " << ch;
  }
}

// A P V fallback in a row's second key tile adds to what the first tile accumulated. A zero
// query weights all 300 keys 1 (exact in fp16); channel 5 holds 512 in the first tile (fp16
// chunk sums of 64 x 512, exact) and 30000 in the second (a chunk past 65504: the fp32 sum).
void TestF16FmaOverflowInSecondTileKeepsFirstTile(int64_t target) {
  EDGEATTN_KERNEL_OR_SKIP(target, kernel);
  const CoreCase c = MakeCase(1, 300, 17);
  CoreHead h(*kernel, c, HeadLayout());
  for (size_t ch = 0; ch < c.dk; ++ch) h.q[ch] = 0.0f;
  for (size_t j = 0; j < c.lk; ++j) h.v[j * h.ld + 5] = j < 256 ? 512.0f : 30000.0f;
  std::vector<float> out(c.lq * h.ld);
  h.Run(h.Args(out.data(), nullptr), {});
  const double want = (256 * 512.0 + 44 * 30000.0) / 300.0;
  EXPECT_NEAR(out[5], want, 8 * kFloatEps * want);
}

// The largest sum over channels of |q k| in base-2 units of a query row against any key.
double MaxAbsProducts(const CoreHead& h, size_t row) {
  double most = 0.0;
  for (size_t j = 0; j < h.c.lk; ++j) {
    double sum = 0.0;
    for (size_t c = 0; c < h.c.dk; ++c) {
      sum += std::fabs(double(h.q[row * h.ld + c]) * h.k[j * h.ld + c]);
    }
    most = std::max(most, sum * h.scale * kLog2e);
  }
  return most;
}

// Runs the kernel and f16kv_f32_6x4v on the same case, with `setup` setting each head's query,
// keys and values, and expects the same finite results. Weights: scores apart by the fp16
// query's rounding and the fp16 chunk sums, at most (chunk + 1) u16 of the row's largest sum of
// |q k|, move each weight by a factor 2^(2 x that); fp32 exp2 and sums add (lk + 32) eps. Output:
// P V's fp16 probabilities (u16 each) and chunk sums (gamma_64) over probabilities summing to 1,
// within (u16 + gamma_64) of the largest value.
template <class Setup>
void ExpectAsWidening(const simd::AttentionKernel& kernel, const CoreCase& c, Setup setup) {
  const simd::AttentionKernel* widening =
      simd::FindAttentionKernel(simd::KvType::kF16, "f16kv_f32_6x4v");
  ASSERT_NE(widening, nullptr);
  const size_t ldw = c.lk + 2;
  std::vector<float> outs[2], weights[2];
  std::vector<double> score_err(c.lq);
  double max_value = 0.0;
  const simd::AttentionKernel* kernels[2] = {&kernel, widening};
  for (size_t k = 0; k < 2; ++k) {
    CoreHead h(*kernels[k], c, HeadLayout());
    setup(h);
    for (float v : h.v) max_value = std::max(max_value, double(std::fabs(v)));
    for (size_t i = 0; i < c.lq; ++i) {
      score_err[i] = (simd::kF16ScoreChunk + 1) * kF16Eps * MaxAbsProducts(h, i);
    }
    outs[k].resize(c.lq * h.ld);
    weights[k].resize(c.lq * ldw);
    h.Run(h.Args(outs[k].data(), weights[k].data()), {});
  }
  for (size_t i = 0; i < c.lq; ++i) {
    for (size_t j = 0; j < c.lk; ++j) {
      const double want = weights[1][i * ldw + j];
      const double tol = want * (std::exp2(2 * score_err[i]) - 1) + (c.lk + 32) * kFloatEps;
      ASSERT_NEAR(weights[0][i * ldw + j], want, tol) << "row " << i << " key " << j;
    }
  }
  const double bound = (kF16Eps + 64 * kF16Eps / (1 - 64 * kF16Eps)) * max_value;
  for (size_t i = 0; i < outs[0].size(); ++i) {
    ASSERT_TRUE(std::isfinite(outs[0][i])) << i;
    EXPECT_NEAR(outs[0][i], outs[1][i], bound) << i;
  }
}

// A query past fp16's range scores as the fp32 kernels score it, where rounding the query to
// fp16 had made its scores infinite. First base-2 products of 1e5 in two channels a row,
// soft-capped: where a key's two have opposite signs, the fp16 sum is inf - inf.
void TestF16FmaQueryPastFp16Range(int64_t target) {
  EDGEATTN_KERNEL_OR_SKIP(target, kernel);
  CoreCase c = MakeCase(9, 70, 32);
  c.softcap = 30.0f;
  ExpectAsWidening(*kernel, c, [&](CoreHead& h) {
    const float big = 1e5f / (h.scale * kLog2e);
    for (size_t r = 0; r < c.lq; r += 2) h.q[r * h.ld + r % c.dk] = h.q[r * h.ld + 5] = big;
  });
}

// Then, without softcap, one channel just past fp16's range (7e4 base-2 units, rounding to
// infinity) against keys small enough there (up to 1.2e-4) that the scores spread over a few
// units, so every key's probability and every value count.
void TestF16FmaQueryChannelJustPastFp16Range(int64_t target) {
  EDGEATTN_KERNEL_OR_SKIP(target, kernel);
  const CoreCase c = MakeCase(9, 70, 32);
  ExpectAsWidening(*kernel, c, [&](CoreHead& h) {
    const float past = 7e4f / (h.scale * kLog2e);
    for (size_t r = 0; r < c.lq; r += 2) h.q[r * h.ld + 3] = past;
    for (size_t j = 0; j < c.lk; ++j) h.k[j * h.ld + 3] = float(int(j % 9) - 4) * 3e-5f;
  });
}

// NaN and infinity as the fp32 core treats them.
void TestF16FmaNonFinite(int64_t target) {
  EDGEATTN_KERNEL_OR_SKIP(target, kernel);
  testing_support::CheckNonFinite(*kernel, 300, 32, 1, HeadLayout());
}

void TestF16FmaAccuracyBound(int64_t target) {
  EDGEATTN_KERNEL_OR_SKIP(target, kernel);
  testing_support::CheckAccuracyBound(*kernel, 200, HeadLayout(), hwy::TargetName(target));
}

}  // namespace

// An instance per target; the bodies, compiled once, reach its kernel by dynamic dispatch.
HWY_BEFORE_TEST(AttentionF16FmaTest);
TEST_P(AttentionF16FmaTest, TestF16FmaListed) { TestF16FmaListed(GetParam()); }
TEST_P(AttentionF16FmaTest, TestF16FmaSizes) { TestF16FmaSizes(GetParam()); }
TEST_P(AttentionF16FmaTest, TestF16FmaOverflowFallsBackToF32) {
  TestF16FmaOverflowFallsBackToF32(GetParam());
}
TEST_P(AttentionF16FmaTest, TestF16FmaNegativeOverflowFallsBackToF32) {
  TestF16FmaNegativeOverflowFallsBackToF32(GetParam());
}
TEST_P(AttentionF16FmaTest, TestF16FmaOverflowInSecondTileKeepsFirstTile) {
  TestF16FmaOverflowInSecondTileKeepsFirstTile(GetParam());
}
TEST_P(AttentionF16FmaTest, TestF16FmaQueryPastFp16Range) {
  TestF16FmaQueryPastFp16Range(GetParam());
}
TEST_P(AttentionF16FmaTest, TestF16FmaQueryChannelJustPastFp16Range) {
  TestF16FmaQueryChannelJustPastFp16Range(GetParam());
}
TEST_P(AttentionF16FmaTest, TestF16FmaNonFinite) { TestF16FmaNonFinite(GetParam()); }
TEST_P(AttentionF16FmaTest, TestF16FmaAccuracyBound) { TestF16FmaAccuracyBound(GetParam()); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionF16FmaTest);
}  // namespace edgeattn
