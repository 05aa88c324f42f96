// One attention head as the attention-core tests run it: float Q, K and V rows at a stride wider
// than dk (a head's slice of a wider tensor), the kernel's packed keys and values, and its
// scratch. The keys and values are packed in pieces, as a KV cache appends them, over all-ones
// bytes (NaN in every storage format): no stale byte may reach a result. Rows run split
// between kernel calls, as the operator's threads split them.
#ifndef EDGEATTN_TESTS_SIMD_ATTENTION_HEAD_H_
#define EDGEATTN_TESTS_SIMD_ATTENTION_HEAD_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "hwy/targets.h"
#include "simd/attention.h"
#include "simd/targets.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace testing_support {

// The fp32 attention kernels of the target under test: each test runs every one of them.
inline std::vector<const simd::AttentionKernel*> F32AttentionKernels() {
  std::vector<const simd::AttentionKernel*> kernels = simd::AttentionKernels(simd::KvType::kF32);
  EXPECT_FALSE(kernels.empty());
  for (const simd::AttentionKernel* kernel : kernels) {
    EXPECT_EQ(simd::FindAttentionKernel(kernel->kv, kernel->name), kernel);
  }
  return kernels;
}

// Runs check on every fp32 kernel of the target under test, stopping at the first fatal failure.
inline void ForEachF32Kernel(int64_t target, void (*check)(const simd::AttentionKernel&)) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  for (const simd::AttentionKernel* kernel : F32AttentionKernels()) {
    SCOPED_TRACE(kernel->name);
    check(*kernel);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// How the keys are appended: `size` keys at a time where the first key's index is a multiple
// of `period`, else one (pieces that start and end off every tile edge).
struct PackPieces {
  std::size_t period = 3;
  std::size_t size = 70;
};

struct AttentionHead {
  const simd::AttentionKernel& kernel;
  std::size_t lq, lk, dk, ld;  // ld: row stride of q, k, v and out
  float scale;
  std::vector<float> q, k, v;
  PackPieces pieces;
  hwy::AlignedFreeUniquePtr<std::uint8_t[]> keys, values;
  hwy::AlignedFreeUniquePtr<float[]> scratch;

  // q: lq rows, k and v: lk rows, each of stride ld.
  AttentionHead(const simd::AttentionKernel& kernel_, std::size_t lq_, std::size_t lk_,
                std::size_t dk_, std::size_t ld_, float scale_, std::vector<float> q_,
                std::vector<float> k_, std::vector<float> v_, PackPieces pieces_ = {})
      : kernel(kernel_),
        lq(lq_),
        lk(lk_),
        dk(dk_),
        ld(ld_),
        scale(scale_),
        q(std::move(q_)),
        k(std::move(k_)),
        v(std::move(v_)),
        pieces(pieces_) {
    keys = hwy::AllocateAligned<std::uint8_t>(kernel.keys_bytes(lk, dk));
    values = hwy::AllocateAligned<std::uint8_t>(kernel.values_bytes(lk, dk));
    scratch = hwy::AllocateAligned<float>(kernel.scratch_floats(dk));
  }

  // N(0, 1) rows from seeds seed, seed + 1 and seed + 2, at stride dk + 5, scale 1 / sqrt(dk).
  AttentionHead(const simd::AttentionKernel& kernel_, std::size_t lq_, std::size_t lk_,
                std::size_t dk_, std::uint32_t seed)
      : AttentionHead(kernel_, lq_, lk_, dk_, dk_ + 5, 1.0f / std::sqrt(float(dk_)),
                      RandomNormal(lq_ * (dk_ + 5), seed), RandomNormal(lk_ * (dk_ + 5), seed + 1),
                      RandomNormal(lk_ * (dk_ + 5), seed + 2)) {}

  // Everything visible, no weights.
  simd::AttentionHeadArgs Args(float* out) const {
    return {q.data(), ld, keys.get(), values.get(), lk, dk, scale, out, ld};
  }

  void Pack() {
    std::fill_n(keys.get(), kernel.keys_bytes(lk, dk), 0xFF);
    std::fill_n(values.get(), kernel.values_bytes(lk, dk), 0xFF);
    for (std::size_t first = 0; first < lk;) {
      const std::size_t count = std::min(lk - first, first % pieces.period == 0 ? pieces.size : 1);
      kernel.pack(k.data() + first * ld, ld, v.data() + first * ld, ld, first, count, first + count,
                  dk, keys.get(), values.get());
      first += count;
    }
  }

  // Packs, then runs rows [0, lq) split at cuts.
  void Run(const simd::AttentionHeadArgs& args, const std::vector<std::size_t>& cuts) {
    Pack();
    std::size_t begin = 0;
    for (std::size_t end : cuts) {
      kernel.run(args, begin, end, scratch.get());
      begin = end;
    }
    kernel.run(args, begin, lq, scratch.get());
  }
};

// An additive mask [lq x (lk + 1)] of N(0, 1) values with -inf holes and row 2 all -inf.
inline std::vector<float> AdditiveMask(std::size_t lq, std::size_t lk, std::uint32_t seed) {
  std::vector<float> mask = RandomNormal(lq * (lk + 1), seed);
  for (std::size_t i = 0; i < mask.size(); ++i) {
    if (i % 7 == 3 || i / (lk + 1) == 2) mask[i] = -HUGE_VALF;
  }
  return mask;
}

// Key padding: every other key of the first 256 masked, and all of them (a whole tile) when
// lk > 256.
inline std::vector<float> KeyPadding(std::size_t lk) {
  std::vector<float> key_bias(lk, 0.0f);
  for (std::size_t j = 0; j < lk; ++j) {
    if (j % 2 == 1 || (lk > 256 && j < 256)) key_bias[j] = -HUGE_VALF;
  }
  return key_bias;
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_SIMD_ATTENTION_HEAD_H_
