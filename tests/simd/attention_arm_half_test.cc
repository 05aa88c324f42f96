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
#include "simd/attention_arm_half.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "simd/attention.h"
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
using testing_support::RoundF16;
using testing_support::RowBounds;
using testing_support::TargetFacts;

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

// fp16: 8 steps of half an ulp (2^-11 of the partial sum) and 2^-25 below 2^-14; bf16: every
// addition one fp32 ulp (2^-23).
const Variant kVariants[] = {
    {"f16kv_f16fma_6x8", simd::KvType::kF16, &RoundF16, 1.0 / 2048, 8.0 / 2048, 0.0,
     1.0 / (1 << 25)},
    {"bf16kv_bf16dot_6x8", simd::KvType::kBf16, &RoundBf16, 1.0 / 512, 0.0, 2 * kFloatEps, 0.0},
};

// Whether the target under test lists the kernel on this CPU.
bool Expected(const TargetFacts& facts, const Variant& v) {
  return v.kv == simd::KvType::kF16
             ? facts.arm_f16_attention_compiled && simd::CpuHasArmFp16Arithmetic()
             : facts.arm_bf16_attention_compiled && simd::CpuHasArmBf16();
}

template <class Check>
void ForEachVariant(const Check& check) {
  for (const Variant& v : kVariants) {
    const simd::AttentionKernel* kernel = simd::FindAttentionKernel(v.kv, v.name);
    if (kernel == nullptr) continue;
    SCOPED_TRACE(v.name);
    check(v, *kernel);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Rows at a stride of dk + 3; keys appended 37 at a time from even indices, else one: pieces
// that end off the kernels' 8-key tiles.
const HeadLayout kLayout{3, {2, 37}};

// The query row scaled in fp32 and rounded as the keys and values are; scores within the
// variant's chunk and addition errors.
CoreModel Model(const Variant& var) {
  CoreModel model;
  model.layout = kLayout;
  model.round_query = var.round;
  model.round_kv = var.round;
  // Integer data sums exactly in both formats; else the chunks' steps, then fp32 additions,
  // the masks' additions and a few ulp of softcap.
  model.score_err = [var](const CoreCase& c, double abs_dot) {
    const double steps =
        c.exact ? 0.0 : (var.chunk_err + c.dk * var.add_err) * abs_dot + c.dk * var.tiny;
    return steps + ((c.dk + 4) * abs_dot + 16.0) * kFloatEps;
  };
  // Probabilities rounded to the format (relative unit, absolute tiny) and summed in the
  // kernel's chunks with the values.
  model.bounds = [var](const CoreCase& c, const ReferenceRow& m) {
    RowBounds b;
    b.p_err = var.unit + var.chunk_err + c.lk * var.add_err + 2.0 * std::log(2.0) * m.score_err +
              (c.lk + c.dk + 16) * kFloatEps;
    b.value_tiny = var.tiny;
    b.weight_rel = 4.0 * m.score_err;
    b.weight_abs = 4 * kFloatEps;
    return b;
  };
  return model;
}

void CheckCase(const Variant& var, const simd::AttentionKernel& kernel, const CoreCase& c) {
  testing_support::CheckCase(Model(var), kernel, c);
}

// Listed exactly where the build compiles the kernel and the CPU has the instructions, after
// the widening kernel of the same storage.
void TestArmHalfListed(int64_t target) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  const TargetFacts facts = testing_support::FactsOf(target);
  for (const Variant& v : kVariants) {
    const simd::AttentionKernel* kernel = simd::FindAttentionKernel(v.kv, v.name);
    ASSERT_EQ(kernel != nullptr, Expected(facts, v)) << v.name;
    if (kernel == nullptr) continue;
    EXPECT_EQ(kernel->kv, v.kv);
    EXPECT_NE(simd::AttentionKernels(v.kv).front(), kernel) << v.name;
  }
}

// Rows across blocks of 6 (one register tile) and their tails (5, 1), keys across 8-key tiles,
// 64-key panels and 256-key tiles, dk across the 8-channel chunks and blocks (odd: a lone last
// channel pair); causal or not, alternately exact, with weights and split rows.
void CheckSizes(const Variant& var, const simd::AttentionKernel& kernel) {
  ForEachSize({1, 3, 8, 17, 64}, {1, 17, 63, 129, 300}, {1, 5, 13}, SIZE_MAX, 100,
              [&](CoreCase& c) {
                c.exact = c.seed % 2 == 0;
                c.weights = c.seed % 4 < 2;
                CheckCase(var, kernel, c);
              });
}

// The masks, softcap and sink reach these kernels through the shared online softmax: one case
// each, on a tile edge, with weights.
void CheckMasks(const Variant& var, const simd::AttentionKernel& kernel) {
  uint32_t seed = 5000;
  for (int variant = 0; variant < 5; ++variant) {
    CoreCase c = MakeCase(9, 300, 17, seed += 3);
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

void CheckNonFinite(const Variant& /*var*/, const simd::AttentionKernel& kernel) {
  testing_support::CheckNonFinite(kernel, 70, 17, 77, kLayout);
}

// An infinity just past what a tile may read stays out of it (0 x inf is NaN): Q K^T's last,
// partial channel step reads no key row past dk (in the key panels, the next panel's channel 0:
// key 64 here), P V's no value row past the block's last visible key (offset + 3). dk from 1 to
// 9 and that key count from 104 to 112 end the steps at every lane of a pair and of an 8-lane
// chunk. The queries' channel 0 is negative: key 64 scores -inf, which only removes it.
void CheckNeighbourInfinity(const Variant& /*var*/, const simd::AttentionKernel& kernel) {
  for (size_t dk = 1; dk <= 9; ++dk) {
    CoreCase c = MakeCase(3, 128, dk, 6000 + dk);
    c.causal = true;
    c.offset = 100 + dk;
    CoreHead h(kernel, c, kLayout);
    for (size_t i = 0; i < h.lq; ++i) h.q[i * h.ld] = -1.0f - std::fabs(h.q[i * h.ld]);
    h.k[64 * h.ld] = HUGE_VALF;
    h.v[(c.offset + 3) * h.ld] = HUGE_VALF;  // the first key no row sees
    std::vector<float> out(h.lq * h.ld);
    h.Run(h.Args(out.data(), nullptr), {});
    for (size_t i = 0; i < h.lq; ++i) {
      for (size_t ch = 0; ch < dk; ++ch) {
        ASSERT_TRUE(std::isfinite(out[i * h.ld + ch]))
            << "dk " << dk << " row " << i << " ch " << ch;
      }
    }
  }
}

void TestArmHalfAccuracyBound(int64_t target) {
  const char* target_name = hwy::TargetName(target);
  ForEachVariant([target_name](const Variant& /*var*/, const simd::AttentionKernel& kernel) {
    testing_support::CheckAccuracyBound(kernel, 64, kLayout, target_name);
  });
}

}  // namespace

// An instance per target; the bodies, compiled once, reach its kernels by dynamic dispatch.
HWY_BEFORE_TEST(AttentionArmHalfTest);
TEST_P(AttentionArmHalfTest, TestArmHalfListed) { TestArmHalfListed(GetParam()); }
TEST_P(AttentionArmHalfTest, TestArmHalfSizes) { ForEachVariant(CheckSizes); }
TEST_P(AttentionArmHalfTest, TestArmHalfMasks) { ForEachVariant(CheckMasks); }
TEST_P(AttentionArmHalfTest, TestArmHalfNonFinite) { ForEachVariant(CheckNonFinite); }
TEST_P(AttentionArmHalfTest, TestArmHalfNeighbourInfinity) {
  ForEachVariant(CheckNeighbourInfinity);
}
TEST_P(AttentionArmHalfTest, TestArmHalfAccuracyBound) { TestArmHalfAccuracyBound(GetParam()); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionArmHalfTest);
}  // namespace edgeattn
