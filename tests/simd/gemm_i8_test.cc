// Activation quantization, and every int8 projection kernel the CPU runs on every compiled
// Highway target, forced one by one, against a scalar model of the arithmetic they all perform:
// int32 block sums are exact and the float steps are the same fused operations, so the results
// must match bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "simd/projection_kernel.h"
#include "simd/quantize.h"
#include "simd/targets.h"
#include "tests/simd/packed_weights.h"
#include "tests/simd/target_facts.h"
#include "tests/test_support.h"

#if HWY_ARCH_ARM_A64 && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace edgeattn {
namespace {

using testing_support::RandomNormal;
using testing_support::TargetFacts;

constexpr float kSentinel = -7.0f;

// The float steps as the target performs them: fused where it has FMA (HWY_NATIVE_FMA),
// otherwise a rounded product then a rounded sum.
float MulAddAsTarget(const TargetFacts& facts, float a, float b, float c) {
  return facts.native_fma ? std::fma(a, b, c) : a * b + c;
}

std::vector<int8_t> RandomInt8(size_t n, uint32_t seed, int lo = -127, int hi = 127) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

void TestQuantizeMatchesScalar(int64_t target) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  uint32_t seed = 1;
  for (size_t k : {1, 3, 4, 17, 63, 64, 129, 300}) {
    for (size_t block : {4, 32, 64, 1024}) {
      const size_t rows = 3, ldx = k + 2;
      std::vector<float> x = RandomNormal(rows * ldx, seed++, 3.0f);
      for (size_t i = 0; i < k && i < 8; ++i) x[ldx + i] = 0.0f;  // a zero block in row 1
      const size_t ldq = simd::QuantizedRowStride(k);
      const size_t blocks = simd::QuantBlockCount(k, block);
      std::vector<int8_t> q(rows * ldq, 99);
      std::vector<float> scales(rows * blocks);
      simd::QuantizeRowsI8(x.data(), ldx, rows, k, block, q.data(), scales.data(), {},
                           simd::QuantizedBytes::kSigned);
      // The offset form: every byte (the padding too) is the signed one's plus 128.
      std::vector<int8_t> offset(rows * ldq, 99);
      std::vector<float> offset_scales(rows * blocks);
      simd::QuantizeRowsI8(x.data(), ldx, rows, k, block, offset.data(), offset_scales.data(), {},
                           simd::QuantizedBytes::kOffsetUnsigned);
      ASSERT_EQ(offset_scales, scales);
      for (size_t i = 0; i < q.size(); ++i) {
        ASSERT_EQ(static_cast<int>(static_cast<uint8_t>(offset[i])), q[i] + 128) << "at " << i;
      }
      for (size_t r = 0; r < rows; ++r) {
        for (size_t b = 0; b < blocks; ++b) {
          float amax = 0.0f;
          for (size_t i = b * block; i < std::min(k, (b + 1) * block); ++i) {
            amax = std::max(amax, std::fabs(x[r * ldx + i]));
          }
          const bool usable = amax > 1e-30f;
          ASSERT_EQ(scales[r * blocks + b], usable ? amax / 127.0f : 0.0f);
          const float inv = usable ? 127.0f / amax : 0.0f;
          for (size_t i = b * block; i < std::min(k, (b + 1) * block); ++i) {
            ASSERT_EQ(q[r * ldq + i], static_cast<int8_t>(std::nearbyint(x[r * ldx + i] * inv)))
                << "k=" << k << " block=" << block << " r=" << r << " i=" << i;
          }
        }
        for (size_t i = k; i < ldq; ++i) ASSERT_EQ(q[r * ldq + i], 0);
      }
    }
  }
}

// Non-finite input: a NaN scale for the block holding it, the others' as usual, whether the
// value is in a block's first vector, a middle one or the row's last, partial one (a maximum
// across vectors may drop a NaN: only the finiteness check across them keeps it).
void TestQuantizeNonFiniteBlocks(int64_t /* target */) {
  const size_t k = 129;
  for (size_t block : {size_t{4}, size_t{32}, size_t{96}}) {
    for (size_t at : {size_t{2}, size_t{block / 2 + 17}, k - 1}) {
      for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                        -std::numeric_limits<float>::infinity()}) {
        std::vector<float> x(k, 1.0f);
        x[at] = bad;
        const size_t blocks = simd::QuantBlockCount(k, block);
        std::vector<int8_t> q(simd::QuantizedRowStride(k));
        std::vector<float> scales(blocks);
        simd::QuantizeRowsI8(x.data(), k, 1, k, block, q.data(), scales.data(), {},
                             simd::QuantizedBytes::kSigned);
        for (size_t b = 0; b < blocks; ++b) {
          if (b == at / block) {
            EXPECT_TRUE(std::isnan(scales[b])) << "block " << block << " at " << at;
          } else {
            EXPECT_EQ(scales[b], 1.0f / 127.0f) << "block " << block << " at " << at << " b " << b;
          }
        }
      }
    }
  }
}

// Halfway values round to even, as std::nearbyint does (not away from zero): a block whose
// largest |x| is 127 quantizes with inv = 1, so x itself is what is rounded.
// Ties round to even: nine copies of one pattern, so that AVX-512's whole groups of 64 values
// (QuantizeFourVectors) and the vector loop after them both meet every case.
void TestQuantizeRoundsTiesToEven(int64_t /* target */) {
  const std::vector<float> pattern = {127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 126.5f, -3.5f};
  const std::vector<int8_t> rounded = {127, 0, 2, 2, 0, -2, 126, -4};
  std::vector<float> x;
  std::vector<int8_t> want;
  for (int copy = 0; copy < 9; ++copy) {
    x.insert(x.end(), pattern.begin(), pattern.end());
    want.insert(want.end(), rounded.begin(), rounded.end());
  }
  const size_t k = x.size(), block = 128;
  std::vector<int8_t> q(simd::QuantizedRowStride(k), 99);
  std::vector<float> scales(1);
  simd::QuantizeRowsI8(x.data(), k, 1, k, block, q.data(), scales.data(), {},
                       simd::QuantizedBytes::kSigned);
  EXPECT_EQ(scales[0], 1.0f);
  want.resize(q.size(), 0);  // the row's padding
  EXPECT_EQ(q, want);
}

// Blocks whose largest |x| is at most 1e-30 are stored as zeros with a zero scale (for 1e-37,
// 127 / amax overflows to infinity, which must never reach the bytes); a small block above that
// quantizes as usual.
void TestQuantizeTinyBlocks(int64_t /* target */) {
  const size_t block = 4, k = 12;
  const std::vector<float> x = {1e-37f, -5e-38f, 0.0f, 3e-38f,   // tiny: zeros
                                2e-31f, -1e-31f, 0.0f, 5e-32f,   // below 1e-30: zeros
                                1e-25f, -5e-26f, 0.0f, 2.5e-26f};  // small but usable
  std::vector<int8_t> q(simd::QuantizedRowStride(k), 99);
  std::vector<float> scales(3);
  simd::QuantizeRowsI8(x.data(), k, 1, k, block, q.data(), scales.data(), {},
                       simd::QuantizedBytes::kOffsetUnsigned);
  EXPECT_EQ(scales[0], 0.0f);
  EXPECT_EQ(scales[1], 0.0f);
  EXPECT_EQ(scales[2], 1e-25f / 127.0f);
  const float inv = 127.0f / 1e-25f;
  for (size_t i = 0; i < k; ++i) {
    const int want = i < 8 ? 0 : static_cast<int>(std::nearbyint(x[i] * inv));
    EXPECT_EQ(static_cast<int>(static_cast<uint8_t>(q[i])), want + 128) << "at " << i;
  }
}

// Quantized activation rows as QuantizeRowsI8 leaves them, with their outliers.
struct Qd8Rows {
  size_t m, k, block;
  std::vector<int8_t> q;  // rows QuantizedRowStride(k) apart, zeros past k
  std::vector<float> scales;
  std::vector<uint32_t> count, channel;  // empty: no outliers
  std::vector<float> value;

  Qd8Rows(size_t m_in, size_t k_in, size_t block_in) : m(m_in), k(k_in), block(block_in) {
    q.assign(m * simd::QuantizedRowStride(k), 0);
    scales.assign(m * simd::QuantBlockCount(k, block), 0.0f);
  }
  // Row values from `values` (m x k), scales |N(0, 1)| / 100.
  Qd8Rows(size_t m_in, size_t k_in, size_t block_in, const std::vector<int8_t>& values,
          uint32_t seed)
      : Qd8Rows(m_in, k_in, block_in) {
    for (size_t i = 0; i < m; ++i) {
      std::copy(values.begin() + i * k, values.begin() + (i + 1) * k,
                q.begin() + i * simd::QuantizedRowStride(k));
    }
    scales = RandomNormal(scales.size(), seed);
    for (float& s : scales) s = std::fabs(s) * 0.01f;
  }

  simd::QuantizedRowsView view() const {
    if (count.empty()) return {q.data(), scales.data()};
    return {q.data(), scales.data(), count.data(), channel.data(), value.data()};
  }
};

// The bytes of a's rows as a kernel reading `type` takes them (QuantizedBytesOf).
std::vector<int8_t> StoredBytes(const Qd8Rows& a, simd::ActivationType type) {
  std::vector<int8_t> bytes = a.q;
  if (simd::QuantizedBytesOf(type) == simd::QuantizedBytes::kOffsetUnsigned) {
    for (int8_t& b : bytes) b = static_cast<int8_t>(static_cast<uint8_t>(b) ^ 0x80u);
  }
  return bytes;
}

// Int8 weights with their per-channel scales and optional bias.
struct Qc8Weights {
  size_t n;
  std::vector<int8_t> q;            // n x k
  std::vector<float> scales, bias;  // bias empty: none
};

Qc8Weights MakeWeights(size_t n, std::vector<int8_t> q, bool with_bias) {
  Qc8Weights w{n, std::move(q), std::vector<float>(n), {}};
  for (size_t j = 0; j < n; ++j) w.scales[j] = 0.001f * (1 + j % 7);
  if (with_bias) {
    for (size_t j = 0; j < n; ++j) w.bias.push_back(0.5f - 0.01f * j);
  }
  return w;
}

// The arithmetic of every int8 kernel for c[i][j]: each block's int32 sum scaled by the row's
// block scale into a float sum, then the channel scale and the bias, then each outlier's
// product with the dequantized weight.
float ScalarQc8(const TargetFacts& facts, const Qd8Rows& a, const Qc8Weights& w, size_t i,
                size_t j) {
  const size_t ldq = simd::QuantizedRowStride(a.k);
  const size_t blocks = simd::QuantBlockCount(a.k, a.block);
  float f = 0.0f;
  for (size_t b = 0; b < blocks; ++b) {
    int32_t acc = 0;
    for (size_t x = b * a.block; x < std::min(a.k, (b + 1) * a.block); ++x) {
      acc += int32_t{a.q[i * ldq + x]} * w.q[j * a.k + x];
    }
    f = MulAddAsTarget(facts, static_cast<float>(acc), a.scales[i * blocks + b], f);
  }
  float c = MulAddAsTarget(facts, f, w.scales[j], w.bias.empty() ? 0.0f : w.bias[j]);
  for (uint32_t o = 0; !a.count.empty() && o < a.count[i]; ++o) {
    const size_t slot = i * simd::kMaxOutliersPerRow + o;
    const float dequantized = static_cast<float>(w.q[j * a.k + a.channel[slot]]) * w.scales[j];
    c = MulAddAsTarget(facts, a.value[slot], dequantized, c);
  }
  return c;
}

// The scalar model's C, m x n, on the target with `facts`.
std::vector<float> ScalarC(const TargetFacts& facts, const Qd8Rows& a, const Qc8Weights& w) {
  std::vector<float> c(a.m * w.n);
  for (size_t i = 0; i < a.m; ++i) {
    for (size_t j = 0; j < w.n; ++j) c[i * w.n + j] = ScalarQc8(facts, a, w, i, j);
  }
  return c;
}

// Packs w with `kernel`, checks that unpacking gives it back, runs the kernel on all rows and
// panels into C with a stride wider than n, compares with `want` (ScalarC) bit for bit, then
// checks that a split of rows and panels (as between threads) gives the same bits.
void CheckKernel(const simd::ProjectionKernel& kernel, const Qd8Rows& a, const Qc8Weights& w,
                 const std::vector<float>& want) {
  const size_t m = a.m, n = w.n, k = a.k;
  const testing_support::PackedWeights packed(kernel, w.q.data(), n, k, a.block, w.scales, w.bias);
  std::vector<int8_t> unpacked(n * k);
  kernel.unpack(packed.packed.get(), n, k, a.block, unpacked.data());
  ASSERT_EQ(unpacked, w.q) << kernel.name << ": unpack gives back what was packed";
  const std::vector<int8_t> bytes = StoredBytes(a, kernel.activations);
  simd::ProjectionInput in;
  in.qd8 = a.view();
  in.qd8.q = bytes.data();
  const size_t ldc = n + 3, panels = packed.panels(kernel);
  std::vector<float> c(m * ldc, kSentinel);
  kernel.run(in, 0, m, packed.view, 0, panels, c.data(), ldc);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < ldc; ++j) {
      ASSERT_EQ(c[i * ldc + j], j < n ? want[i * n + j] : kSentinel)
          << kernel.name << " m=" << m << " n=" << n << " k=" << k << " block=" << a.block << " at "
          << i << "," << j << (j >= n ? " (outside C)" : "");
    }
  }
  std::vector<float> split(m * ldc, kSentinel);
  const size_t row_cut = m / 3, panel_cut = panels / 2;
  const size_t row_ranges[2][2] = {{0, row_cut}, {row_cut, m}};
  for (const auto& rows : row_ranges) {
    kernel.run(in, rows[0], rows[1], packed.view, 0, panel_cut, split.data(), ldc);
    kernel.run(in, rows[0], rows[1], packed.view, panel_cut, panels, split.data(), ldc);
  }
  ASSERT_EQ(0, std::memcmp(split.data(), c.data(), c.size() * sizeof(float))) << kernel.name;
}

std::vector<const simd::ProjectionKernel*> Int8Kernels() {
  return simd::ProjectionKernels(simd::WeightType::kQc8);
}

bool CpuHasNeonDotProduct(const TargetFacts& facts) {
  if (facts.arm_dotprod) return true;
#if HWY_ARCH_ARM_A64 && defined(__linux__)
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#else
  return false;
#endif
}

// The kernels this target must list on this CPU, best first, from the target's name and the
// CPU's features: on x86 the VNNI kernel on every AVX-512 target whose CPUs have VNNI (whatever
// Highway calls it) and on AVX3 where the CPU has it (as Linux reports it), ahead of it the AMX
// kernel where the CPU has AMX-INT8 (x86-64 Linux), the AVX-VNNI kernel on AVX2 where the CPU has
// it (x86-64, as Linux reports it), the maddubs kernel on AVX2 and AVX3, on ARM the SVE or (with
// the dot product) NEON kernel, everywhere the portable one.
std::vector<std::string> ExpectedKernels(const TargetFacts& facts) {
  const std::string target = hwy::TargetName(facts.target);
  std::vector<std::string> names;
  for (const char* vnni_target : {"AVX3_DL", "AVX3_ZEN4", "AVX3_SPR", "AVX10_2"}) {
    if (target != vnni_target) continue;
    if (HWY_ARCH_X86_64 && testing_support::CpuInfoHasFlag("amx_int8"))
      names.push_back("qd8_qc8w_amx_16x64");
    names.push_back("qd8_qc8w_vnni_4x4v");
  }
  if (HWY_ARCH_X86 && target == "AVX3" && testing_support::CpuInfoHasFlag("avx512_vnni")) {
    names.push_back("qd8_qc8w_vnni_4x4v");
  }
  if (HWY_ARCH_X86_64 && target == "AVX2" && testing_support::CpuInfoHasFlag("avx_vnni")) {
    names.push_back("qd8_qc8w_avxvnni_3x4v");
  }
  if (HWY_ARCH_X86 && (target == "AVX2" || target == "AVX3")) {
    names.push_back("qd8_qc8w_maddubs_2x4v");
  }
  if (target.rfind("SVE", 0) == 0) names.push_back("qd8_qc8w_svedot_4x4v");
  if (HWY_ARCH_ARM_A64 && target.rfind("NEON", 0) == 0 && CpuHasNeonDotProduct(facts)) {
    names.push_back("qd8_qc8w_neondot_3x4v");
  }
  if (HWY_ARCH_ARM_A64 && target.rfind("NEON", 0) == 0) names.push_back("qd8_qc8w_neonmlal_2x4v");
  names.push_back("qd8_qc8w_i16_1x1v");
  return names;
}

void TestListsTheKernelsThisCpuRuns(int64_t target) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  std::vector<std::string> names;
  for (const simd::ProjectionKernel* kernel : Int8Kernels()) {
    names.push_back(kernel->name);
    // The VNNI and AMX kernels read activations offset to unsigned bytes (vpdpbusd, tdpbusd),
    // the others signed.
    const std::string name = kernel->name;
    const bool unsigned_bytes = name == "qd8_qc8w_vnni_4x4v" || name == "qd8_qc8w_amx_16x64" ||
                                name == "qd8_qc8w_avxvnni_3x4v";
    EXPECT_EQ(kernel->activations,
              unsigned_bytes ? simd::ActivationType::kQdu8 : simd::ActivationType::kQd8)
        << kernel->name;
    EXPECT_EQ(kernel->weights, simd::WeightType::kQc8) << kernel->name;
    EXPECT_TRUE(kernel->cpu_runs()) << kernel->name;
    EXPECT_EQ(simd::FindProjectionKernel(simd::WeightType::kQc8, kernel->name), kernel);
    EXPECT_EQ(simd::FindProjectionKernel(simd::WeightType::kF32, kernel->name), nullptr);
    // Forcing a kernel by name runs its own code.
    for (const simd::ProjectionKernel* other : Int8Kernels()) {
      if (other != kernel) {
        EXPECT_NE(other->run, kernel->run) << kernel->name;
      }
    }
  }
  EXPECT_EQ(names, ExpectedKernels(testing_support::FactsOf(target)))
      << "on " << hwy::TargetName(target);
}

// The sizes of k for a block: the odd sizes, and k below, equal to, above and multiples of the
// block.
std::vector<size_t> SizesK(size_t block) {
  std::vector<size_t> sizes = {1, 3, 17, 63, 129, block + 1, block, 2 * block, 3 * block + 3};
  if (block > 4) sizes.push_back(block - 4);
  if (block > 1) sizes.push_back(block - 1);
  return sizes;
}

void TestEveryKernelMatchesScalar(int64_t target) {
  const TargetFacts facts = testing_support::FactsOf(target);
  const std::vector<const simd::ProjectionKernel*> kernels = Int8Kernels();
  ASSERT_FALSE(kernels.empty());
  // m: below, at and above the tile rows (1, 3, 4; AMX 16); n: below, at and above the vector,
  // tile, slice (4 vectors: 16 or 32 features, 64 on AVX-512) and panel widths.
  const size_t sizes_m[] = {1, 2, 3, 4, 5, 16, 17, 63, 129};
  const size_t sizes_n[] = {1, 3, 16, 17, 32, 33, 63, 64, 65, 96, 129};
  uint32_t seed = 50;
  // 96: a block past the AMX kernel's 64-value tile step that is not a multiple of it.
  for (size_t block : {4, 32, 64, 96, 256}) {
    for (size_t k : SizesK(block)) {
      for (size_t m : sizes_m) {
        for (size_t n : sizes_n) {
          if (m * n * k > 150000) continue;
          const Qd8Rows a(m, k, block, RandomInt8(m * k, seed), seed + 1);
          // Weights from files may hold -128, which the quantizer never writes.
          const Qc8Weights w =
              MakeWeights(n, RandomInt8(n * k, seed + 2, -128, 127), (seed & 1) != 0);
          const std::vector<float> want = ScalarC(facts, a, w);
          for (const simd::ProjectionKernel* kernel : kernels) {
            CheckKernel(*kernel, a, w, want);
            if (::testing::Test::HasFatalFailure()) return;
          }
          seed += 3;
        }
      }
    }
  }
}

// QuantizeRowsI8 stores |x| <= 127 for finite blocks. The maddubs kernel is exact only there: it
// negates activations where the weight is negative, and -(-128) wraps to -128 (already one
// product of -128 x -1 comes out -128); the NEON mlal kernel sums two products in int16, and
// two of -128 x -128 overflow it. The others are exact for -128 too, and tested on it.
bool TakesMinus128(const simd::ProjectionKernel& kernel) {
  const std::string name = kernel.name;
  return name != "qd8_qc8w_maddubs_2x4v" && name != "qd8_qc8w_neonmlal_2x4v";
}

// The extremes of int8 on both sides, over long rows: the sums must be exact, so nothing may
// saturate at 16 bits on the way (as vpmaddubsw of unsigned activations would). Blocks of 252
// values are the longest whose sums the NEON kernel takes through the float bias (|sum| < 2^22),
// 256 the shortest it converts.
void TestEveryKernelExtremeValues(int64_t target) {
  const TargetFacts facts = testing_support::FactsOf(target);
  // k = block = 65536, the largest block: a block's sum of 255 x -128 per value (the offset
  // form's largest) reaches -2.14e9, within int32 by 0.4%.
  for (size_t k : {256, 1024, 4096, 65536}) {
    for (size_t block : {size_t{64}, size_t{252}, size_t{256}, k}) {
      if (k == 65536 && block != k) continue;
      for (int8_t wv : {int8_t{127}, int8_t{-128}}) {
        for (int8_t xv : {int8_t{127}, int8_t{-127}, int8_t{-128}}) {
          const size_t m = k == 65536 ? 1 : 5, n = 70;
          const Qd8Rows a(m, k, block, std::vector<int8_t>(m * k, xv), 9);
          const Qc8Weights w = MakeWeights(n, std::vector<int8_t>(n * k, wv), true);
          const std::vector<float> want = ScalarC(facts, a, w);
          for (const simd::ProjectionKernel* kernel : Int8Kernels()) {
            if (xv == -128 && !TakesMinus128(*kernel)) continue;
            CheckKernel(*kernel, a, w, want);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// Single blocks just past the NEON kernel's float-bias limit (kMaxBiasedGroups: 63 groups of 4,
// |sum| <= 2^22): 65, 127 and 257 groups of extreme values, whose sums (up to 2^24) are exact
// only when converted; a limit set a few groups too high takes them through the bias, which
// returns other bits. (TestEveryKernelExtremeValues stops at 64 groups, still exact either way.)
void TestEveryKernelLongBlocksPastBias(int64_t target) {
  const TargetFacts facts = testing_support::FactsOf(target);
  for (size_t block : {size_t{260}, size_t{508}, size_t{1028}}) {
    for (int8_t xv : {int8_t{127}, int8_t{-127}, int8_t{-128}}) {
      const size_t m = 3, n = 64, k = block;
      const Qd8Rows a(m, k, block, std::vector<int8_t>(m * k, xv), 11);
      const Qc8Weights w = MakeWeights(n, std::vector<int8_t>(n * k, int8_t{-128}), false);
      const std::vector<float> want = ScalarC(facts, a, w);
      for (const simd::ProjectionKernel* kernel : Int8Kernels()) {
        if (xv == -128 && !TakesMinus128(*kernel)) continue;
        CheckKernel(*kernel, a, w, want);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Rows x (m x k) quantized by QuantizeRowsI8 in the form `bytes`, with outlier extraction.
Qd8Rows QuantizeWithOutliers(const std::vector<float>& x, size_t m, size_t k, size_t block,
                             simd::QuantizedBytes bytes) {
  Qd8Rows a(m, k, block);
  a.count.resize(m);
  a.channel.resize(m * simd::kMaxOutliersPerRow);
  a.value.resize(m * simd::kMaxOutliersPerRow);
  simd::QuantizeRowsI8(x.data(), k, m, k, block, a.q.data(), a.scales.data(),
                       {a.count.data(), a.channel.data(), a.value.data()}, bytes);
  return a;
}

// One block size of TestEveryKernelAddsOutliers.
void TestKernelsAddOutliers(int64_t target, size_t block) {
  const size_t k = 300, n = 70, m = 2;
  std::vector<float> x = RandomNormal(m * k, 5);
  x[5] = 80.0f;
  x[77] = -120.0f;
  x[200] = 60.0f;  // row 0: three outliers; row 1: none
  const Qd8Rows a = QuantizeWithOutliers(x, m, k, block, simd::QuantizedBytes::kSigned);
  ASSERT_EQ(a.count[0], 3u);
  ASSERT_EQ(a.count[1], 0u);
  EXPECT_EQ(a.channel[0], 77u);  // largest first
  EXPECT_EQ(a.channel[1], 5u);
  EXPECT_EQ(a.channel[2], 200u);
  EXPECT_EQ(a.value[0], -120.0f);
  EXPECT_EQ(a.q[5], 0);
  EXPECT_EQ(a.q[77], 0);
  // The offset form takes the outliers out alike: its bytes are the signed ones' plus 128.
  const Qd8Rows offset =
      QuantizeWithOutliers(x, m, k, block, simd::QuantizedBytes::kOffsetUnsigned);
  EXPECT_EQ(offset.q, StoredBytes(a, simd::ActivationType::kQdu8));
  EXPECT_EQ(offset.scales, a.scales);
  EXPECT_EQ(offset.count, a.count);
  EXPECT_EQ(offset.channel, a.channel);
  float amax0 = 0.0f;
  for (size_t i = 0; i < block; ++i) {
    if (i != 5) amax0 = std::max(amax0, std::fabs(x[i]));
  }
  EXPECT_EQ(a.scales[0], amax0 / 127.0f);
  const Qc8Weights w = MakeWeights(n, RandomInt8(n * k, 6), false);
  const std::vector<float> want = ScalarC(testing_support::FactsOf(target), a, w);
  for (const simd::ProjectionKernel* kernel : Int8Kernels()) {
    CheckKernel(*kernel, a, w, want);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Outlier channels leave the int8 row (quantized as 0, scales from the other values) and come
// back in float: value * dequantized weight, added after the int8 result.
void TestEveryKernelAddsOutliers(int64_t target) {
  // Blocks of whole vectors sum |x| for the outlier threshold as they are measured; others
  // (36, 12 and 4 on targets of 16 or 8 lanes) in a pass of their own.
  for (size_t block : {size_t{64}, size_t{36}, size_t{12}, size_t{4}}) {
    SCOPED_TRACE(::testing::Message() << "block " << block);
    TestKernelsAddOutliers(target, block);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// More outliers than kMaxOutliersPerRow, at every byte position of a 4-value group and at block
// starts: the largest kMaxOutliersPerRow are kept, largest first, their bytes are zero, the
// smaller ones stay in the int8 row, and each block's scale comes from its remaining values.
void TestOutlierSelection(int64_t target) {
  const size_t k = 300, n = 70, m = 1;
  const size_t block = 4;  // every channel below that is a multiple of 4 starts a block
  std::vector<float> x = RandomNormal(m * k, 7);
  const size_t channels[12] = {0, 5, 42, 63, 77, 128, 142, 180, 200, 211, 251, 299};
  const float magnitudes[12] = {90, 150, 60, 210, 180, 110, 250, 70, 200, 160, 140, 55};
  for (size_t i = 0; i < 12; ++i) x[channels[i]] = (i % 2 ? -1.0f : 1.0f) * magnitudes[i];
  const Qd8Rows a = QuantizeWithOutliers(x, m, k, block, simd::QuantizedBytes::kSigned);
  std::vector<size_t> order(12);
  for (size_t i = 0; i < 12; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t p, size_t q) { return magnitudes[p] > magnitudes[q]; });
  ASSERT_EQ(a.count[0], simd::kMaxOutliersPerRow);
  std::vector<bool> kept(k, false);
  for (size_t i = 0; i < simd::kMaxOutliersPerRow; ++i) {
    EXPECT_EQ(a.channel[i], channels[order[i]]) << "slot " << i;
    EXPECT_EQ(a.value[i], x[channels[order[i]]]) << "slot " << i;
    EXPECT_EQ(a.q[channels[order[i]]], 0) << "kept outlier " << channels[order[i]];
    kept[channels[order[i]]] = true;
  }
  for (size_t i = simd::kMaxOutliersPerRow; i < 12; ++i) {
    EXPECT_NE(a.q[channels[order[i]]], 0) << "outlier left in the row " << channels[order[i]];
  }
  for (size_t b = 0; b < simd::QuantBlockCount(k, block); ++b) {
    float amax = 0.0f;
    for (size_t i = b * block; i < std::min(k, (b + 1) * block); ++i) {
      if (!kept[i]) amax = std::max(amax, std::fabs(x[i]));
    }
    EXPECT_EQ(a.scales[b], amax > 1e-30f ? amax / 127.0f : 0.0f) << "block " << b;
  }
  const Qc8Weights w = MakeWeights(n, RandomInt8(n * k, 8), true);
  const std::vector<float> want = ScalarC(testing_support::FactsOf(target), a, w);
  for (const simd::ProjectionKernel* kernel : Int8Kernels()) {
    CheckKernel(*kernel, a, w, want);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace

// An instance per target; the bodies, compiled once, reach its kernels by dynamic dispatch.
HWY_BEFORE_TEST(GemmI8Test);
TEST_P(GemmI8Test, TestQuantizeMatchesScalar) { TestQuantizeMatchesScalar(GetParam()); }
TEST_P(GemmI8Test, TestQuantizeNonFiniteBlocks) { TestQuantizeNonFiniteBlocks(GetParam()); }
TEST_P(GemmI8Test, TestQuantizeRoundsTiesToEven) { TestQuantizeRoundsTiesToEven(GetParam()); }
TEST_P(GemmI8Test, TestQuantizeTinyBlocks) { TestQuantizeTinyBlocks(GetParam()); }
TEST_P(GemmI8Test, TestListsTheKernelsThisCpuRuns) { TestListsTheKernelsThisCpuRuns(GetParam()); }
TEST_P(GemmI8Test, TestEveryKernelMatchesScalar) { TestEveryKernelMatchesScalar(GetParam()); }
TEST_P(GemmI8Test, TestEveryKernelExtremeValues) { TestEveryKernelExtremeValues(GetParam()); }
TEST_P(GemmI8Test, TestEveryKernelLongBlocksPastBias) {
  TestEveryKernelLongBlocksPastBias(GetParam());
}
TEST_P(GemmI8Test, TestEveryKernelAddsOutliers) { TestEveryKernelAddsOutliers(GetParam()); }
TEST_P(GemmI8Test, TestOutlierSelection) { TestOutlierSelection(GetParam()); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GemmI8Test);
}  // namespace edgeattn
