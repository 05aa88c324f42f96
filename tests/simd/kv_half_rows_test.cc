// The bf16 / fp16 rounding of K/V rows and the two 16-bit packings (simd/kv_half_rows-inl.h) on
// every compiled target, bit for bit against half_float.h's scalar rounding and a scalar model
// of the layouts (kv_half_model.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/kv_half_rows_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/half_float.h"
#include "simd/kv_half_rows-inl.h"
#include "tests/simd/kv_half_model.h"
#include "tests/test_support.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

using testing_support::ModelPackBf16Pairs;
using testing_support::ModelPackHalf;
using testing_support::RandomNormal;

// Values at every edge of the two roundings: zeros, infinities, NaNs with payloads that the
// quiet bit or the truncation would change, ties to even in both formats, fp16's largest finite
// value and the first value that rounds past it, its subnormal range and ties there, float
// subnormals, and float's largest value (beyond bf16's range after rounding).
std::vector<float> EdgeValues() {
  const uint32_t bits[] = {
      0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFF800001u, 0x7FC00000u,
      0x7FBFFFFFu, 0xFFFFFFFFu, 0x7F802000u, 0x3F808000u, 0x3F818000u, 0x3F808001u, 0xBF808000u,
      0x3F801000u, 0x3F803000u, 0x3F801001u, 0x477FE000u, 0x477FEFFFu, 0x477FF000u, 0xC77FF000u,
      0x47800000u, 0x38800000u, 0x387FFFFFu, 0x33800000u, 0x33000000u, 0x33000001u, 0x33C00000u,
      0xB3C00000u, 0x38000000u, 0x38001000u, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu,
      0x7F7F8000u, 0x7F7F7FFFu, 0x3F800000u, 0x3EAAAAABu};
  std::vector<float> values;
  for (uint32_t b : bits) values.push_back(simd::BitsFloat(b));
  return values;
}

// Rows of every length up to 3 vectors and beyond, random over a wide range of exponents, with
// the edge values scattered through them; the output past n must stay untouched.
void TestHalfRowsMatchScalar() {
  const std::vector<float> edges = EdgeValues();
  std::vector<size_t> lengths;
  for (size_t n = 1; n <= 70; ++n) lengths.push_back(n);
  for (size_t n : {255, 256, 1000}) lengths.push_back(n);
  for (size_t n : lengths) {
    SCOPED_TRACE(n);
    std::vector<float> x = RandomNormal(n, 300 + n, 1.0f);
    for (size_t i = 0; i < n; ++i) x[i] = std::ldexp(x[i], static_cast<int>(i * 7 % 61) - 30);
    for (size_t i = 0; i < edges.size(); ++i) x[(i * 5 + n) % n] = edges[i];
    // Guards of a whole widest vector past n: a full store there shows.
    const size_t guard = HWY_MAX_BYTES / sizeof(uint16_t);
    std::vector<uint16_t> bf16(n + guard, 0xABCD), f16(n + guard, 0xABCD);
    simd::HWY_NAMESPACE::RoundRowToHalf<simd::HWY_NAMESPACE::Bf16Rows>(x.data(), n, bf16.data());
    simd::HWY_NAMESPACE::RoundRowToHalf<simd::HWY_NAMESPACE::F16Rows>(x.data(), n, f16.data());
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(bf16[i], simd::Bf16FromF32(x[i])) << "bf16 of bits " << simd::FloatBits(x[i]);
      ASSERT_EQ(f16[i], simd::F16FromF32(x[i])) << "fp16 of bits " << simd::FloatBits(x[i]);
    }
    for (size_t i = n; i < n + guard; ++i) ASSERT_EQ(bf16[i], 0xABCD) << i;
    for (size_t i = n; i < n + guard; ++i) ASSERT_EQ(f16[i], 0xABCD) << i;
  }
}

using PackFn = void (*)(const float*, size_t, const float*, size_t, size_t, size_t, size_t, size_t,
                        void*, void*);

// A pack leaves the model's bytes: keys and values appended in three calls (a cache's prefill,
// an odd single position, the rest), then positions rewritten inside the stored ones with new
// rows (a ring's slots: one odd position alone, a pair, a run across a panel's edge), with even and
// odd lengths, strided rows, a last panel partly filled, dk past the pack's 256-channel chunks
// (even and odd), edge values; the buffers start as garbage, so a byte the pack should write and
// does not shows.
template <class Model>
void CheckPackMatchesModel(const char* what, PackFn pack, size_t keys_bytes(size_t, size_t),
                           size_t values_bytes(size_t, size_t), const Model& model) {
  const std::vector<float> edges = EdgeValues();
  for (size_t lk : {70, 71, 97, 129}) {
    for (size_t dk : {1, 2, 3, 17, 63, 64, 96, 129, 257, 300, 301}) {
      SCOPED_TRACE(testing::Message() << what << " lk=" << lk << " dk=" << dk);
      const size_t ld = dk + 5, split = 32 + lk % 2;
      std::vector<float> k = RandomNormal(lk * ld, 80 + dk, 1.5f);
      std::vector<float> v = RandomNormal(lk * ld, 90 + dk, 1.5f);
      for (size_t i = 0; i < edges.size(); ++i) {
        k[(i * 37) % (lk * ld)] = edges[i];
        v[(i * 41 + 3) % (lk * ld)] = edges[i];
      }
      std::vector<uint8_t> keys(keys_bytes(lk, dk), 0xCD), values(values_bytes(lk, dk), 0xCD);
      const auto append = [&](size_t first, size_t count, size_t stored) {
        pack(k.data() + first * ld, ld, v.data() + first * ld, ld, first, count, stored, dk,
             keys.data(), values.data());
      };
      append(0, split, split);
      append(split, 1, split + 1);
      append(split + 1, lk - split - 1, lk);
      const std::vector<float> k2 = RandomNormal(12 * ld, 95 + dk, 2.0f);
      const std::vector<float> v2 = RandomNormal(12 * ld, 97 + dk, 2.0f);
      // A ring's rewrite gets only its own rows, then rows of NaN that the pack must not read
      // (a whole widest vector of them): a key or value packed past `count` shows in the slots
      // after the run, which hold other positions.
      const auto rewrite = [&](size_t first, size_t count, size_t row2) {
        const size_t poison = 16;
        std::vector<float> kr((count + poison) * ld, std::numeric_limits<float>::quiet_NaN());
        std::vector<float> vr(kr);
        std::copy(k2.begin() + row2 * ld, k2.begin() + (row2 + count) * ld, kr.begin());
        std::copy(v2.begin() + row2 * ld, v2.begin() + (row2 + count) * ld, vr.begin());
        pack(kr.data(), ld, vr.data(), ld, first, count, lk, dk, keys.data(), values.data());
        std::copy(kr.begin(), kr.begin() + count * ld, k.begin() + first * ld);
        std::copy(vr.begin(), vr.begin() + count * ld, v.begin() + first * ld);
      };
      rewrite(9, 1, 0);  // positions 9 (odd), 10, 11
      rewrite(10, 2, 1);
      // A run of 9 across the first panel's edge (positions 58-66): keys four at a time there.
      rewrite(58, 9, 3);
      const testing_support::ModelHalfPack want =
          model(k.data(), v.data(), ld, lk, dk, keys.size(), values.size());
      ASSERT_EQ(keys, want.keys);
      ASSERT_EQ(values, want.values);
    }
  }
}

void TestHalfPackMatchesModel() {
  CheckPackMatchesModel("bf16", &simd::HWY_NAMESPACE::PackBf16KeysValues, &simd::HalfKeysBytes,
                        &simd::HalfValuesBytes, &ModelPackHalf<&simd::Bf16FromF32>);
  CheckPackMatchesModel("fp16", &simd::HWY_NAMESPACE::PackF16KeysValues, &simd::HalfKeysBytes,
                        &simd::HalfValuesBytes, &ModelPackHalf<&simd::F16FromF32>);
}

void TestBf16PairPackMatchesModel() {
  CheckPackMatchesModel("bf16 pairs", &simd::HWY_NAMESPACE::PackBf16DotKeysValues,
                        &simd::Bf16DotKeysBytes, &simd::Bf16DotValuesBytes, &ModelPackBf16Pairs);
}

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {
HWY_BEFORE_TEST(KvHalfRowsTest);
HWY_EXPORT_AND_TEST_P(KvHalfRowsTest, TestHalfRowsMatchScalar);
HWY_EXPORT_AND_TEST_P(KvHalfRowsTest, TestHalfPackMatchesModel);
HWY_EXPORT_AND_TEST_P(KvHalfRowsTest, TestBf16PairPackMatchesModel);
}  // namespace edgeattn
#endif
