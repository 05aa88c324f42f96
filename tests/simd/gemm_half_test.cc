// Every half-precision weight kernel of every compiled target, forced one by one, against a
// scalar model of its rounding (simd/gemm_half.h): the widening kernels compute exact products
// of fp32 activations and the widened weights; the bf16 dot-product kernel rounds activations to
// bf16 (nearest even, subnormals to zero) and reads subnormal weights as zero. Odd sizes around
// the tile and panel widths, strided inputs, any split of rows and panels, pack/unpack, and
// NaN, infinite and subnormal weights.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "simd/cpu_features.h"
#include "simd/half_float.h"
#include "simd/projection_kernel.h"
#include "simd/targets.h"
#include "tests/simd/projection_check.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::CheckPackedCase;
using testing_support::ForEachProjectionSize;
using testing_support::RandomNormal;

// The kernels that round activations to bf16: vdpbf16ps and AMX tiles.
bool IsDotKernel(const simd::ProjectionKernel& kernel) {
  const std::string name = kernel.name;
  return name.find("_dpbf16_") != std::string::npos || name.find("_amx_") != std::string::npos;
}

bool IsAmxKernel(const simd::ProjectionKernel& kernel) {
  return std::string(kernel.name).find("_amx_") != std::string::npos;
}

float Widen(simd::WeightType type, uint16_t bits) {
  return type == simd::WeightType::kBf16 ? simd::F32FromBf16(bits) : simd::F32FromF16(bits);
}

uint16_t Narrow(simd::WeightType type, float value) {
  return type == simd::WeightType::kBf16 ? simd::Bf16FromF32(value) : simd::F16FromF32(value);
}

// What the kernel multiplies: the activation and the weight as its contract rounds them.
float ModelActivation(const simd::ProjectionKernel& kernel, float a) {
  if (!IsDotKernel(kernel)) return a;
  return std::fpclassify(a) == FP_SUBNORMAL ? std::copysign(0.0f, a)
                                            : simd::F32FromBf16(simd::Bf16FromF32(a));
}

float ModelWeight(const simd::ProjectionKernel& kernel, uint16_t bits) {
  const float w = Widen(kernel.weights, bits);
  return IsDotKernel(kernel) && std::fpclassify(w) == FP_SUBNORMAL ? std::copysign(0.0f, w) : w;
}

// C = A W^T + bias by the kernel and by the model (simd/gemm_half.h's rounding).
void CheckCase(const simd::ProjectionKernel& kernel, size_t m, size_t n, size_t k, bool with_bias,
               const std::vector<uint16_t>& w, uint32_t seed) {
  CheckPackedCase(kernel, m, n, k, with_bias, w, seed, [&](float a, uint16_t weight) {
    return double(ModelActivation(kernel, a)) * ModelWeight(kernel, weight);
  });
}

std::vector<uint16_t> RoundedWeights(simd::WeightType type, size_t count, uint32_t seed) {
  const std::vector<float> w = RandomNormal(count, seed);
  std::vector<uint16_t> bits(count);
  for (size_t i = 0; i < count; ++i) bits[i] = Narrow(type, w[i]);
  return bits;
}

std::vector<const simd::ProjectionKernel*> HalfKernels() {
  std::vector<const simd::ProjectionKernel*> kernels;
  for (simd::WeightType type : {simd::WeightType::kBf16, simd::WeightType::kF16}) {
    const std::vector<const simd::ProjectionKernel*> listed = simd::ProjectionKernels(type);
    EXPECT_FALSE(listed.empty());
    for (const simd::ProjectionKernel* kernel : listed) {
      EXPECT_EQ(kernel->weights, type) << kernel->name;
      EXPECT_EQ(kernel->activations, simd::ActivationType::kF32) << kernel->name;
      EXPECT_EQ(simd::FindProjectionKernel(type, kernel->name), kernel);
      kernels.push_back(kernel);
    }
  }
  return kernels;
}

void TestHalfKernelsMatchModel(int64_t target) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  const std::vector<const simd::ProjectionKernel*> kernels = HalfKernels();
  // The dot-product kernel is listed exactly where the CPU has AVX512-BF16 and the target is
  // an x86 AVX-512 one; the AMX kernel, first, where it also has AMX-BF16 (x86-64 Linux; it
  // rounds with AVX512-BF16 too).
  bool dot_listed = false, amx_listed = false;
  for (const simd::ProjectionKernel* kernel : kernels) {
    dot_listed |= IsDotKernel(*kernel) && !IsAmxKernel(*kernel);
    amx_listed |= IsAmxKernel(*kernel);
  }
  const bool avx512 = HWY_ARCH_X86 && target <= HWY_AVX3;
  EXPECT_EQ(dot_listed, avx512 && simd::CpuHasAvx512Bf16());
  EXPECT_EQ(amx_listed, avx512 && HWY_ARCH_X86_64 && testing_support::CpuInfoHasFlag("amx_bf16") &&
                            simd::CpuHasAvx512Bf16());
  if (amx_listed) {
    EXPECT_TRUE(IsAmxKernel(*kernels.front()));
  }

  ForEachProjectionSize(
      kernels, {1, 3, 6, 7, 17, 63, 129}, {1, 3, 17, 63, 65, 129}, {1, 2, 3, 17, 63, 129, 257, 600},
      [](const simd::ProjectionKernel& kernel, size_t m, size_t n, size_t k, uint32_t seed) {
        const std::vector<uint16_t> w = RoundedWeights(kernel.weights, n * k, seed + 1);
        CheckCase(kernel, m, n, k, (seed & 1) != 0, w, seed);
      });
}

// NaN and infinite weights make their output column non-finite and leave the others alone;
// subnormal halves are exact for the widening kernels and zero for the dot-product kernel.
void TestHalfKernelsSpecialWeights() {
  const size_t m = 7, n = 70, k = 19;
  for (const simd::ProjectionKernel* kernel : HalfKernels()) {
    const simd::WeightType type = kernel->weights;
    std::vector<uint16_t> w = RoundedWeights(type, n * k, 5);
    const float inf = std::numeric_limits<float>::infinity();
    w[3 * k + 4] = Narrow(type, std::numeric_limits<float>::quiet_NaN());
    w[10 * k + 0] = Narrow(type, inf);
    w[66 * k + 18] = Narrow(type, -inf);
    for (size_t i = 0; i < k; ++i) w[20 * k + i] = static_cast<uint16_t>(1 + i);  // subnormals
    w[21 * k + 2] = 0x8001;  // the smallest negative subnormal
    CheckCase(*kernel, m, n, k, true, w, 9);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Packing writes every byte of packed_bytes, padding included: the operator packs into memory
// it has not cleared, and a NaN in the padding (an odd k's missing partner of a pair) would
// reach the products as 0 * NaN. Each size packs into memory of all ones and of all zeros.
void TestHalfPackingWritesEveryByte() {
  for (const simd::ProjectionKernel* kernel : HalfKernels()) {
    for (size_t n : {1, 63, 65}) {
      for (size_t k : {1, 3, 17, 257}) {
        const std::vector<uint16_t> w = RoundedWeights(kernel->weights, n * k, 7);
        const size_t bytes = kernel->packed_bytes(n, k, 0);
        std::vector<uint8_t> ones(bytes, 0xFF), zeros(bytes, 0x00);
        kernel->pack(w.data(), n, k, 0, ones.data());
        kernel->pack(w.data(), n, k, 0, zeros.data());
        ASSERT_EQ(ones, zeros) << kernel->name << " n=" << n << " k=" << k;
      }
    }
  }
}

// The widening bf16 kernel is listed before the vdpbf16ps one (the first listed is the default):
// measured faster where vdpbf16ps issues on one port (simd/gemm_half-inl.h).
void TestBf16WideningListedBeforeDot() {
  const std::vector<const simd::ProjectionKernel*> kernels =
      simd::ProjectionKernels(simd::WeightType::kBf16);
  size_t widen = kernels.size(), dot = kernels.size();
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string name = kernels[i]->name;
    if (name.find("_widen_") != std::string::npos) widen = std::min(widen, i);
    if (name.find("_dpbf16_") != std::string::npos) dot = std::min(dot, i);
  }
  ASSERT_LT(widen, kernels.size());
  if (dot < kernels.size()) {
    EXPECT_LT(widen, dot);
  }
}

}  // namespace

// An instance per target; the bodies, compiled once, reach its kernels by dynamic dispatch.
HWY_BEFORE_TEST(GemmHalfTest);
TEST_P(GemmHalfTest, TestHalfKernelsMatchModel) { TestHalfKernelsMatchModel(GetParam()); }
TEST_P(GemmHalfTest, TestHalfKernelsSpecialWeights) { TestHalfKernelsSpecialWeights(); }
TEST_P(GemmHalfTest, TestHalfPackingWritesEveryByte) { TestHalfPackingWritesEveryByte(); }
TEST_P(GemmHalfTest, TestBf16WideningListedBeforeDot) { TestBf16WideningListedBeforeDot(); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GemmHalfTest);
}  // namespace edgeattn
