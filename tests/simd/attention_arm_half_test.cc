// The ARM 16-bit attention cores (f16kv_f16fma_6x8, bf16kv_bf16dot_6x8) on every compiled
// target that lists them, forced one by one, against a scalar model of their rounding
// (simd/attention_arm_half.h): the query row scaled in fp32 and rounded as the keys and values
// are, then softmax and P V in double precision, within bounds derived from the kernels' sums:
//   fp16: sums of 8 fused multiply-adds from zero, each off by half an fp16 ulp of the partial
//         sum (2^-11 of the chunk's sum of |products|) or 2^-25 below fp16's normal range, then
//         fp32 additions; the probabilities rounded to fp16;
//   bf16: BFDOT's two fp32 additions per pair, each off by at most one ulp (round to odd);
//         the probabilities rounded to bf16.
// Data in {-1, 0, 1} at a unit scale gives integer scores that both formats sum exactly: those
// cases check the scores (through the weights) to fp32's bound alone, tight enough to see one
// key too many or too few. Then the accuracy bound against float attention.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <limits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/attention_arm_half_test.cc"
#include "hwy/aligned_allocator.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/attention.h"
#include "simd/attention_arm_half.h"
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
using testing_support::TestRandom;

constexpr float kLog2e = 1.44269504088896340736f;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// What the model needs of a kernel: its storage, rounding and errors.
struct Variant {
  const char* name;
  simd::KvType kv;
  double (*round)(float);
  double unit;       // relative rounding error of the 16-bit format
  double chunk_err;  // an fp16 chunk's sum, relative to the chunk's sum of |products|
  double add_err;    // one addition into an fp32 sum, relative (BFDOT rounds to odd: 1 ulp)
  double tiny;       // absolute error of a step below the format's normal range
};

double RoundF16(float x) { return simd::F32FromF16(simd::F16FromF32(x)); }
double RoundBf16(float x) { return simd::F32FromBf16(simd::Bf16FromF32(x)); }

// fp16: 8 steps of half an ulp (2^-11 of the partial sum) and 2^-25 below 2^-14; bf16: every
// addition one fp32 ulp (2^-23).
const Variant kVariants[] = {
    {"f16kv_f16fma_6x8", simd::KvType::kF16, &RoundF16, 1.0 / 2048, 8.0 / 2048, 0.0,
     1.0 / (1 << 25)},
    {"bf16kv_bf16dot_6x8", simd::KvType::kBf16, &RoundBf16, 1.0 / 512, 0.0, 2 * kFloatEps, 0.0},
};

// Where the kernels are compiled (attention_arm_half-inl.h).
#if (EDGEATTN_TARGET_IS_NEON || EDGEATTN_TARGET_IS_SVE) && HWY_COMPILER_GCC_ACTUAL && \
    defined(__linux__)
constexpr bool kF16Compiled = true, kBf16Compiled = true;
#elif EDGEATTN_TARGET_IS_NEON || EDGEATTN_TARGET_IS_SVE
#ifdef __ARM_FEATURE_FP16_VECTOR_ARITHMETIC
constexpr bool kF16Compiled = true;
#else
constexpr bool kF16Compiled = false;
#endif
#ifdef __ARM_FEATURE_BF16_VECTOR_ARITHMETIC
constexpr bool kBf16Compiled = true;
#else
constexpr bool kBf16Compiled = false;
#endif
#else
constexpr bool kF16Compiled = false, kBf16Compiled = false;
#endif

// Whether the target under test lists the kernel on this CPU.
bool Expected(const Variant& v) {
  return v.kv == simd::KvType::kF16 ? kF16Compiled && simd::CpuHasArmFp16Arithmetic()
                                    : kBf16Compiled && simd::CpuHasArmBf16();
}

void ForEachVariant(void (*check)(const Variant&, const simd::AttentionKernel&)) {
  for (const Variant& v : kVariants) {
    const simd::AttentionKernel* kernel = simd::FindAttentionKernel(v.kv, v.name);
    if (kernel == nullptr) continue;
    SCOPED_TRACE(v.name);
    check(v, *kernel);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

struct Case {
  size_t lq = 1, lk = 1, dk = 1;
  bool exact = false;  // data in {-1, 0, 1}, integer base-2 scores
  bool causal = false;
  size_t offset = 0, window = 0;
  size_t ring = 0, ring_last = 0;  // ring > 0: keys are a ring of lk slots
  bool additive = false;           // N(0, 1) (exact: 0) with -inf holes, row 2 all -inf
  size_t key_length = 0;           // > 0: keys from key_length on are padding
  float softcap = 0.0f;
  float sink = -HUGE_VALF;
  bool weights = false;
  std::vector<size_t> cuts;  // row splits between kernel calls
  uint32_t seed = 1;
};

// The scale whose product with log2(e) is 1 in float.
float UnitScale() {
  float scale = 1.0f / kLog2e;
  while (scale * kLog2e != 1.0f) scale = std::nextafter(scale, scale * kLog2e < 1.0f ? 1.0f : 0.0f);
  return scale;
}

struct Head {
  const simd::AttentionKernel& kernel;
  Case c;
  size_t ld;  // row stride of q, k, v and out, wider than dk
  float scale;
  std::vector<float> q, k, v, additive, key_bias;
  hwy::AlignedFreeUniquePtr<uint8_t[]> keys, values;
  hwy::AlignedFreeUniquePtr<float[]> scratch;

  Head(const simd::AttentionKernel& kernel_, const Case& c_)
      : kernel(kernel_), c(c_), ld(c_.dk + 3) {
    scale = c.exact ? UnitScale() : 1.0f / std::sqrt(float(c.dk));
    q = Data(c.lq * ld, c.seed);
    k = Data(c.lk * ld, c.seed + 1);
    v = RandomNormal(c.lk * ld, c.seed + 2);
    if (c.additive) {
      additive = RandomNormal(c.lq * (c.lk + 1), c.seed + 3);
      for (size_t i = 0; i < additive.size(); ++i) {
        if (c.exact) additive[i] = 0.0f;
        if (i % 7 == 3 || i / (c.lk + 1) == 2) additive[i] = -HUGE_VALF;
      }
    }
    if (c.key_length > 0) {
      key_bias.assign(c.lk, 0.0f);
      std::fill(key_bias.begin() + c.key_length, key_bias.end(), -HUGE_VALF);
    }
    keys = hwy::AllocateAligned<uint8_t>(kernel.keys_bytes(c.lk, c.dk));
    values = hwy::AllocateAligned<uint8_t>(kernel.values_bytes(c.lk, c.dk));
    scratch = hwy::AllocateAligned<float>(kernel.scratch_floats(c.dk));
  }

  std::vector<float> Data(size_t n, uint32_t seed) const {
    if (!c.exact) return RandomNormal(n, seed);
    TestRandom rng(seed);
    std::vector<float> x(n);
    for (float& f : x) f = float(int(rng.Next() % 3) - 1);
    return x;
  }

  simd::AttentionHeadArgs Args(float* out, float* weights) const {
    simd::AttentionHeadArgs a{q.data(), ld, keys.get(), values.get(), c.lk, c.dk, scale, out, ld};
    a.mask.causal = c.causal;
    a.mask.causal_offset = c.offset;
    a.mask.window = c.window;
    a.mask.ring = c.ring;
    a.mask.ring_last = c.ring_last;
    if (c.additive) {
      a.mask.additive = additive.data();
      a.mask.ld_additive = c.lk + 1;
    }
    if (c.key_length > 0) a.mask.key_bias = key_bias.data();
    a.softcap = c.softcap;
    a.sink = c.sink;
    a.weights = weights;
    a.ldw = c.lk + 2;
    return a;
  }

  // Packs in pieces, as a KV cache appends, over all-ones bytes (NaN in both formats), then
  // runs the rows split at cuts.
  void Run(const simd::AttentionHeadArgs& args, const std::vector<size_t>& cuts) {
    std::fill_n(keys.get(), kernel.keys_bytes(c.lk, c.dk), 0xFF);
    std::fill_n(values.get(), kernel.values_bytes(c.lk, c.dk), 0xFF);
    for (size_t first = 0; first < c.lk;) {
      const size_t count = std::min(c.lk - first, first % 2 == 0 ? size_t{37} : size_t{1});
      kernel.pack(k.data() + first * ld, ld, v.data() + first * ld, ld, first, count,
                  first + count, c.dk, keys.get(), values.get());
      first += count;
    }
    size_t begin = 0;
    for (size_t end : cuts) {
      kernel.run(args, begin, end, scratch.get());
      begin = end;
    }
    kernel.run(args, begin, c.lq, scratch.get());
  }

  bool Sees(size_t i, size_t j) const {
    const size_t row = i + c.offset;
    const size_t key = c.ring == 0 ? j : j + (c.ring_last - j) / c.lk * c.lk;
    if (c.causal && key > row) return false;
    return c.window == 0 || (key <= row ? row - key : key - row) < c.window;
  }
};

// Row i of the model: 2^(s_j - max) of the rounded data's base-2 scores with the masks, their
// sum with the sink's term, and the scores' error bound.
struct ModelRow {
  std::vector<double> p;
  double sum = 0.0;
  double score_err = 0.0;
};

ModelRow Model(const Variant& var, const Head& h, size_t i) {
  const Case& c = h.c;
  const float unit = h.scale * kLog2e;
  std::vector<double> q(c.dk);
  for (size_t ch = 0; ch < c.dk; ++ch) q[ch] = var.round(h.q[i * h.ld + ch] * unit);
  ModelRow row;
  row.p.assign(c.lk, kNegInf);
  double max = c.sink * double(kLog2e);
  for (size_t j = 0; j < c.lk; ++j) {
    double dot = 0.0, abs_dot = 0.0;
    for (size_t ch = 0; ch < c.dk; ++ch) {
      const double t = q[ch] * var.round(h.k[j * h.ld + ch]);
      dot += t;
      abs_dot += std::fabs(t);
    }
    if (c.softcap > 0.0f) {
      const double cap = c.softcap * double(kLog2e);
      dot = cap * std::tanh(dot / cap);
    }
    if (c.additive) dot += h.additive[i * (c.lk + 1) + j] * double(kLog2e);
    if (c.key_length > 0) dot += h.key_bias[j];
    if (!h.Sees(i, j)) dot = kNegInf;
    // Integer data sums exactly in both formats; else the chunks' steps, then fp32 additions,
    // the masks' additions and a few ulp of softcap.
    const double steps =
        c.exact ? 0.0 : (var.chunk_err + c.dk * var.add_err) * abs_dot + c.dk * var.tiny;
    row.score_err = std::max(row.score_err, steps + ((c.dk + 4) * abs_dot + 16.0) * kFloatEps);
    row.p[j] = dot;
    max = std::max(max, dot);
  }
  if (max == kNegInf) {
    std::fill(row.p.begin(), row.p.end(), 0.0);
    return row;
  }
  row.sum = c.sink == -HUGE_VALF ? 0.0 : std::exp2(c.sink * double(kLog2e) - max);
  for (double& x : row.p) row.sum += (x = std::exp2(x - max));
  return row;
}

// Checks one output row against the model: probabilities rounded to the format (relative
// unit, absolute tiny) and summed in the kernel's chunks with the values.
void CheckRow(const Variant& var, const Head& h, size_t i, const ModelRow& m, const float* out) {
  const Case& c = h.c;
  const double p_err = var.unit + var.chunk_err + c.lk * var.add_err +
                       2.0 * std::log(2.0) * m.score_err +
                       (c.lk + c.dk + 16) * kFloatEps;
  for (size_t ch = 0; ch < h.ld; ++ch) {
    if (ch >= c.dk) {
      ASSERT_EQ(out[ch], -3.0f) << "wrote outside the head's columns";
      continue;
    }
    if (m.sum == 0.0) {
      ASSERT_EQ(out[ch], 0.0f) << "fully masked row " << i;
      continue;
    }
    double want = 0.0, abs_want = 0.0, abs_values = 0.0;
    for (size_t j = 0; j < c.lk; ++j) {
      const double value = var.round(h.v[j * h.ld + ch]);
      want += m.p[j] * value;
      abs_want += m.p[j] * std::fabs(value);
      if (m.p[j] != 0.0) abs_values += std::fabs(value);
    }
    const double tol = (2.0 * abs_want * p_err + 2.0 * var.tiny * abs_values) / m.sum + 1e-30;
    ASSERT_NEAR(out[ch], want / m.sum, tol) << "lq=" << c.lq << " lk=" << c.lk << " dk=" << c.dk
                                            << " exact=" << c.exact << " row " << i << " col " << ch;
  }
}

// Runs the case and checks outputs and weights; a second run in one call, without weights,
// gives the same bits.
void CheckCase(const Variant& var, const simd::AttentionKernel& kernel, const Case& c) {
  Head h(kernel, c);
  const size_t ldw = c.lk + 2;
  std::vector<float> out(c.lq * h.ld, -3.0f), weights(c.lq * ldw, -3.0f);
  h.Run(h.Args(out.data(), c.weights ? weights.data() : nullptr), c.cuts);
  for (size_t i = 0; i < c.lq; ++i) {
    const ModelRow m = Model(var, h, i);
    CheckRow(var, h, i, m, out.data() + i * h.ld);
    if (::testing::Test::HasFatalFailure() || !c.weights) return;
    for (size_t j = 0; j < ldw; ++j) {
      const float got = weights[i * ldw + j];
      const double want = j >= c.lk ? -3.0 : m.sum == 0.0 ? 0.0 : m.p[j] / m.sum;
      ASSERT_NEAR(got, want, 4.0 * m.score_err * std::fabs(want) + 4 * kFloatEps)
          << "lq=" << c.lq << " lk=" << c.lk << " dk=" << c.dk << " weight " << i << "," << j;
    }
  }
  std::vector<float> whole(out.size(), -3.0f);
  h.Run(h.Args(whole.data(), nullptr), {});
  ASSERT_EQ(0, std::memcmp(whole.data(), out.data(), out.size() * sizeof(float)))
      << "a split of the rows or weights changed the output";
}

// Listed exactly where the build compiles the kernel and the CPU has the instructions, after
// the widening kernel of the same storage.
void TestArmHalfListed() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  for (const Variant& v : kVariants) {
    const simd::AttentionKernel* kernel = simd::FindAttentionKernel(v.kv, v.name);
    ASSERT_EQ(kernel != nullptr, Expected(v)) << v.name;
    if (kernel == nullptr) continue;
    EXPECT_EQ(kernel->kv, v.kv);
    EXPECT_NE(simd::AttentionKernels(v.kv).front(), kernel) << v.name;
  }
}

// Rows across blocks of 6 (one register tile) and their tails (5, 1), keys across 8-key tiles,
// 64-key panels and 256-key tiles, dk across the 8-channel chunks and blocks (odd: a lone last
// channel pair); causal or not, alternately exact, with weights and split rows.
void CheckSizes(const Variant& var, const simd::AttentionKernel& kernel) {
  uint32_t seed = 100;
  for (size_t dk : {1, 3, 8, 17, 64}) {
    for (size_t lk : {1, 17, 63, 129, 300}) {
      for (size_t lq : {1, 5, 13}) {
        Case c;
        c.lq = lq;
        c.lk = lk;
        c.dk = dk;
        c.seed = seed += 3;
        c.exact = seed % 2 == 0;
        c.causal = seed % 3 != 0;
        c.offset = lk > lq ? lk - lq : 0;
        c.weights = seed % 4 < 2;
        if (lq > 2) c.cuts = {1, lq / 2};
        CheckCase(var, kernel, c);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// The masks, softcap and sink reach these kernels through the shared online softmax: one case
// each, on a tile edge, with weights.
void CheckMasks(const Variant& var, const simd::AttentionKernel& kernel) {
  uint32_t seed = 5000;
  for (int variant = 0; variant < 5; ++variant) {
    Case c;
    c.lq = 9;
    c.lk = 300;
    c.dk = 17;
    c.seed = seed += 3;
    c.exact = variant % 2 == 0;
    c.weights = true;
    c.cuts = {3};
    switch (variant) {
      case 0:
        c.additive = true;
        c.key_length = 151;
        break;
      case 1:
        c.causal = true;
        c.window = 101;
        c.softcap = 1.5f;
        c.sink = 0.7f;
        c.offset = 270;
        break;
      case 2:
        c.causal = true;
        c.ring = c.lk;
        c.ring_last = 3 * c.lk + 150;
        c.offset = c.ring_last + 1 - c.lq;
        break;
      case 3:
        c.window = 5;  // two-sided
        c.offset = 200;
        break;
      default:
        c.causal = true;  // rows before the first key see nothing: zeros
        c.additive = true;
        c.softcap = 2.0f;
        break;
    }
    CheckCase(var, kernel, c);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// A NaN query or a +inf score makes the row NaN, a -inf score only removes its key.
void CheckNonFinite(const Variant& /*var*/, const simd::AttentionKernel& kernel) {
  Case c;
  c.lq = 4;
  c.lk = 70;
  c.dk = 17;
  c.seed = 77;
  Head h(kernel, c);
  h.q[1 * h.ld + 3] = NAN;               // row 1: every score NaN
  h.k[(c.lk - 1) * h.ld + 2] = HUGE_VALF;  // +-inf scores
  h.q[2 * h.ld + 2] = 0.0f;              // row 2: 0 * inf = NaN
  std::vector<float> out(c.lq * h.ld);
  h.Run(h.Args(out.data(), nullptr), {});
  for (size_t ch = 0; ch < c.dk; ++ch) {
    EXPECT_TRUE(std::isnan(out[1 * h.ld + ch]));
    EXPECT_TRUE(std::isnan(out[2 * h.ld + ch]));
    for (size_t row : {size_t{0}, size_t{3}}) {
      EXPECT_EQ(std::isnan(out[row * h.ld + ch]), h.q[row * h.ld + 2] > 0) << "row " << row;
    }
  }
}

// The bound against float attention on the unrounded data (double precision): cosine
// >= 0.9999 on N(0, 1) data, >= 0.999 with outlier channels (6 channels of Q, K and V x20).
double CosineToFloat(const simd::AttentionKernel& kernel, bool outliers) {
  Case c;
  c.lq = 64;
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
  std::vector<double> p(c.lk);
  for (size_t i = 0; i < c.lq; ++i) {
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

void CheckAccuracyBound(const Variant& /*var*/, const simd::AttentionKernel& kernel) {
  const double normal = CosineToFloat(kernel, false), outliers = CosineToFloat(kernel, true);
  std::cout << std::setprecision(7) << kernel.name << " on " << hwy::TargetName(HWY_TARGET)
            << ": cosine vs float attention " << normal << " (normal), " << outliers
            << " (outliers)\n";
  EXPECT_GE(normal, 0.9999);
  EXPECT_GE(outliers, 0.999);
}

void TestArmHalfSizes() { ForEachVariant(CheckSizes); }
void TestArmHalfMasks() { ForEachVariant(CheckMasks); }
void TestArmHalfNonFinite() { ForEachVariant(CheckNonFinite); }
void TestArmHalfAccuracyBound() { ForEachVariant(CheckAccuracyBound); }

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {
HWY_BEFORE_TEST(AttentionArmHalfTest);
HWY_EXPORT_AND_TEST_P(AttentionArmHalfTest, TestArmHalfListed);
HWY_EXPORT_AND_TEST_P(AttentionArmHalfTest, TestArmHalfSizes);
HWY_EXPORT_AND_TEST_P(AttentionArmHalfTest, TestArmHalfMasks);
HWY_EXPORT_AND_TEST_P(AttentionArmHalfTest, TestArmHalfNonFinite);
HWY_EXPORT_AND_TEST_P(AttentionArmHalfTest, TestArmHalfAccuracyBound);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionArmHalfTest);
}  // namespace edgeattn
#endif
