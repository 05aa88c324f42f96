// The fp32 attention core's layout on every compiled target: keys and values packed as a
// plainly written model of the layout says, keys alone, and values read where the caller holds
// them (AttentionKernel::values_as_rows), against the packed values bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "simd/attention.h"
#include "simd/gemm_f32.h"
#include "tests/simd/attention_head.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::AttentionHead;
using testing_support::ForEachF32Kernel;

// The fp32 layout, written plainly: position p's channel c at lane p % 64 of row c of key panel
// p / 64, zeros in the lanes past `stored`; value rows, then a zeroed tail.
struct F32Layout {
  std::vector<float> keys, values;
  F32Layout(const simd::AttentionKernel& kernel, size_t lk, size_t dk)
      : keys(kernel.keys_bytes(lk, dk) / sizeof(float), 0.0f),
        values(kernel.values_bytes(lk, dk) / sizeof(float), 0.0f) {}
  void Put(size_t pos, const float* k, const float* v, size_t dk) {
    for (size_t c = 0; c < dk; ++c) {
      keys[(pos / simd::kGemmPanelWidth * dk + c) * simd::kGemmPanelWidth +
           pos % simd::kGemmPanelWidth] = k[c];
      values[pos * dk + c] = v[c];
    }
  }
};

// The pack leaves the layout's every float: keys and values appended in two calls (a cache's
// prefill from lane 0, its next step from an odd lane), strided rows, then a ring's rewrites of
// stored slots with other rows (one slot, and a run across a panel's edge); the buffers start
// as NaN, so a float the pack should write and does not shows. dk covers the 4 x 4 transpose's
// channel tails and the key runs' position tails.
void CheckF32PackMatchesModel(const simd::AttentionKernel& kernel) {
  for (size_t dk : {1, 3, 4, 5, 17, 63, 64, 129}) {
    SCOPED_TRACE(dk);
    // Keys and values at different strides: a pack that takes one for the other shows.
    const size_t lk = 70 + dk % 4, ld = dk + 5, ldv = dk + 2;
    const std::vector<float> k = testing_support::RandomNormal(lk * ld, 40 + dk);
    const std::vector<float> v = testing_support::RandomNormal(lk * ldv, 50 + dk);
    const std::vector<float> k2 = testing_support::RandomNormal(lk * ld, 60 + dk);
    const std::vector<float> v2 = testing_support::RandomNormal(lk * ldv, 70 + dk);
    F32Layout want(kernel, lk, dk);
    std::vector<float> keys(want.keys.size(), NAN), values(want.values.size(), NAN);
    kernel.pack(k.data(), ld, v.data(), ldv, 0, 33, 33, dk, keys.data(), values.data());
    kernel.pack(k.data() + 33 * ld, ld, v.data() + 33 * ldv, ldv, 33, lk - 33, lk, dk, keys.data(),
                values.data());
    for (size_t pos = 0; pos < lk; ++pos) want.Put(pos, &k[pos * ld], &v[pos * ldv], dk);
    for (size_t first : {13, 58}) {
      const size_t count = first == 58 ? 9 : 1;
      kernel.pack(k2.data() + first * ld, ld, v2.data() + first * ldv, ldv, first, count, lk, dk,
                  keys.data(), values.data());
      for (size_t pos = first; pos < first + count; ++pos) {
        want.Put(pos, &k2[pos * ld], &v2[pos * ldv], dk);
      }
    }
    ASSERT_EQ(0, std::memcmp(keys.data(), want.keys.data(), keys.size() * sizeof(float)));
    ASSERT_EQ(0, std::memcmp(values.data(), want.values.data(), values.size() * sizeof(float)));
    if (!kernel.values_as_rows) continue;
    // Values null: the same keys, in the same calls.
    std::vector<float> keys_only(want.keys.size(), NAN);
    kernel.pack(k.data(), ld, v.data(), ldv, 0, 33, 33, dk, keys_only.data(), nullptr);
    kernel.pack(k.data() + 33 * ld, ld, v.data() + 33 * ldv, ldv, 33, lk - 33, lk, dk,
                keys_only.data(), nullptr);
    for (size_t first : {13, 58}) {
      kernel.pack(k2.data() + first * ld, ld, v2.data() + first * ldv, ldv, first,
                  first == 58 ? 9 : 1, lk, dk, keys_only.data(), nullptr);
    }
    ASSERT_EQ(0, std::memcmp(keys_only.data(), keys.data(), keys.size() * sizeof(float)));
  }
}

// A values_as_rows kernel reading V's rows in place (AttentionHeadArgs::ldv) over keys packed
// alone: the same bits as from its packed values, at row strides of dk and wider, with NaN
// between the rows' dk floats and past the last row's as far as values_bytes(0, dk) (what run
// may read and must not use), the buffer ending there; unmasked, and causal with a window, a
// sink and soft-capping; rows split between calls.
void CheckValuesInPlace(const simd::AttentionKernel& kernel) {
  if (!kernel.values_as_rows) return;
  uint32_t seed = 2000;
  for (size_t dk : {1, 3, 17, 32, 64, 80}) {
    for (size_t lk : {1, 17, 257, 300}) {
      for (bool masked : {false, true}) {
        const size_t lq = 17;
        AttentionHead head(kernel, lq, lk, dk, seed++);
        simd::AttentionHeadArgs args = head.Args(nullptr);
        if (masked) {
          args.mask.causal = true;
          args.mask.causal_offset = lk > lq ? lk - lq : 0;
          args.mask.window = 40;  // lk 300: rows from 12 on start past the first tile
          args.sink = 0.5f;
          args.softcap = 5.0f;
        }
        std::vector<float> want(lq * head.ld, -3.0f);
        args.out = want.data();
        head.Run(args, {lq / 2});
        std::fill_n(head.keys.get(), kernel.keys_bytes(lk, dk), 0xFF);
        kernel.pack(head.k.data(), head.ld, head.v.data(), head.ld, 0, lk, lk, dk, head.keys.get(),
                    nullptr);
        const size_t tail = (kernel.values_bytes(0, dk) + sizeof(float) - 1) / sizeof(float);
        for (size_t ldv : {dk, dk + 7, 3 * dk + 16}) {
          std::vector<float> rows((lk - 1) * ldv + dk + tail, NAN);
          for (size_t j = 0; j < lk; ++j) {
            std::copy_n(&head.v[j * head.ld], dk, &rows[j * ldv]);
          }
          std::vector<float> got(want.size(), -3.0f);
          args.out = got.data();
          args.values = rows.data();
          args.ldv = ldv;
          kernel.run(args, 0, 5, head.scratch.get());
          kernel.run(args, 5, lq, head.scratch.get());
          ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
              << "dk=" << dk << " lk=" << lk << " masked=" << masked << " ldv=" << ldv;
        }
      }
    }
  }
}

}  // namespace

// An instance per target; the bodies, compiled once, reach its kernels by dynamic dispatch.
HWY_BEFORE_TEST(AttentionF32LayoutTest);
TEST_P(AttentionF32LayoutTest, TestF32PackMatchesModel) {
  ForEachF32Kernel(GetParam(), CheckF32PackMatchesModel);
}
TEST_P(AttentionF32LayoutTest, TestValuesInPlace) {
  ForEachF32Kernel(GetParam(), CheckValuesInPlace);
}
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionF32LayoutTest);
}  // namespace edgeattn
