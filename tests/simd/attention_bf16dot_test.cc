// The bf16 dot-product attention cores (bf16kv_bf16dot_6x4v on vdpbf16ps, bf16kv_bf16amx_16x64
// on AMX tiles) on every compiled target that lists them, against a scalar model of its rounding
// (simd/attention_bf16dot.h): the query row scaled in fp32 and rounded to bf16, keys and values
// rounded to bf16, then softmax and P V in double precision, within a bound derived from the
// kernel's fp32 sums and its bf16 probabilities. Integer data whose base-2 scores are exact
// integers makes every probability a power of two, which bf16 holds exactly: those cases are
// checked to the fp32 sums' bound alone, tight enough to see one key too many or too few. Then the
// issue's accuracy bound against float attention on the unrounded data.
#include "simd/attention_bf16dot.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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
using testing_support::MakeCase;
using testing_support::ReferenceRow;
using testing_support::RoundBf16;
using testing_support::RowBounds;

constexpr const char* kNames[] = {"bf16kv_bf16dot_6x4v", "bf16kv_bf16amx_16x64"};
// Unit roundoff of bf16 (8 significant bits).
constexpr double kBf16Eps = 1.0 / (1 << 9);

// Whether the target under test lists the kernel on this CPU.
bool Expected(const testing_support::TargetFacts& facts, const char* name) {
  if (!facts.has_avx512) return false;
  if (std::strcmp(name, "bf16kv_bf16dot_6x4v") == 0) return simd::CpuHasAvx512Bf16();
  return HWY_ARCH_X86_64 && simd::CpuRunsAmxBf16();
}

// Runs check on every kernel of kNames the target under test lists.
template <class Check>
void ForEachKernel(const Check& check) {
  for (const char* name : kNames) {
    const simd::AttentionKernel* kernel = simd::FindAttentionKernel(simd::KvType::kBf16, name);
    if (kernel == nullptr) continue;
    SCOPED_TRACE(name);
    check(*kernel);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// vcvtneps2bf16: nearest even, and fp32 subnormals to zero.
double RoundBf16Ftz(float x) {
  return std::fabs(x) < std::numeric_limits<float>::min() ? 0.0 : RoundBf16(x);
}

// The query row scaled in fp32 and rounded to bf16 (subnormals flushed), keys and values rounded
// to bf16; scores summed in fp32.
CoreModel Model() {
  CoreModel model;
  model.round_query = &RoundBf16Ftz;
  model.round_kv = &RoundBf16;
  // dk fp32 roundings of the pairs' sums, the masks' additions, a few ulp of softcap.
  model.score_err = [](const CoreCase& c, double abs_dot) {
    return ((c.dk + 4) * abs_dot + 16.0) * kFloatEps;
  };
  // exp2 and the ratio's sums in fp32; with integer scores (exact data, no softcap or sink) the
  // bf16 probabilities are exact powers of two, elsewhere each is off by up to a bf16 rounding,
  // relative.
  model.bounds = [](const CoreCase& c, const ReferenceRow& m) {
    const bool exact_p = c.exact && c.softcap == 0.0f && c.sink == -HUGE_VALF;
    RowBounds b;
    b.p_err = (exact_p ? 0.0 : kBf16Eps) + 2.0 * std::log(2.0) * m.score_err +
              (c.lk + c.dk + 16) * kFloatEps;
    b.weight_rel = 4.0 * m.score_err;
    b.weight_abs = 4 * kFloatEps;
    return b;
  };
  return model;
}

void CheckCase(const simd::AttentionKernel& kernel, const CoreCase& c) {
  testing_support::CheckCase(Model(), kernel, c);
}

// Each kernel listed exactly where the target has AVX-512 and the CPU the instructions (AMX:
// and the permission to use the tiles); the AMX kernel first of the bf16 kernels, the
// vdpbf16ps one after the widening kernel.
void TestBf16DotListed(int64_t target) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  const testing_support::TargetFacts facts = testing_support::FactsOf(target);
  const std::vector<const simd::AttentionKernel*> kernels =
      simd::AttentionKernels(simd::KvType::kBf16);
  for (const char* name : kNames) {
    const simd::AttentionKernel* kernel = simd::FindAttentionKernel(simd::KvType::kBf16, name);
    ASSERT_EQ(kernel != nullptr, Expected(facts, name)) << name;
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
  ForEachSize({1, 2, 3, 4, 5, 6, 7, 8, 17, 32, 63, 64, 80, 128}, {1, 3, 17, 63, 129, 300},
              {1, 3, 17, 63, 129, 300}, 3000000, 100, [&](CoreCase& c) {
                c.exact = c.seed % 2 == 0;
                c.weights = c.seed % 4 < 2;
                CheckCase(kernel, c);
              });
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
          CoreCase c = MakeCase(lq, lk, dk, seed += 3);
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
      CoreCase c = MakeCase(21, lk, lk == 300 ? 8 : 32);
      c.causal = true;
      c.window = window;
      c.offset = window == 0 ? 0 : lk - c.lq;
      CoreHead h(kernel, c, HeadLayout());
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

// NaN and infinity as the fp32 core treats them.
void CheckNonFinite(const simd::AttentionKernel& kernel) {
  for (size_t lk : {5, 300}) {
    testing_support::CheckNonFinite(kernel, lk, lk == 5 ? 17 : 32, 77, HeadLayout());
  }
}

void TestBf16DotAccuracyBound(int64_t target) {
  const char* target_name = hwy::TargetName(target);
  ForEachKernel([target_name](const simd::AttentionKernel& kernel) {
    testing_support::CheckAccuracyBound(kernel, 300, HeadLayout(), target_name);
  });
}

}  // namespace

// An instance per target; the bodies, compiled once, reach its kernels by dynamic dispatch.
HWY_BEFORE_TEST(AttentionBf16DotTest);
TEST_P(AttentionBf16DotTest, TestBf16DotListed) { TestBf16DotListed(GetParam()); }
TEST_P(AttentionBf16DotTest, TestBf16DotSizes) { ForEachKernel(CheckSizes); }
TEST_P(AttentionBf16DotTest, TestBf16DotMasks) { ForEachKernel(CheckMasks); }
TEST_P(AttentionBf16DotTest, TestBf16DotSkipsMaskedKeys) { ForEachKernel(CheckSkipsMaskedKeys); }
TEST_P(AttentionBf16DotTest, TestBf16DotNonFinite) { ForEachKernel(CheckNonFinite); }
TEST_P(AttentionBf16DotTest, TestBf16DotAccuracyBound) { TestBf16DotAccuracyBound(GetParam()); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionBf16DotTest);
}  // namespace edgeattn
