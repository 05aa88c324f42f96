// The bf16 dot-product attention cores (bf16kv_bf16dot_6x4v on vdpbf16ps, bf16kv_bf16amx_16x64
// on AMX tiles) on every compiled target that lists them, against a scalar model of its rounding
// (simd/attention_bf16dot.h): the query row scaled in fp32 and rounded to bf16, keys and values
// rounded to bf16, then softmax and P V in double precision, within a bound derived from the
// kernel's fp32 sums and its bf16 probabilities. Integer data whose base-2 scores are exact
// integers makes every probability a power of two, which bf16 holds exactly: those cases are
// checked to the fp32 sums' bound alone, tight enough to see one key too many or too few. Then the
// issue's accuracy bound against float attention on the unrounded data.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/attention_bf16dot_test.cc"
#include "hwy/aligned_allocator.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/attention.h"
#include "simd/attention_bf16dot.h"
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
using testing_support::TestRandom;

constexpr const char* kNames[] = {"bf16kv_bf16dot_6x4v", "bf16kv_bf16amx_16x64"};
constexpr float kLog2e = 1.44269504088896340736f;
// Unit roundoff of bf16 (8 significant bits).
constexpr double kBf16Eps = 1.0 / (1 << 9);
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Whether the target under test lists the kernel on this CPU.
bool Expected(const char* name) {
  if (!EDGEATTN_TARGET_HAS_AVX512) return false;
  if (std::strcmp(name, "bf16kv_bf16dot_6x4v") == 0) return simd::CpuHasAvx512Bf16();
  return HWY_ARCH_X86_64 && simd::CpuRunsAmxBf16();
}

// Runs check on every kernel of kNames the target under test lists.
void ForEachKernel(void (*check)(const simd::AttentionKernel&)) {
  for (const char* name : kNames) {
    const simd::AttentionKernel* kernel = simd::FindAttentionKernel(simd::KvType::kBf16, name);
    if (kernel == nullptr) continue;
    SCOPED_TRACE(name);
    check(*kernel);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

double RoundBf16(float x) { return simd::F32FromBf16(simd::Bf16FromF32(x)); }

// vcvtneps2bf16: nearest even, and fp32 subnormals to zero.
double RoundBf16Ftz(float x) {
  return std::fabs(x) < std::numeric_limits<float>::min() ? 0.0 : RoundBf16(x);
}

// What a case masks and adds, and its data.
struct Case {
  size_t lq = 1, lk = 1, dk = 1;
  bool exact = false;  // integer data, integer base-2 scores
  bool causal = false;
  size_t offset = 0;
  size_t window = 0;
  size_t ring = 0;  // > 0: keys are a ring of lk slots, the last at position ring_last
  size_t ring_last = 0;
  bool additive = false;  // N(0, 1) (exact: 0) with -inf holes, row 2 all -inf
  size_t key_length = 0;  // > 0: keys from key_length on are padding (key bias -inf)
  float softcap = 0.0f;
  float sink = -HUGE_VALF;
  bool weights = false;
  std::vector<size_t> cuts;  // row splits between kernel calls
  uint32_t seed = 1;
};

// The scale whose product with log2(e) is 1 in float: exact cases score in whole base-2 units.
float UnitScale() {
  float scale = 1.0f / kLog2e;
  for (int i = 0; i < 16 && scale * kLog2e != 1.0f; ++i) {
    scale = std::nextafter(scale, scale * kLog2e < 1.0f ? 1.0f : 0.0f);
  }
  return scale;
}

struct Head {
  const simd::AttentionKernel& kernel;
  Case c;
  size_t ld;  // row stride of q, k, v and out: wider than dk, as a head's slice
  float scale;
  std::vector<float> q, k, v, additive, key_bias;
  hwy::AlignedFreeUniquePtr<uint8_t[]> keys, values;
  hwy::AlignedFreeUniquePtr<float[]> scratch;

  Head(const simd::AttentionKernel& kernel_, const Case& c_)
      : kernel(kernel_), c(c_), ld(c_.dk + 5) {
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
      for (size_t j = c.key_length; j < c.lk; ++j) key_bias[j] = -HUGE_VALF;
    }
    keys = hwy::AllocateAligned<uint8_t>(kernel.keys_bytes(c.lk, c.dk));
    values = hwy::AllocateAligned<uint8_t>(kernel.values_bytes(c.lk, c.dk));
    scratch = hwy::AllocateAligned<float>(kernel.scratch_floats(c.dk));
  }

  // Exact cases: -1, 0 and 1 (queries and keys), so that bf16 holds them and fp32 sums their
  // products exactly.
  std::vector<float> Data(size_t n, uint32_t seed) const {
    if (!c.exact) return RandomNormal(n, seed);
    TestRandom rng(seed);
    std::vector<float> x(n);
    for (float& f : x) f = float(int(rng.Next() % 3) - 1);
    return x;
  }

  simd::AttentionHeadArgs Args(float* out, float* weights) const {
    simd::AttentionHeadArgs args{q.data(), ld,  keys.get(), values.get(), c.lk, c.dk,
                                 scale,    out, ld};
    args.mask.causal = c.causal;
    args.mask.causal_offset = c.offset;
    args.mask.window = c.window;
    args.mask.ring = c.ring;
    args.mask.ring_last = c.ring_last;
    if (c.additive) {
      args.mask.additive = additive.data();
      args.mask.ld_additive = c.lk + 1;
    }
    if (c.key_length > 0) args.mask.key_bias = key_bias.data();
    args.softcap = c.softcap;
    args.sink = c.sink;
    args.weights = weights;
    args.ldw = c.lk + 2;
    return args;
  }

  // Packs in pieces (as a KV cache appends) into all-ones bytes (NaN as bf16): no stale byte
  // may reach a result.
  void Pack() {
    std::fill_n(keys.get(), kernel.keys_bytes(c.lk, c.dk), 0xFF);
    std::fill_n(values.get(), kernel.values_bytes(c.lk, c.dk), 0xFF);
    for (size_t first = 0; first < c.lk;) {
      const size_t count = std::min(c.lk - first, first % 3 == 0 ? size_t{70} : size_t{1});
      kernel.pack(k.data() + first * ld, ld, v.data() + first * ld, ld, first, count, first + count,
                  c.dk, keys.get(), values.get());
      first += count;
    }
  }

  void Run(const simd::AttentionHeadArgs& args, const std::vector<size_t>& cuts) {
    Pack();
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

// Row i of the model: base-2 scores of the rounded data with the masks, their errors' bound.
struct ModelRow {
  std::vector<double> p;  // 2^(s_j - max), 0 for masked keys
  double sum = 0.0;       // with the sink's term
  double score_err = 0.0;
};

ModelRow Model(const Head& h, size_t i) {
  const Case& c = h.c;
  const float unit = h.scale * kLog2e;
  std::vector<double> q(c.dk);
  for (size_t ch = 0; ch < c.dk; ++ch) q[ch] = RoundBf16Ftz(h.q[i * h.ld + ch] * unit);
  ModelRow row;
  row.p.assign(c.lk, kNegInf);
  double max = c.sink * double(kLog2e);
  for (size_t j = 0; j < c.lk; ++j) {
    double dot = 0.0, abs_dot = 0.0;
    for (size_t ch = 0; ch < c.dk; ++ch) {
      const double t = q[ch] * RoundBf16(h.k[j * h.ld + ch]);
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
    // dk fp32 roundings of the pairs' sums, the masks' additions, a few ulp of softcap.
    row.score_err = std::max(row.score_err, ((c.dk + 4) * abs_dot + 16.0) * kFloatEps);
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

// Runs the case (split at c.cuts) and checks every output and weight against the model; a
// second run without weights in one call gives the same bits.
void CheckCase(const simd::AttentionKernel& kernel, const Case& c) {
  Head h(kernel, c);
  const size_t ldw = c.lk + 2;
  std::vector<float> out(c.lq * h.ld, -3.0f), weights(c.lq * ldw, -3.0f);
  h.Run(h.Args(out.data(), c.weights ? weights.data() : nullptr), c.cuts);
  for (size_t i = 0; i < c.lq; ++i) {
    const ModelRow m = Model(h, i);
    // exp2 and the ratio's sums in fp32; with integer scores (exact data, no softcap or sink)
    // the bf16 probabilities are exact powers of two, elsewhere each is off by up to a bf16
    // rounding, relative.
    const bool exact_p = c.exact && c.softcap == 0.0f && c.sink == -HUGE_VALF;
    const double p_err = (exact_p ? 0.0 : kBf16Eps) + 2.0 * std::log(2.0) * m.score_err;
    const double sum_err = (c.lk + c.dk + 16) * kFloatEps;
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
        const double value = RoundBf16(h.v[j * h.ld + ch]);
        want += m.p[j] * value;
        abs_want += m.p[j] * std::fabs(value);
      }
      const double tol = 2.0 * abs_want / m.sum * (p_err + sum_err) + 1e-30;
      ASSERT_NEAR(got, want / m.sum, tol) << "lq=" << c.lq << " lk=" << c.lk << " dk=" << c.dk
                                          << " exact=" << c.exact << " row " << i << " col " << ch;
    }
    if (!c.weights) continue;
    for (size_t j = 0; j < ldw; ++j) {
      const float got = weights[i * ldw + j];
      if (j >= c.lk) {
        ASSERT_EQ(got, -3.0f) << "wrote outside the row's weights";
        continue;
      }
      const double want = m.sum == 0.0 ? 0.0 : m.p[j] / m.sum;
      ASSERT_NEAR(got, want, 4.0 * m.score_err * want + 4 * kFloatEps)
          << "lq=" << c.lq << " lk=" << c.lk << " dk=" << c.dk << " weight " << i << "," << j;
    }
  }
  std::vector<float> whole(out.size(), -3.0f);
  h.Run(h.Args(whole.data(), nullptr), {});
  ASSERT_EQ(0, std::memcmp(whole.data(), out.data(), out.size() * sizeof(float)))
      << "a split of the rows or weights changed the output";
}

// Each kernel listed exactly where the target has AVX-512 and the CPU the instructions (AMX:
// and the permission to use the tiles); the AMX kernel first of the bf16 kernels, the
// vdpbf16ps one after the widening kernel.
void TestBf16DotListed() {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(HWY_TARGET));
  const std::vector<const simd::AttentionKernel*> kernels =
      simd::AttentionKernels(simd::KvType::kBf16);
  for (const char* name : kNames) {
    const simd::AttentionKernel* kernel = simd::FindAttentionKernel(simd::KvType::kBf16, name);
    ASSERT_EQ(kernel != nullptr, Expected(name)) << name;
    if (kernel == nullptr) continue;
    EXPECT_EQ(kernel->kv, simd::KvType::kBf16);
    const bool amx = std::strcmp(name, "bf16kv_bf16amx_16x64") == 0;
    EXPECT_EQ(amx, kernels.front() == kernel) << name;
  }
}

// Every size and tail: rows 1 to 300 (blocks of 6 and their remainders), keys across panel
// (64) and tile (256) edges and odd counts (a lone last key in a value pair), dk 1 to 8 (a lone
// last channel), 17, 32, 63, 64, 80, 128; unmasked and causal, alternately exact, with weights.
void CheckSizes(const simd::AttentionKernel& kernel) {
  uint32_t seed = 100;
  for (size_t dk : {1, 2, 3, 4, 5, 6, 7, 8, 17, 32, 63, 64, 80, 128}) {
    for (size_t lk : {1, 3, 17, 63, 129, 300}) {
      for (size_t lq : {1, 3, 17, 63, 129, 300}) {
        if (lq * lk * dk > 3000000) continue;
        Case c;
        c.lq = lq;
        c.lk = lk;
        c.dk = dk;
        c.seed = seed += 3;
        c.exact = seed % 2 == 0;
        c.causal = seed % 3 != 0;
        c.offset = lk > lq ? lk - lq : 0;
        c.weights = seed % 4 < 2;
        if (lq > 2) c.cuts = std::vector<size_t>{1, lq / 2};
        CheckCase(kernel, c);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Masks with the fp32 core's rules: additive (values and -inf holes, a row with every key
// masked), key lengths (whole masked panels and tiles), causal with an offset, sliding windows,
// a ring of slots, softcap and a sink; with weights.
void CheckMasks(const simd::AttentionKernel& kernel) {
  uint32_t seed = 5000;
  for (size_t dk : {3, 17, 64}) {
    for (size_t lk : {1, 17, 129, 300, 513}) {
      for (size_t lq : {1, 9, 33}) {
        for (int variant = 0; variant < 7; ++variant) {
          Case c;
          c.lq = lq;
          c.lk = lk;
          c.dk = dk;
          c.seed = seed += 3;
          c.exact = variant % 2 == 0;
          c.weights = true;
          c.cuts.push_back(lq / 3);
          switch (variant) {
            case 0:
            case 1:
              c.additive = true;
              c.key_length = lk > 2 ? lk / 2 + 1 : 1;
              break;
            case 2:
              c.causal = true;
              c.offset = lk / 2;
              c.key_length = lk > 256 ? 261 : lk;
              break;
            case 3:
              c.causal = true;
              c.window = 1 + lk / 3;
              c.softcap = 1.5f;
              c.sink = 0.7f;
              break;
            case 4:
              c.window = 5;  // two-sided
              c.offset = lk / 4;
              break;
            case 5:
              c.causal = true;
              c.ring = lk;
              c.ring_last = 3 * lk + lk / 2;
              c.offset = c.ring_last + 1 - lq;
              c.sink = 0.2f;
              break;
            default:
              c.causal = true;  // rows before the first key see nothing: zeros
              c.additive = true;
              c.softcap = 2.0f;
              break;
          }
          CheckCase(kernel, c);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// Keys and values past a causal block's last visible key (an odd count of them: a value pair
// half in, half out) and tiles before a window hold NaN without reaching any result.
void CheckSkipsMaskedKeys(const simd::AttentionKernel& kernel) {
  for (size_t lk : {23, 300, 700}) {
    for (size_t window : {size_t{0}, size_t{72}}) {
      Case c;
      c.lq = 21;
      c.lk = lk;
      c.dk = lk == 300 ? 8 : 32;
      c.causal = true;
      c.window = window;
      c.offset = window == 0 ? 0 : lk - c.lq;
      Head h(kernel, c);
      std::vector<float> out(c.lq * h.ld), with_nan(c.lq * h.ld);
      h.Run(h.Args(out.data(), nullptr), {});
      // Never read: keys past the last row's position, and tiles of 256 wholly before the
      // first row's window.
      const size_t first = c.offset + 1 > window ? c.offset + 1 - window : 0;
      const size_t first_tile = window == 0 ? 0 : first / 256 * 256;
      for (size_t j = 0; j < lk; ++j) {
        if (j < first_tile || j >= c.offset + c.lq) h.k[j * h.ld] = h.v[j * h.ld] = NAN;
      }
      h.Run(h.Args(with_nan.data(), nullptr), {});
      ASSERT_EQ(0, std::memcmp(out.data(), with_nan.data(), out.size() * sizeof(float)))
          << "lk=" << lk << " window=" << window;
    }
  }
}

// NaN and infinity as the fp32 core treats them: a NaN query or a +inf score makes the row NaN,
// a -inf score only removes its key.
void CheckNonFinite(const simd::AttentionKernel& kernel) {
  for (size_t lk : {5, 300}) {
    Case c;
    c.lq = 4;
    c.lk = lk;
    c.dk = lk == 5 ? 17 : 32;
    c.seed = 77;
    Head h(kernel, c);
    h.q[1 * h.ld + 3] = NAN;               // row 1: every score NaN
    h.k[(lk - 1) * h.ld + 2] = HUGE_VALF;  // +-inf scores
    h.q[2 * h.ld + 2] = 0.0f;              // row 2: 0 * inf = NaN
    std::vector<float> out(c.lq * h.ld);
    h.Run(h.Args(out.data(), nullptr), {});
    for (size_t ch = 0; ch < c.dk; ++ch) {
      EXPECT_TRUE(std::isnan(out[1 * h.ld + ch]));
      EXPECT_TRUE(std::isnan(out[2 * h.ld + ch]));
      for (size_t row : {size_t{0}, size_t{3}}) {
        const bool plus_inf = h.q[row * h.ld + 2] > 0;
        EXPECT_EQ(std::isnan(out[row * h.ld + ch]), plus_inf) << "row " << row;
      }
    }
  }
}

// The bound against float attention on the unrounded data (double precision): cosine
// >= 0.9999 on N(0, 1) data, >= 0.999 with outlier channels (6 channels of Q, K and V x20).
double CosineToFloat(const simd::AttentionKernel& kernel, bool outliers) {
  Case c;
  c.lq = 300;
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

void CheckAccuracyBound(const simd::AttentionKernel& kernel) {
  const double normal = CosineToFloat(kernel, false), outliers = CosineToFloat(kernel, true);
  std::cout << kernel.name << " cosine vs float attention: " << normal << " (normal), " << outliers
            << " (outliers)\n";
  EXPECT_GE(normal, 0.9999);
  EXPECT_GE(outliers, 0.999);
}

void TestBf16DotSizes() { ForEachKernel(CheckSizes); }
void TestBf16DotMasks() { ForEachKernel(CheckMasks); }
void TestBf16DotSkipsMaskedKeys() { ForEachKernel(CheckSkipsMaskedKeys); }
void TestBf16DotNonFinite() { ForEachKernel(CheckNonFinite); }
void TestBf16DotAccuracyBound() { ForEachKernel(CheckAccuracyBound); }

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {
HWY_BEFORE_TEST(AttentionBf16DotTest);
HWY_EXPORT_AND_TEST_P(AttentionBf16DotTest, TestBf16DotListed);
HWY_EXPORT_AND_TEST_P(AttentionBf16DotTest, TestBf16DotSizes);
HWY_EXPORT_AND_TEST_P(AttentionBf16DotTest, TestBf16DotMasks);
HWY_EXPORT_AND_TEST_P(AttentionBf16DotTest, TestBf16DotSkipsMaskedKeys);
HWY_EXPORT_AND_TEST_P(AttentionBf16DotTest, TestBf16DotNonFinite);
HWY_EXPORT_AND_TEST_P(AttentionBf16DotTest, TestBf16DotAccuracyBound);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionBf16DotTest);
}  // namespace edgeattn
#endif
