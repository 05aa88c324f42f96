// The fp16-arithmetic attention core (f16kv_f16fma_8x64, vfmadd231ph) on every compiled target
// that lists it, against a scalar model of its rounding (simd/attention_f16fma.h): scores are
// modelled bit for bit (the query rounded to fp16, chunks of fp16 fused multiply-adds widened
// into fp32, the fp32 sum where a chunk's sum is not finite), checked through the attention
// weights; softmax and P V in double precision within the bound of fp16 probabilities and fp16
// chunk sums of P V. Then fp16 overflow inside a chunk where fp32 does not overflow, and the
// issue's accuracy bound against float attention on the unrounded data. Skipped on CPUs without
// AVX512-FP16.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/attention_f16fma_test.cc"
#include "hwy/aligned_allocator.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/attention.h"
#include "simd/attention_f16fma.h"
#include "simd/cpu_features.h"
#include "simd/half_float.h"
#include "simd/highway_compat.h"
#include "simd/targets.h"
#include "tests/test_support.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

using testing_support::Cosine;
using testing_support::kFloatEps;
using testing_support::RandomNormal;

constexpr const char* kName = "f16kv_f16fma_8x64";
constexpr float kLog2e = 1.44269504088896340736f;
constexpr double kF16Eps = 1.0 / (1 << 11);  // unit roundoff of fp16 (11 significant bits)
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The kernel of the target under test, or null (and the test skipped) where it is not listed.
const simd::AttentionKernel* KernelOrSkip() {
  const bool expected = EDGEATTN_TARGET_CAN_BUILD_AVX512_FP16 && simd::CpuHasAvx512Fp16();
  const simd::AttentionKernel* kernel = simd::FindAttentionKernel(simd::KvType::kF16, kName);
  EXPECT_EQ(kernel != nullptr, expected);
  return kernel;
}

#define EDGEATTN_KERNEL_OR_SKIP(kernel)                                            \
  const simd::AttentionKernel* kernel = KernelOrSkip();                            \
  if (kernel == nullptr) {                                                          \
    GTEST_SKIP() << kName << ": needs AVX512-FP16, an AVX-512 target, g++ 12 or clang 16"; \
  }

// x rounded to fp16 (nearest even; past 65504 infinity), exactly from double.
double RoundF16(double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  const int e = std::max(std::ilogb(x), -14);
  const double quantum = std::ldexp(1.0, e - 10);
  const double r = std::nearbyint(x / quantum) * quantum;
  return std::fabs(r) > 65504.0 ? std::copysign(HUGE_VAL, x) : r;
}

double F16(float x) { return simd::F32FromF16(simd::F16FromF32(x)); }

struct Case {
  size_t lq = 1, lk = 1, dk = 1;
  bool causal = false;
  size_t offset = 0;
  bool additive = false;  // N(0, 1) with -inf holes, row 2 all -inf
  float softcap = 0.0f;
  float sink = -HUGE_VALF;
  std::vector<size_t> cuts;  // row splits between kernel calls
  uint32_t seed = 1;
};

struct Head {
  const simd::AttentionKernel& kernel;
  Case c;
  size_t ld;  // row stride of q, k, v and out: wider than dk, as a head's slice
  float scale;
  std::vector<float> q, k, v, additive;
  hwy::AlignedFreeUniquePtr<uint8_t[]> keys, values;
  hwy::AlignedFreeUniquePtr<float[]> scratch;

  Head(const simd::AttentionKernel& kernel_, const Case& c_)
      : kernel(kernel_), c(c_), ld(c_.dk + 5) {
    scale = 1.0f / std::sqrt(float(c.dk));
    q = RandomNormal(c.lq * ld, c.seed);
    k = RandomNormal(c.lk * ld, c.seed + 1);
    v = RandomNormal(c.lk * ld, c.seed + 2);
    if (c.additive) {
      additive = RandomNormal(c.lq * (c.lk + 1), c.seed + 3);
      for (size_t i = 0; i < additive.size(); ++i) {
        if (i % 7 == 3 || i / (c.lk + 1) == 2) additive[i] = -HUGE_VALF;
      }
    }
    keys = hwy::AllocateAligned<uint8_t>(kernel.keys_bytes(c.lk, c.dk));
    values = hwy::AllocateAligned<uint8_t>(kernel.values_bytes(c.lk, c.dk));
    scratch = hwy::AllocateAligned<float>(kernel.scratch_floats(c.dk));
  }

  simd::AttentionHeadArgs Args(float* out, float* weights) const {
    simd::AttentionHeadArgs args{q.data(), ld,  keys.get(), values.get(), c.lk, c.dk,
                                 scale,    out, ld};
    args.mask.causal = c.causal;
    args.mask.causal_offset = c.offset;
    if (c.additive) {
      args.mask.additive = additive.data();
      args.mask.ld_additive = c.lk + 1;
    }
    args.softcap = c.softcap;
    args.sink = c.sink;
    args.weights = weights;
    args.ldw = c.lk + 2;
    return args;
  }

  // Packs in pieces (as a KV cache appends) into all-ones bytes (NaN as fp16): no stale byte may
  // reach a result.
  void Run(const simd::AttentionHeadArgs& args, const std::vector<size_t>& cuts) {
    std::fill_n(keys.get(), kernel.keys_bytes(c.lk, c.dk), 0xFF);
    std::fill_n(values.get(), kernel.values_bytes(c.lk, c.dk), 0xFF);
    for (size_t first = 0; first < c.lk;) {
      const size_t count = std::min(c.lk - first, first % 3 == 0 ? size_t{70} : size_t{1});
      kernel.pack(k.data() + first * ld, ld, v.data() + first * ld, ld, first, count, first + count,
                  c.dk, keys.get(), values.get());
      first += count;
    }
    size_t begin = 0;
    for (size_t end : cuts) {
      kernel.run(args, begin, end, scratch.get());
      begin = end;
    }
    kernel.run(args, begin, c.lq, scratch.get());
  }
};

// The kernel's score of fp16 query q and key k (dk channels): fp16 chunks widened into fp32, or
// the fp32 sum of the exact products where that is not finite.
double ModelScore(const std::vector<double>& q, const float* key, size_t dk) {
  float score = 0.0f;
  for (size_t c0 = 0; c0 < dk; c0 += simd::kF16ScoreChunk) {
    double chunk = 0.0;  // fp16 values: q k + chunk is exact in double for these magnitudes
    for (size_t c = c0; c < std::min(dk, c0 + simd::kF16ScoreChunk); ++c) {
      chunk = RoundF16(q[c] * F16(key[c]) + chunk);
    }
    score = c0 == 0 ? float(chunk) : score + float(chunk);
  }
  if (std::isfinite(score)) return score;
  float sum = 0.0f;
  for (size_t c = 0; c < dk; ++c) sum = std::fma(float(q[c]), float(F16(key[c])), sum);
  return sum;
}

struct ModelRow {
  std::vector<double> p;  // 2^(s_j - max), 0 for masked keys
  double sum = 0.0;       // with the sink's term
  double score_err = 0.0;
};

ModelRow Model(const Head& h, size_t i) {
  const Case& c = h.c;
  const float unit = h.scale * kLog2e;
  std::vector<double> q(c.dk);
  for (size_t ch = 0; ch < c.dk; ++ch) q[ch] = F16(h.q[i * h.ld + ch] * unit);
  ModelRow row;
  row.p.assign(c.lk, kNegInf);
  double max = c.sink * double(kLog2e);
  for (size_t j = 0; j < c.lk; ++j) {
    double s = ModelScore(q, &h.k[j * h.ld], c.dk);
    double abs_dot = 0.0;
    for (size_t ch = 0; ch < c.dk; ++ch) abs_dot += std::fabs(q[ch] * F16(h.k[j * h.ld + ch]));
    if (c.softcap > 0.0f) {
      const double cap = c.softcap * double(kLog2e);
      s = cap * std::tanh(s / cap);
    }
    if (c.additive) s += h.additive[i * (c.lk + 1) + j] * double(kLog2e);
    if (c.causal && j > i + c.offset) s = kNegInf;
    // Softcap's and the masks' fp32 roundings: a few ulp of the score and of the mask's term.
    row.score_err = std::max(row.score_err, (4 * abs_dot + 16.0) * kFloatEps);
    row.p[j] = s;
    max = std::max(max, s);
  }
  if (max == kNegInf) {
    std::fill(row.p.begin(), row.p.end(), 0.0);
    return row;
  }
  row.sum = c.sink == -HUGE_VALF ? 0.0 : std::exp2(c.sink * double(kLog2e) - max);
  for (double& x : row.p) row.sum += (x = std::exp2(x - max));
  return row;
}

// Runs the case (split at c.cuts) and checks every output and weight against the model; a
// second run in one call without weights gives the same bits.
void CheckCase(const simd::AttentionKernel& kernel, const Case& c) {
  Head h(kernel, c);
  const size_t ldw = c.lk + 2;
  std::vector<float> out(c.lq * h.ld, -3.0f), weights(c.lq * ldw, -3.0f);
  h.Run(h.Args(out.data(), weights.data()), c.cuts);
  // P V: each fp16 probability off by u16, each chunk's fp16 sum by gamma_n of its terms'
  // magnitudes; exp2, the sums and the division in fp32.
  const double n = double(simd::kF16ValueChunk);
  const double pv_err = kF16Eps + n * kF16Eps / (1.0 - n * kF16Eps);
  for (size_t i = 0; i < c.lq; ++i) {
    const ModelRow m = Model(h, i);
    const double p_err = pv_err + 2.0 * std::log(2.0) * m.score_err + (c.lk + 32) * kFloatEps;
    for (size_t ch = 0; ch < h.ld; ++ch) {
      const float got = out[i * h.ld + ch];
      if (ch >= c.dk) {
        ASSERT_EQ(got, -3.0f) << "wrote outside the head's columns";
        continue;
      }
      if (m.sum == 0.0) {
        ASSERT_EQ(got, 0.0f) << "fully masked row " << i;
        continue;
      }
      double want = 0.0, abs_want = 0.0;
      for (size_t j = 0; j < c.lk; ++j) {
        const double value = F16(h.v[j * h.ld + ch]);
        want += m.p[j] * value;
        abs_want += m.p[j] * std::fabs(value);
      }
      ASSERT_NEAR(got, want / m.sum, 2.0 * abs_want / m.sum * p_err + 1e-30)
          << "lq=" << c.lq << " lk=" << c.lk << " dk=" << c.dk << " row " << i << " col " << ch;
    }
    for (size_t j = 0; j < ldw; ++j) {
      const float got = weights[i * ldw + j];
      if (j >= c.lk) {
        ASSERT_EQ(got, -3.0f) << "wrote outside the row's weights";
        continue;
      }
      const double want = m.sum == 0.0 ? 0.0 : m.p[j] / m.sum;
      ASSERT_NEAR(got, want, 4.0 * m.score_err * want + (c.lk + 32) * kFloatEps * want + 1e-30)
          << "lq=" << c.lq << " lk=" << c.lk << " dk=" << c.dk << " weight " << i << "," << j;
    }
  }
  std::vector<float> whole(out.size(), -3.0f);
  h.Run(h.Args(whole.data(), nullptr), {});
  ASSERT_EQ(0, std::memcmp(whole.data(), out.data(), out.size() * sizeof(float)))
      << "a split of the rows or weights changed the output";
}

// Listed exactly where the target has AVX-512 and the CPU AVX512-FP16, first of the fp16
// kernels (measured faster than f16kv_f32, docs/fp16_core.md).
void TestF16FmaListed() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  EDGEATTN_KERNEL_OR_SKIP(kernel);
  EXPECT_EQ(simd::AttentionKernels(simd::KvType::kF16).front(), kernel);
}

// Every size and tail: rows 1 to 129 (blocks of 8 and their remainders), keys across panel (64)
// and tile (256) edges, dk across chunk (16) and vector (32, 64) edges; causal or not, with
// masks, softcap and sink on some.
void TestF16FmaSizes() {
  EDGEATTN_KERNEL_OR_SKIP(kernel);
  uint32_t seed = 100;
  for (size_t dk : {1, 3, 16, 17, 32, 33, 63, 64, 80, 128}) {
    for (size_t lk : {1, 3, 17, 63, 129, 300}) {
      for (size_t lq : {1, 3, 17, 63, 129}) {
        if (lq * lk * dk > 1500000) continue;
        Case c;
        c.lq = lq;
        c.lk = lk;
        c.dk = dk;
        c.seed = seed += 3;
        c.causal = seed % 3 != 0;
        c.offset = lk > lq ? lk - lq : 0;
        c.additive = seed % 5 == 0 && lq > 2;
        if (seed % 7 == 0) {
          c.softcap = 1.5f;
          c.sink = 0.7f;
        }
        if (lq > 2) c.cuts = std::vector<size_t>{1, lq / 2};
        CheckCase(*kernel, c);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Chunk sums past fp16's 65504 where fp32's are finite take the fp32 sums: scores of two large
// products (each < 65504, their sum beyond it), and values of 30000 that a zero query weights
// equally (a chunk of 16 sums to 480000).
void TestF16FmaOverflowFallsBackToF32() {
  EDGEATTN_KERNEL_OR_SKIP(kernel);
  Case c;
  c.lq = 3;
  c.lk = 40;
  c.dk = 17;
  Head h(*kernel, c);
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
    const double want = F16(h.v[7 * h.ld + ch]);
    EXPECT_NEAR(out[0 * h.ld + ch], want, 8 * kFloatEps * std::fabs(want)) << "key 7 only";
  }
  EXPECT_NEAR(out[1 * h.ld + 5], 30000.0, 64 * kFloatEps * 30000.0) << "the mean of 30000s";
  for (size_t ch = 0; ch < c.dk; ++ch) EXPECT_TRUE(std::isfinite(out[2 * h.ld + ch]));
}

// NaN and infinity as the fp32 core treats them: a NaN query makes the row NaN.
void TestF16FmaNonFinite() {
  EDGEATTN_KERNEL_OR_SKIP(kernel);
  Case c;
  c.lq = 4;
  c.lk = 300;
  c.dk = 32;
  Head h(*kernel, c);
  h.q[1 * h.ld + 3] = NAN;
  h.k[(c.lk - 1) * h.ld + 2] = HUGE_VALF;  // row 3 keeps 0 x inf = NaN
  h.q[3 * h.ld + 2] = 0.0f;
  std::vector<float> out(c.lq * h.ld);
  h.Run(h.Args(out.data(), nullptr), {});
  for (size_t ch = 0; ch < c.dk; ++ch) {
    EXPECT_TRUE(std::isnan(out[1 * h.ld + ch]));
    EXPECT_TRUE(std::isnan(out[3 * h.ld + ch]));
  }
}

// The bound against float attention on the unrounded data (double precision): cosine
// >= 0.9999 on N(0, 1) data, >= 0.999 with outlier channels (6 channels of Q, K and V x20).
double CosineToFloat(const simd::AttentionKernel& kernel, bool outliers) {
  Case c;
  c.lq = 200;
  c.lk = 300;
  c.dk = 64;
  c.seed = outliers ? 11 : 12;
  Head h(kernel, c);
  if (outliers) {
    for (std::vector<float>* x : {&h.q, &h.k, &h.v}) {
      for (size_t r = 0; r < x->size() / h.ld; ++r) {
        for (size_t ch : {1, 9, 20, 33, 47, 60}) (*x)[r * h.ld + ch] *= 20.0f;
      }
    }
  }
  std::vector<float> out(c.lq * h.ld);
  h.Run(h.Args(out.data(), nullptr), {});
  std::vector<float> got, want;
  for (size_t i = 0; i < c.lq; ++i) {
    std::vector<double> p(c.lk);
    double max = kNegInf, sum = 0.0;
    for (size_t j = 0; j < c.lk; ++j) {
      double dot = 0.0;
      for (size_t ch = 0; ch < c.dk; ++ch) dot += double(h.q[i * h.ld + ch]) * h.k[j * h.ld + ch];
      max = std::max(max, p[j] = dot * h.scale);
    }
    for (double& x : p) sum += (x = std::exp(x - max));
    for (size_t ch = 0; ch < c.dk; ++ch) {
      double acc = 0.0;
      for (size_t j = 0; j < c.lk; ++j) acc += p[j] * h.v[j * h.ld + ch];
      want.push_back(float(acc / sum));
      got.push_back(out[i * h.ld + ch]);
    }
  }
  return Cosine(got, want);
}

void TestF16FmaAccuracyBound() {
  EDGEATTN_KERNEL_OR_SKIP(kernel);
  const double normal = CosineToFloat(*kernel, false), outliers = CosineToFloat(*kernel, true);
  std::cout << kName << " cosine vs float attention: " << normal << " (normal), " << outliers
            << " (outliers)\n";
  EXPECT_GE(normal, 0.9999);
  EXPECT_GE(outliers, 0.999);
}

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {
HWY_BEFORE_TEST(AttentionF16FmaTest);
HWY_EXPORT_AND_TEST_P(AttentionF16FmaTest, TestF16FmaListed);
HWY_EXPORT_AND_TEST_P(AttentionF16FmaTest, TestF16FmaSizes);
HWY_EXPORT_AND_TEST_P(AttentionF16FmaTest, TestF16FmaOverflowFallsBackToF32);
HWY_EXPORT_AND_TEST_P(AttentionF16FmaTest, TestF16FmaNonFinite);
HWY_EXPORT_AND_TEST_P(AttentionF16FmaTest, TestF16FmaAccuracyBound);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionF16FmaTest);
}  // namespace edgeattn
#endif
