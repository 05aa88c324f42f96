// The attention core on every compiled target against a double-precision softmax(Q K^T) V.
#include "simd/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "simd/gemm_f32.h"
#include "tests/simd/attention_head.h"
#include "tests/simd/attention_reference.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::AdditiveMask;
using testing_support::AttentionHead;
using testing_support::Exponentiate;
using testing_support::ForEachF32Kernel;
using testing_support::KernelRow;
using testing_support::KeyPadding;
using testing_support::kFloatEps;
using testing_support::ReferenceRow;
using testing_support::RowBounds;

// Runs the head with every key visible and no weights, rows split at cuts.
std::vector<float> RunPlain(AttentionHead& head, const std::vector<size_t>& cuts) {
  std::vector<float> out(head.lq * head.ld, -3.0f);
  head.Run(head.Args(out.data()), cuts);
  return out;
}

// Row i's scaled score of key j in double precision, and the scaled sum of the products'
// magnitudes.
struct Score {
  double s, abs;
};
Score ScaledScore(const AttentionHead& head, size_t i, size_t j) {
  double dot = 0.0, abs_dot = 0.0;
  for (size_t c = 0; c < head.dk; ++c) {
    const double t = double(head.q[i * head.ld + c]) * head.k[j * head.ld + c];
    dot += t;
    abs_dot += std::fabs(t);
  }
  return {dot * head.scale, abs_dot * head.scale};
}

// The bounds of a row whose scores are off by score_err: each weight p_j/sum by about twice
// that, relative (doubled for margin), and the weighted sum of lk values adds gamma_lk.
RowBounds Bounds(double score_err, size_t lk) {
  RowBounds b;
  b.p_err = 2.0 * score_err + (lk + 2) * kFloatEps;
  b.weight_rel = 4.0 * score_err;
  b.weight_abs = 4 * kFloatEps;
  return b;
}

void CheckAttentionMatchesScalar(const simd::AttentionKernel& kernel) {
  uint32_t seed = 1000;
  for (size_t dk : {1, 3, 8, 17, 32, 64, 80}) {
    for (size_t lk : {1, 3, 17, 255, 256, 257, 300, 513}) {
      for (size_t lq : {1, 3, 17, 65}) {
        if (lq * lk * dk > 600000) continue;
        AttentionHead head(kernel, lq, lk, dk, seed);
        seed += 3;
        const std::vector<float> out = RunPlain(head, {});
        double max_v = 0.0;
        for (size_t j = 0; j < lk; ++j) {
          for (size_t c = 0; c < dk; ++c) {
            max_v = std::fmax(max_v, std::fabs(head.v[j * head.ld + c]));
          }
        }
        ReferenceRow row;
        row.p.resize(lk);
        for (size_t i = 0; i < lq; ++i) {
          double score_err = 0.0;
          for (size_t j = 0; j < lk; ++j) {
            const Score score = ScaledScore(head, i, j);
            row.p[j] = score.s;
            // Scores: dk fused multiply-adds on scaled q (gamma_{dk+1}); exp adds a few ulp.
            score_err = std::fmax(score_err, ((dk + 2) * score.abs + 8.0) * kFloatEps);
          }
          Exponentiate(row, -HUGE_VAL, /*base2=*/false);
          // Each weight p_j/sum is off by at most ~2 score_err relative; the weighted sum of
          // lk values adds gamma_lk * max|v|; doubled for margin.
          const double tol = 2.0 * max_v * (2.0 * score_err + (lk + 2) * kFloatEps);
          for (size_t c = 0; c < head.ld; ++c) {
            const float got = out[i * head.ld + c];
            if (c >= dk) {
              ASSERT_EQ(got, -3.0f) << "wrote outside the head's columns";
              continue;
            }
            double ref = 0.0;
            for (size_t j = 0; j < lk; ++j) ref += row.p[j] * head.v[j * head.ld + c];
            ASSERT_NEAR(got, ref / row.sum, tol)
                << "dk=" << dk << " lk=" << lk << " lq=" << lq << " row " << i << " col " << c;
          }
        }
        // Any split of the query rows gives bit-identical rows.
        if (lq > 2) {
          const std::vector<float> split = RunPlain(head, {1, lq / 2});
          ASSERT_EQ(0, std::memcmp(split.data(), out.data(), out.size() * sizeof(float)));
        }
      }
    }
  }
}

void CheckAttentionNonFinite(const simd::AttentionKernel& kernel) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t lk : {5, 300}) {
    AttentionHead head(kernel, 4, lk, 17, 77);
    head.q[1 * head.ld + 3] = nan;  // row 1: every score NaN
    head.k[(lk - 1) * head.ld + 2] = std::numeric_limits<float>::infinity();  // +-inf scores
    head.q[2 * head.ld + 2] = 0.0f;  // row 2: 0 * inf = NaN score
    const std::vector<float> out = RunPlain(head, {});
    for (size_t c = 0; c < head.dk; ++c) {
      EXPECT_TRUE(std::isnan(out[1 * head.ld + c]));
      EXPECT_TRUE(std::isnan(out[2 * head.ld + c]));
    }
    // Rows 0 and 3 see a score of +inf or -inf from the last key: +inf poisons the row (NaN,
    // as in PyTorch), -inf only removes that key.
    for (size_t row : {size_t{0}, size_t{3}}) {
      const bool plus_inf = head.q[row * head.ld + 2] > 0;
      for (size_t c = 0; c < head.dk; ++c) {
        const float got = out[row * head.ld + c];
        EXPECT_EQ(std::isnan(got), plus_inf) << "row " << row;
        if (!plus_inf) {
          EXPECT_TRUE(std::isfinite(got));
        }
      }
    }
  }
}

// Runs args (with weights of stride ldw) split at cuts and checks every row against the
// double-precision reference: scores scaled, soft-capped, masked (additive: [lq x (lk + 1)],
// key_bias, sees(i, j)), with the sink; with compare_unsplit, also that one call without
// weights gives the same bits.
template <class Sees>
void CheckAgainstReference(AttentionHead& head, simd::AttentionHeadArgs args,
                           const std::vector<size_t>& cuts, const Sees& sees, int variant,
                           bool compare_unsplit) {
  const size_t lq = head.lq, lk = head.lk, dk = head.dk;
  std::vector<float> out(lq * head.ld, -3.0f), weights(lq * args.ldw, -3.0f);
  args.out = out.data();
  args.weights = weights.data();
  head.Run(args, cuts);
  ReferenceRow row;
  row.p.resize(lk);
  for (size_t i = 0; i < lq; ++i) {
    row.score_err = 0.0;
    for (size_t j = 0; j < lk; ++j) {
      const Score score = ScaledScore(head, i, j);
      double s = score.s;
      if (args.softcap > 0.0f) s = args.softcap * std::tanh(s / args.softcap);
      if (args.mask.additive != nullptr) s += args.mask.additive[i * (lk + 1) + j];
      if (args.mask.key_padding != nullptr) s += args.mask.key_padding[j];
      if (!sees(i, j)) s = -HUGE_VAL;
      row.p[j] = s;
      row.score_err = std::fmax(row.score_err, ((dk + 4) * score.abs + 16.0) * kFloatEps);
    }
    Exponentiate(row, args.sink, /*base2=*/false);
    const KernelRow got{out.data() + i * head.ld,      head.ld,  dk,
                        weights.data() + i * args.ldw, args.ldw, lk};
    CheckRow(got, row, Bounds(row.score_err, lk), head.v.data(), head.ld, [&] {
      return ::testing::Message() << "dk=" << dk << " lk=" << lk << " lq=" << lq << " variant "
                                  << variant << " row " << i;
    });
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (!compare_unsplit) return;
  std::vector<float> whole(out.size(), -3.0f);
  args.out = whole.data();
  args.weights = nullptr;
  head.Run(args, {});
  ASSERT_EQ(0, std::memcmp(whole.data(), out.data(), out.size() * sizeof(float)))
      << "a split of the rows or weights changed the output";
}

// Masked attention and its weights against a double-precision softmax(Q K^T * scale + masks) V:
// an additive mask with -inf holes and whole masked tiles, key padding, causal limits with an
// offset (as a KV cache uses), and rows with every key masked.
void CheckAttentionMasks(const simd::AttentionKernel& kernel) {
  uint32_t seed = 5000;
  for (size_t dk : {3, 17, 64}) {
    for (size_t lk : {1, 17, 300, 513}) {
      for (size_t lq : {1, 9, 33}) {
        for (int variant = 0; variant < 4; ++variant) {
          AttentionHead head(kernel, lq, lk, dk, seed);
          seed += 3;
          const bool use_mask = variant != 1, use_bias = variant != 2;
          const bool causal = variant >= 2;
          const size_t offset = variant == 3 ? lk / 2 : 0;
          const std::vector<float> mask = AdditiveMask(lq, lk, seed);
          const std::vector<float> key_bias = KeyPadding(lk);
          simd::AttentionHeadArgs args = head.Args(nullptr);
          if (use_mask) {
            args.mask.additive = mask.data();
            args.mask.ld_additive = lk + 1;
          }
          if (use_bias) args.mask.key_padding = key_bias.data();
          args.mask.causal = causal;
          args.mask.causal_offset = offset;
          args.ldw = lk + 2;
          const auto sees = [&](size_t i, size_t j) { return !causal || j <= i + offset; };
          CheckAgainstReference(head, args, {lq / 3}, sees, variant, /*compare_unsplit=*/false);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// The masked-out upper triangle is never computed: keys past a causal row's limit may hold
// NaN without reaching any result.
void CheckAttentionCausalSkipsMaskedKeys(const simd::AttentionKernel& kernel) {
  for (size_t lk : {23, 300, 700}) {  // every case has keys past the last row's limit
    AttentionHead head(kernel, 20, lk, 8, 91);
    std::vector<float> out(head.lq * head.ld), with_nan(head.lq * head.ld);
    simd::AttentionHeadArgs args = head.Args(out.data());
    args.mask.causal = true;
    head.Run(args, {});
    for (size_t j = head.lq; j < lk; ++j) head.k[j * head.ld] = head.v[j * head.ld] = NAN;
    args.out = with_nan.data();
    head.Run(args, {});
    ASSERT_EQ(0, std::memcmp(out.data(), with_nan.data(), out.size() * sizeof(float)));
  }
}

// The attention step's extras against a double-precision reference: a sliding window (causal
// with an offset, and two-sided), a ring of key slots (a windowed KV cache's), soft-capped
// scores and an attention sink, with their weights; and any split of rows bit-identical.
void CheckAttentionStepMath(const simd::AttentionKernel& kernel) {
  uint32_t seed = 9000;
  for (size_t dk : {3, 17, 64}) {
    for (size_t lk : {17, 300, 700}) {
      for (size_t lq : {1, 9, 33}) {
        for (int variant = 0; variant < 5; ++variant) {
          AttentionHead head(kernel, lq, lk, dk, seed);
          seed += 3;
          const bool causal = variant != 1;
          const size_t window = variant == 4 ? 0 : 1 + (seed % 2 == 0 ? lk / 3 : 5);
          const bool ring = variant == 2;
          // Ring: slot j holds the latest position <= last with position % lk == j.
          const size_t last = ring ? 3 * lk + lk / 2 : lk - 1;
          const size_t offset = ring ? last + 1 - lq : variant == 0 ? lk / 2 : 0;
          simd::AttentionHeadArgs args = head.Args(nullptr);
          args.mask.causal = causal;
          args.mask.causal_offset = offset;
          args.mask.window = window;
          if (ring) {
            args.mask.ring = lk;
            args.mask.ring_last = last;
          }
          args.softcap = variant == 3 || variant == 4 ? 1.5f : 0.0f;
          args.sink = variant >= 3 ? 0.7f : -INFINITY;
          args.ldw = lk + 1;
          const auto sees = [&](size_t i, size_t j) {
            const size_t row_position = i + offset, kp = j + (last - j) / lk * lk;
            const size_t distance = kp > row_position ? kp - row_position : row_position - kp;
            return !(causal && kp > row_position) && (window == 0 || distance < window);
          };
          CheckAgainstReference(head, args, {lq / 2}, sees, variant, /*compare_unsplit=*/true);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// Key tiles wholly before a row block's window are never read: NaN there reaches no result.
void CheckAttentionWindowSkipsEarlyTiles(const simd::AttentionKernel& kernel) {
  AttentionHead head(kernel, 8, 900, 8, 93);
  std::vector<float> out(head.lq * head.ld), with_nan(head.lq * head.ld);
  simd::AttentionHeadArgs args = head.Args(out.data());
  args.mask.causal = true;
  args.mask.causal_offset = 890;  // rows at positions 890..897 see 826..897 with a window of 72
  args.mask.window = 72;
  head.Run(args, {});
  for (size_t j = 0; j < 768; ++j) head.k[j * head.ld] = head.v[j * head.ld] = NAN;
  args.out = with_nan.data();
  head.Run(args, {});
  ASSERT_EQ(0, std::memcmp(out.data(), with_nan.data(), out.size() * sizeof(float)));
}

// Tiles masked by the additive mask are skipped per block of rows: the first rows' keys
// [0, 256) all -inf (a whole tile for the first block or blocks), the later rows' visible,
// so that a block must test its own rows' mask; with and without a sink, whose term a row
// keeps across the skipped tile (the first tile a block computes is then its second).
void CheckAttentionAdditiveMaskedTilesPerBlock(const simd::AttentionKernel& kernel) {
  const size_t lq = 16, lk = 300, dk = 17;
  for (float sink : {-HUGE_VALF, 0.7f}) {
    AttentionHead head(kernel, lq, lk, dk, 95);
    std::vector<float> mask = AdditiveMask(lq, lk, 96);
    for (size_t i = 0; i < lq / 2; ++i) {
      std::fill_n(mask.begin() + i * (lk + 1), simd::kAttentionKeyTile, -HUGE_VALF);
    }
    simd::AttentionHeadArgs args = head.Args(nullptr);
    args.mask.additive = mask.data();
    args.mask.ld_additive = lk + 1;
    args.ldw = lk + 1;
    args.sink = sink;
    CheckAgainstReference(
        head, args, {}, [](size_t, size_t) { return true; }, 0,
        /*compare_unsplit=*/false);
  }
}

// A row poisoned by one NaN score (an additive NaN; the row's maximum is finite) is NaN, and so
// are all its weights, the keys its mask removes and those past the causal limit included; the
// other rows are untouched.
void CheckAttentionPoisonedRowWeights(const simd::AttentionKernel& kernel) {
  for (size_t lk : {17, 300}) {
    const size_t lq = 4, dk = 8;
    AttentionHead head(kernel, lq, lk, dk, 97);
    std::vector<float> mask(lq * (lk + 1), 0.0f);
    mask[1 * (lk + 1) + 0] = NAN;                        // row 1: key 0's score NaN
    std::vector<float> out(lq * head.ld), weights(lq * lk, -3.0f);
    simd::AttentionHeadArgs args = head.Args(out.data());
    args.mask.additive = mask.data();
    args.mask.ld_additive = lk + 1;
    args.mask.causal = true;
    args.weights = weights.data();
    args.ldw = lk;
    head.Run(args, {});
    for (size_t i = 0; i < lq; ++i) {
      for (size_t c = 0; c < dk; ++c) {
        EXPECT_EQ(std::isnan(out[i * head.ld + c]), i == 1) << "lk=" << lk << " row " << i;
      }
      for (size_t j = 0; j < lk; ++j) {
        const float w = weights[i * lk + j];
        if (i == 1) {
          ASSERT_TRUE(std::isnan(w)) << "lk=" << lk << " weight " << j;
        } else {
          ASSERT_TRUE(std::isfinite(w)) << "lk=" << lk << " row " << i << " weight " << j;
          if (j > i) {
            ASSERT_EQ(w, 0.0f) << "lk=" << lk << " row " << i << " weight " << j;
          }
        }
      }
    }
  }
}

// Softmax is shift-invariant: an additive mask of one constant far below zero (every score
// under 2^-126 once exponentiated) changes outputs and weights by its rounding only. Scores near
// -200 log2(e) = -288.5 round to 2^-15, so each exponential moves by a factor within
// 2^(+-2^-15), a weight (over its sum) by 4.3e-5 of itself and an output by that of max |v|.
void CheckAttentionShiftInvariant(const simd::AttentionKernel& kernel) {
  for (size_t lk : {17, 300}) {
    const size_t lq = 3, dk = 17;
    AttentionHead head(kernel, lq, lk, dk, 99);
    std::vector<float> out(lq * head.ld), shifted(lq * head.ld);
    std::vector<float> weights(lq * lk), shifted_weights(lq * lk);
    simd::AttentionHeadArgs args = head.Args(out.data());
    args.weights = weights.data();
    args.ldw = lk;
    head.Run(args, {});
    const std::vector<float> mask(lq * lk, -200.0f);
    args.mask.additive = mask.data();
    args.mask.ld_additive = lk;
    args.out = shifted.data();
    args.weights = shifted_weights.data();
    head.Run(args, {});
    float v_max = 0.0f;
    for (float x : head.v) v_max = std::max(v_max, std::fabs(x));
    const float bound = 5e-5f;  // 4.3e-5 and the unshifted call's own rounding
    for (size_t i = 0; i < lq; ++i) {
      for (size_t c = 0; c < dk; ++c) {
        ASSERT_NEAR(shifted[i * head.ld + c], out[i * head.ld + c], bound * v_max)
            << "lk=" << lk << " row " << i << " col " << c;
      }
      for (size_t j = 0; j < lk; ++j) {
        const float w = weights[i * lk + j];
        ASSERT_NEAR(shifted_weights[i * lk + j], w, bound * w + 1e-9f)
            << "lk=" << lk << " row " << i << " weight " << j;
      }
    }
  }
}

// A padded key's score is -inf even when it is NaN (its key holds NaN): the row stays finite.
void CheckAttentionPaddingHidesNaN(const simd::AttentionKernel& kernel) {
  for (size_t lk : {17, 300}) {
    AttentionHead head(kernel, 5, lk, 8, 101);
    std::vector<float> key_bias(lk, 0.0f);
    for (size_t j : {size_t{3}, lk - 1}) {
      key_bias[j] = -HUGE_VALF;
      head.k[j * head.ld + 1] = NAN;
    }
    simd::AttentionHeadArgs args = head.Args(nullptr);
    args.mask.key_padding = key_bias.data();
    args.ldw = lk + 1;
    const auto sees = [&](size_t, size_t j) { return j != 3 && j != lk - 1; };
    CheckAgainstReference(head, args, {2}, sees, 0, /*compare_unsplit=*/false);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The output rows at their own stride, wider than the queries' (a head's columns of a concat
// buffer need not share the Q projection's stride): the same bits as at the queries' stride, and
// nothing written outside the head's columns.
void CheckAttentionOutputStride(const simd::AttentionKernel& kernel) {
  for (size_t lq : {3, 17}) {
    AttentionHead head(kernel, lq, 40, 17, 103);
    const std::vector<float> want = RunPlain(head, {});
    const size_t ldo = head.ld + 11;
    std::vector<float> out(lq * ldo, -3.0f);
    simd::AttentionHeadArgs args = head.Args(out.data());
    args.ldo = ldo;
    head.Run(args, {lq / 2});
    for (size_t i = 0; i < lq; ++i) {
      for (size_t c = 0; c < ldo; ++c) {
        const float expected = c < head.dk ? want[i * head.ld + c] : -3.0f;
        ASSERT_EQ(out[i * ldo + c], expected) << "lq=" << lq << " row " << i << " col " << c;
      }
    }
  }
}

// A block of rows whose window starts straddle a tile edge: its first row sees the end of tile
// 0, its later rows only tile 1, so the block's first tile is its first row's.
void CheckAttentionWindowBlockStraddlesTile(const simd::AttentionKernel& kernel) {
  const size_t lq = 8, lk = 300, dk = 8, window = 8, offset = 261;  // row 0 sees 254..261
  AttentionHead head(kernel, lq, lk, dk, 105);
  simd::AttentionHeadArgs args = head.Args(nullptr);
  args.mask.causal = true;
  args.mask.causal_offset = offset;
  args.mask.window = window;
  args.ldw = lk;
  const auto sees = [&](size_t i, size_t j) { return j <= i + offset && i + offset - j < window; };
  CheckAgainstReference(head, args, {}, sees, 0, /*compare_unsplit=*/false);
}

}  // namespace

// An instance per target; the bodies, compiled once, reach its kernels by dynamic dispatch.
HWY_BEFORE_TEST(AttentionTest);
TEST_P(AttentionTest, TestAttentionMatchesScalar) {
  ForEachF32Kernel(GetParam(), CheckAttentionMatchesScalar);
}
TEST_P(AttentionTest, TestAttentionNonFinite) {
  ForEachF32Kernel(GetParam(), CheckAttentionNonFinite);
}
TEST_P(AttentionTest, TestAttentionMasks) { ForEachF32Kernel(GetParam(), CheckAttentionMasks); }
TEST_P(AttentionTest, TestAttentionCausalSkipsMaskedKeys) {
  ForEachF32Kernel(GetParam(), CheckAttentionCausalSkipsMaskedKeys);
}
TEST_P(AttentionTest, TestAttentionStepMath) {
  ForEachF32Kernel(GetParam(), CheckAttentionStepMath);
}
TEST_P(AttentionTest, TestAttentionWindowSkipsEarlyTiles) {
  ForEachF32Kernel(GetParam(), CheckAttentionWindowSkipsEarlyTiles);
}
TEST_P(AttentionTest, TestAttentionAdditiveMaskedTilesPerBlock) {
  ForEachF32Kernel(GetParam(), CheckAttentionAdditiveMaskedTilesPerBlock);
}
TEST_P(AttentionTest, TestAttentionPoisonedRowWeights) {
  ForEachF32Kernel(GetParam(), CheckAttentionPoisonedRowWeights);
}
TEST_P(AttentionTest, TestAttentionShiftInvariant) {
  ForEachF32Kernel(GetParam(), CheckAttentionShiftInvariant);
}
TEST_P(AttentionTest, TestAttentionPaddingHidesNaN) {
  ForEachF32Kernel(GetParam(), CheckAttentionPaddingHidesNaN);
}
TEST_P(AttentionTest, TestAttentionOutputStride) {
  ForEachF32Kernel(GetParam(), CheckAttentionOutputStride);
}
TEST_P(AttentionTest, TestAttentionWindowBlockStraddlesTile) {
  ForEachF32Kernel(GetParam(), CheckAttentionWindowBlockStraddlesTile);
}
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionTest);
}  // namespace edgeattn
