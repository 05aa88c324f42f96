// The smmla int8 KV core (i8kv_i8mm_smmla, simd/attention_arm_i8mm.h) on every compiled target
// that lists it: listed exactly where the CPU has i8mm, first of the int8 kernels, and bit for
// bit the portable int8 kernel (i8kv_i8dot_i32, whose rounding attention_kv_test.cc models, as
// it does this kernel's) on odd row counts (a row standing in as its own smmla partner), odd
// channel-group counts (a group paired with zero queries), every key tail, masks and weights.
#include "simd/attention_arm_i8mm.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/attention.h"
#include "simd/cpu_features.h"
#include "simd/targets.h"
#include "tests/simd/target_facts.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::RandomNormal;

constexpr const char* kName = "i8kv_i8mm_smmla";

void TestArmI8mmListed(int64_t target) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  const bool compiled = testing_support::FactsOf(target).arm_i8mm_attention_compiled;
  const simd::AttentionKernel* kernel = simd::FindAttentionKernel(simd::KvType::kI8, kName);
  ASSERT_EQ(kernel != nullptr, compiled && simd::CpuHasArmI8mm() && simd::CpuHasNeonDotProduct());
  if (kernel != nullptr) {
    EXPECT_EQ(simd::AttentionKernels(simd::KvType::kI8).front(), kernel);
  }
}

// out (and weights when asked) of one kernel on q, k, v of stride ld, rows split at `cut`.
std::vector<float> Run(const simd::AttentionKernel& kernel, const std::vector<float>& q,
                       const std::vector<float>& k, const std::vector<float>& v, size_t ld,
                       size_t lq, size_t lk, size_t dk, bool causal, bool weights, size_t cut) {
  auto keys = hwy::AllocateAligned<uint8_t>(kernel.keys_bytes(lk, dk));
  auto values = hwy::AllocateAligned<uint8_t>(kernel.values_bytes(lk, dk));
  auto scratch = hwy::AllocateAligned<float>(kernel.scratch_floats(dk));
  kernel.pack(k.data(), ld, v.data(), ld, 0, lk, lk, dk, keys.get(), values.get());
  std::vector<float> out(lq * ld + lq * lk, -3.0f);
  simd::AttentionHeadArgs args{q.data(), ld,         keys.get(), values.get(), lk, dk,
                               0.3f,     out.data(), ld};
  args.mask.causal = causal;
  args.mask.causal_offset = lk > lq ? lk - lq : 0;
  if (weights) {
    args.weights = out.data() + lq * ld;
    args.ldw = lk;
  }
  kernel.run(args, 0, cut, scratch.get());
  kernel.run(args, cut, lq, scratch.get());
  return out;
}

void TestArmI8mmMatchesPortable() {
  const simd::AttentionKernel* kernel = simd::FindAttentionKernel(simd::KvType::kI8, kName);
  if (kernel == nullptr) return;
  const simd::AttentionKernel& portable =
      *simd::FindAttentionKernel(simd::KvType::kI8, "i8kv_i8dot_i32");
  uint32_t seed = 7;
  for (size_t dk : {1, 3, 5, 8, 17, 64}) {
    for (size_t lk : {1, 17, 63, 129, 300}) {
      for (size_t lq : {1, 3, 6, 13}) {
        const size_t ld = dk + 3;
        const std::vector<float> q = RandomNormal(lq * ld, seed += 3);
        const std::vector<float> k = RandomNormal(lk * ld, seed + 1);
        const std::vector<float> v = RandomNormal(lk * ld, seed + 2);
        const bool causal = seed % 2 == 0, weights = seed % 3 == 0;
        const size_t cut = lq / 2;
        const std::vector<float> want =
            Run(portable, q, k, v, ld, lq, lk, dk, causal, weights, cut);
        const std::vector<float> got = Run(*kernel, q, k, v, ld, lq, lk, dk, causal, weights, cut);
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
            << "dk=" << dk << " lk=" << lk << " lq=" << lq << " causal=" << causal
            << " weights=" << weights;
      }
    }
  }
}

}  // namespace

// An instance per target; the bodies, compiled once, reach its kernels by dynamic dispatch.
HWY_BEFORE_TEST(AttentionArmI8mmTest);
TEST_P(AttentionArmI8mmTest, TestArmI8mmListed) { TestArmI8mmListed(GetParam()); }
TEST_P(AttentionArmI8mmTest, TestArmI8mmMatchesPortable) { TestArmI8mmMatchesPortable(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionArmI8mmTest);
}  // namespace edgeattn
