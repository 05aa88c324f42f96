// The int8 compact-KV kernels' pack (keys rotated and quantized per row, values in pairs with
// their scales) on every compiled target, byte for byte against the scalar model
// (kv_int8_model.h). The kernels' scores and P V over these bytes: attention_kv_test.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "simd/attention.h"
#include "simd/attention_kv.h"
#include "simd/targets.h"
#include "tests/simd/kv_int8_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::ModelPackI8;
using testing_support::RandomNormal;

// An int8 kernel's pack leaves the model's bytes: keys and values appended in two calls (a cache's
// prefill and next step), strided rows, a second panel partly filled, a zero row, a key and a
// value too small to scale, a key whose largest rotated |x| is exactly the smallest that scales
// and one just below, rows with infinity or NaN and a key whose rotation overflows; dk with
// rotation blocks of 1 to 128, below 4 channels and past 4, in one chunk of 128 channels or two
// (the second rotated too at 256); the buffers start as garbage, so a byte the pack should write
// and does not shows.
void CheckI8PackMatchesModel(const simd::AttentionKernel& kernel) {
  if (kernel.kv != simd::KvType::kI8) return;
  for (size_t dk : {1, 2, 3, 6, 17, 63, 64, 96, 129, 130, 256}) {
    SCOPED_TRACE(dk);
    const size_t lk = 70 + dk % 2, ld = dk + 5;  // the last panel's fill from lane 6 or 7
    std::vector<float> k = RandomNormal(lk * ld, 80 + dk, 1.5f);
    std::vector<float> v = RandomNormal(lk * ld, 90 + dk, 1.5f);
    k[3 * ld + dk / 2] = 60.0f;  // an outlier channel
    std::fill(k.begin() + 5 * ld, k.begin() + 5 * ld + dk, 0.0f);
    std::fill(v.begin() + 6 * ld, v.begin() + 6 * ld + dk, 1e-38f);
    std::fill(k.begin() + 9 * ld, k.begin() + 9 * ld + dk, 1e-39f);  // rotated, still below
    k[11 * ld + dk / 3] = std::numeric_limits<float>::quiet_NaN();
    k[12 * ld] = k[12 * ld + dk - 1] = 3e38f;  // finite; their butterfly's sum is not
    // One channel of x: its rotation is +-x in each channel of the block, so the largest is x.
    // (Rows 14 and 15: the rewrites below repack 10 and 13 one by one.)
    std::fill(k.begin() + 14 * ld, k.begin() + 16 * ld, 0.0f);
    k[14 * ld] = std::nextafter(simd::kMinI8RowMax, 0.0f);
    k[15 * ld] = simd::kMinI8RowMax;
    k[7 * ld] = std::numeric_limits<float>::infinity();
    v[8 * ld + dk - 1] = std::numeric_limits<float>::quiet_NaN();
    std::vector<uint8_t> keys(kernel.keys_bytes(lk, dk), 0xCD);
    std::vector<uint8_t> values(kernel.values_bytes(lk, dk), 0xCD);
    kernel.pack(k.data(), ld, v.data(), ld, 0, 33, 33, dk, keys.data(), values.data());
    kernel.pack(k.data() + 33 * ld, ld, v.data() + 33 * ld, ld, 33, lk - 33, lk, dk, keys.data(),
                values.data());
    // A ring's rewrite inside the stored slots (first + count < stored) keeps the other half of
    // each pair: an even slot's partner, an odd slot's, and that of a run across a panel's edge
    // ending on an even slot.
    // Each rewrite packs new rows from a buffer of only its own rows, then rows of NaN that the
    // pack must not read (a whole widest vector of them): a key or value packed past `count`,
    // or a rewrite that writes nothing, shows.
    const std::vector<float> k2 = RandomNormal(4 * ld, 85 + dk, 1.5f);
    const std::vector<float> v2 = RandomNormal(4 * ld, 95 + dk, 1.5f);
    for (size_t first : {10, 13, 61}) {
      const size_t count = first == 61 ? 4 : 1, poison = 16;
      std::vector<float> kr((count + poison) * ld, std::numeric_limits<float>::quiet_NaN());
      std::vector<float> vr(kr);
      std::copy(k2.begin(), k2.begin() + count * ld, kr.begin());
      std::copy(v2.begin(), v2.begin() + count * ld, vr.begin());
      kernel.pack(kr.data(), ld, vr.data(), ld, first, count, lk, dk, keys.data(), values.data());
      std::copy(kr.begin(), kr.begin() + count * ld, k.begin() + first * ld);
      std::copy(vr.begin(), vr.begin() + count * ld, v.begin() + first * ld);
    }
    const testing_support::ModelI8Pack want = ModelPackI8(k.data(), ld, v.data(), ld, lk, dk);
    ASSERT_EQ(keys, want.keys);
    ASSERT_EQ(values.size(), want.values.size());
    for (size_t b = 0; b < values.size(); ++b) {
      if (want.values_written[b]) {
        ASSERT_EQ(values[b], want.values[b]) << "value byte " << b;
      }
    }
    // A call with an odd stored count (41) that does not pack slot 40: slot 41, past the stored
    // ones and the partner that slot 40's value is read with, goes to zeros of scale zero.
    kernel.pack(k.data() + 10 * ld, ld, v.data() + 10 * ld, ld, 10, 1, 41, dk, keys.data(),
                values.data());
    const uint8_t* pair = values.data() + 40 / 2 * simd::I8ValuePairBytes(dk);
    for (size_t c = 0; c < simd::I8ValuePairBytes(dk) / 2; ++c) {
      ASSERT_EQ(pair[2 * c + 1], 0) << "slot 41's byte of channel " << c;
    }
    float scale41;
    std::memcpy(&scale41, values.data() + simd::I8ValueScalesOffset(dk) + 41 * sizeof(float),
                sizeof(float));
    EXPECT_EQ(scale41, 0.0f);
  }
}

}  // namespace

// An instance per target; its int8 kernels are reached by dynamic dispatch.
HWY_BEFORE_TEST(AttentionKvPackTest);
TEST_P(AttentionKvPackTest, TestCompactKvI8Pack) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(GetParam()));
  const std::vector<const simd::AttentionKernel*> kernels =
      simd::AttentionKernels(simd::KvType::kI8);
  ASSERT_FALSE(kernels.empty());
  for (const simd::AttentionKernel* kernel : kernels) {
    SCOPED_TRACE(kernel->name);
    CheckI8PackMatchesModel(*kernel);
    if (HasFatalFailure()) return;
  }
}
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionKvPackTest);
}  // namespace edgeattn
