// The harness of the 16-bit attention cores' tests (attention_bf16dot_test.cc,
// attention_f16fma_test.cc, attention_arm_half_test.cc): kernels that round the query and the
// probabilities as well as the keys and values. A case (sizes, masks, softcap, sink, weights,
// row splits, data) is run and checked against a scalar model of the kernel's rounding (the
// query row scaled in fp32 and rounded, the keys and values rounded as stored, softmax and P V in
// double precision) within the bounds each test derives from its kernel's sums; then NaN and
// infinity, and the accuracy bound against float attention on the unrounded data.
#ifndef EDGEATTN_TESTS_SIMD_COMPACT_KV_CORE_HARNESS_H_
#define EDGEATTN_TESTS_SIMD_COMPACT_KV_CORE_HARNESS_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iomanip>
#include <iostream>
#include <limits>
#include <vector>

#include "simd/attention.h"
#include "simd/half_float.h"
#include "tests/simd/attention_head.h"
#include "tests/simd/attention_reference.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace testing_support {

inline constexpr float kLog2e = 1.44269504088896340736f;

inline double RoundBf16(float x) { return simd::F32FromBf16(simd::Bf16FromF32(x)); }
inline double RoundF16(float x) { return simd::F32FromF16(simd::F16FromF32(x)); }

// What a case masks and adds, and its data.
struct CoreCase {
  std::size_t lq = 1, lk = 1, dk = 1;
  bool exact = false;  // data in {-1, 0, 1} at a unit scale: integer base-2 scores
  bool causal = false;
  std::size_t offset = 0;
  std::size_t window = 0;
  std::size_t ring = 0;  // > 0: keys are a ring of lk slots, the last at position ring_last
  std::size_t ring_last = 0;
  bool additive = false;       // N(0, 1) (exact: 0) with -inf holes, row 2 all -inf
  std::size_t key_length = 0;  // > 0: keys from key_length on are padding (key bias -inf)
  float softcap = 0.0f;
  float sink = -HUGE_VALF;
  bool weights = false;
  std::vector<std::size_t> cuts;  // row splits between kernel calls
  std::uint32_t seed = 1;
};

inline CoreCase MakeCase(std::size_t lq, std::size_t lk, std::size_t dk, std::uint32_t seed = 1) {
  CoreCase c;
  c.lq = lq;
  c.lk = lk;
  c.dk = dk;
  c.seed = seed;
  return c;
}

// The scale whose product with log2(e) is 1 in float: exact cases score in whole base-2 units.
inline float UnitScale() {
  float scale = 1.0f / kLog2e;
  for (int i = 0; i < 16 && scale * kLog2e != 1.0f; ++i) {
    scale = std::nextafter(scale, scale * kLog2e < 1.0f ? 1.0f : 0.0f);
  }
  return scale;
}

// The row stride's padding past dk and how the keys are appended.
struct HeadLayout {
  std::size_t pad = 5;
  PackPieces pieces;
};

// Exact cases: -1, 0 and 1 (queries and keys), which every 16-bit format holds and fp32 sums
// exactly.
inline std::vector<float> CaseData(const CoreCase& c, std::size_t n, std::uint32_t seed) {
  if (!c.exact) return RandomNormal(n, seed);
  TestRandom rng(seed);
  std::vector<float> x(n);
  for (float& f : x) f = float(int(rng.Next() % 3) - 1);
  return x;
}

struct CoreHead : AttentionHead {
  CoreCase c;
  std::vector<float> additive, key_bias;

  CoreHead(const simd::AttentionKernel& kernel_, const CoreCase& c_, const HeadLayout& layout)
      : AttentionHead(kernel_, c_.lq, c_.lk, c_.dk, c_.dk + layout.pad,
                      c_.exact ? UnitScale() : 1.0f / std::sqrt(float(c_.dk)),
                      CaseData(c_, c_.lq * (c_.dk + layout.pad), c_.seed),
                      CaseData(c_, c_.lk * (c_.dk + layout.pad), c_.seed + 1),
                      RandomNormal(c_.lk * (c_.dk + layout.pad), c_.seed + 2), layout.pieces),
        c(c_) {
    if (c.additive) {
      additive = AdditiveMask(c.lq, c.lk, c.seed + 3);
      for (float& x : additive) x = c.exact && std::isfinite(x) ? 0.0f : x;
    }
    if (c.key_length > 0) {
      key_bias.assign(c.lk, 0.0f);
      std::fill(key_bias.begin() + c.key_length, key_bias.end(), -HUGE_VALF);
    }
  }

  simd::AttentionHeadArgs Args(float* out, float* weights) const {
    simd::AttentionHeadArgs args = AttentionHead::Args(out);
    args.mask.causal = c.causal;
    args.mask.causal_offset = c.offset;
    args.mask.window = c.window;
    args.mask.ring = c.ring;
    args.mask.ring_last = c.ring_last;
    if (c.additive) {
      args.mask.additive = additive.data();
      args.mask.ld_additive = c.lk + 1;
    }
    if (c.key_length > 0) args.mask.key_padding = key_bias.data();
    args.softcap = c.softcap;
    args.sink = c.sink;
    args.weights = weights;
    args.ldw = c.lk + 2;
    return args;
  }

  // The masks' rule, written out here apart from the kernels' AttentionMask.
  bool Sees(std::size_t i, std::size_t j) const {
    const std::size_t row = i + c.offset;
    const std::size_t key = c.ring == 0 ? j : j + (c.ring_last - j) / c.lk * c.lk;
    if (c.causal && key > row) return false;
    return c.window == 0 || (key <= row ? row - key : key - row) < c.window;
  }
};

// What the model needs of a kernel: its layout, rounding and error bounds.
struct CoreModel {
  HeadLayout layout;
  double (*round_query)(float);  // a query element scaled to base-2 units, as the kernel holds it
  double (*round_kv)(float);     // a key or value element as the kernel stores it
  // The kernel's base-2 score of a rounded query row and a rounded key row; empty: the exact
  // sum.
  std::function<double(const std::vector<double>& q, const double* key, std::size_t dk)> score;
  // The bound of one score's error, given the sum of |q_c k_c| of the rounded data.
  std::function<double(const CoreCase&, double abs_dot)> score_err;
  std::function<RowBounds(const CoreCase&, const ReferenceRow&)> bounds;
};

// Rows of x (stride ld, dk used) as the kernel stores them, dk apart: rounded once per case,
// not once per query row.
inline std::vector<double> RoundedRows(const CoreModel& model, const std::vector<float>& x,
                                       std::size_t rows, std::size_t dk, std::size_t ld) {
  std::vector<double> out(rows * dk);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t ch = 0; ch < dk; ++ch) out[r * dk + ch] = model.round_kv(x[r * ld + ch]);
  }
  return out;
}

// Row i of the model: base-2 scores of the rounded data (keys: RoundedRows) with the masks,
// their errors' bound.
inline ReferenceRow ModelRow(const CoreModel& model, const CoreHead& h,
                             const std::vector<double>& keys, std::size_t i) {
  const CoreCase& c = h.c;
  const float unit = h.scale * kLog2e;
  std::vector<double> q(c.dk);
  for (std::size_t ch = 0; ch < c.dk; ++ch) q[ch] = model.round_query(h.q[i * h.ld + ch] * unit);
  ReferenceRow row;
  row.p.resize(c.lk);
  for (std::size_t j = 0; j < c.lk; ++j) {
    const double* key = &keys[j * c.dk];
    double dot = 0.0, abs_dot = 0.0;
    for (std::size_t ch = 0; ch < c.dk; ++ch) {
      const double t = q[ch] * key[ch];
      dot += t;
      abs_dot += std::fabs(t);
    }
    if (model.score) dot = model.score(q, key, c.dk);
    if (c.softcap > 0.0f) {
      const double cap = c.softcap * double(kLog2e);
      dot = cap * std::tanh(dot / cap);
    }
    if (c.additive) dot += h.additive[i * (c.lk + 1) + j] * double(kLog2e);
    if (c.key_length > 0) dot += h.key_bias[j];
    if (!h.Sees(i, j)) dot = -HUGE_VAL;
    row.score_err = std::max(row.score_err, model.score_err(c, abs_dot));
    row.p[j] = dot;
  }
  Exponentiate(row, c.sink * double(kLog2e), /*base2=*/true);
  return row;
}

// Runs the case (split at c.cuts) and checks every output and weight against the model; a
// second run in one call without weights gives the same bits.
inline void CheckCase(const CoreModel& model, const simd::AttentionKernel& kernel,
                      const CoreCase& c) {
  CoreHead h(kernel, c, model.layout);
  const std::size_t ldw = c.lk + 2;
  std::vector<float> out(c.lq * h.ld, -3.0f), weights(c.lq * ldw, -3.0f);
  h.Run(h.Args(out.data(), c.weights ? weights.data() : nullptr), c.cuts);
  const std::vector<double> keys = RoundedRows(model, h.k, c.lk, c.dk, h.ld);
  const std::vector<double> values = RoundedRows(model, h.v, c.lk, c.dk, h.ld);
  for (std::size_t i = 0; i < c.lq; ++i) {
    const ReferenceRow m = ModelRow(model, h, keys, i);
    const KernelRow got{out.data() + i * h.ld,
                        h.ld,
                        c.dk,
                        c.weights ? weights.data() + i * ldw : nullptr,
                        ldw,
                        c.lk};
    CheckRow(got, m, model.bounds(c, m), values.data(), c.dk, [&] {
      return ::testing::Message() << "lq=" << c.lq << " lk=" << c.lk << " dk=" << c.dk
                                  << " exact=" << c.exact << " row " << i;
    });
    if (::testing::Test::HasFatalFailure()) return;
  }
  std::vector<float> whole(out.size(), -3.0f);
  h.Run(h.Args(whole.data(), nullptr), {});
  ASSERT_EQ(0, std::memcmp(whole.data(), out.data(), out.size() * sizeof(float)))
      << "a split of the rows or weights changed the output";
}

// Calls check with a case of every size (dk, lk, lq) with lq lk dk <= max_work, seeds from
// seed + 3 in steps of 3, causal on two seeds of three, with an offset that puts the last row at
// the last key, and rows split at 1 and lq / 2; stops at the first fatal failure.
template <class Check>
void ForEachSize(std::initializer_list<std::size_t> dks, std::initializer_list<std::size_t> lks,
                 std::initializer_list<std::size_t> lqs, std::size_t max_work, std::uint32_t seed,
                 const Check& check) {
  for (std::size_t dk : dks) {
    for (std::size_t lk : lks) {
      for (std::size_t lq : lqs) {
        if (lq * lk * dk > max_work) continue;
        CoreCase c = MakeCase(lq, lk, dk, seed += 3);
        c.causal = seed % 3 != 0;
        c.offset = lk > lq ? lk - lq : 0;
        if (lq > 2) c.cuts = std::vector<std::size_t>{1, lq / 2};
        check(c);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// NaN and infinity as the fp32 core treats them: a NaN query (row 1) or a +inf score makes the
// row NaN (row 2: 0 x inf), a -inf score only removes its key (rows 0 and 3, by the sign of
// their query's channel 2).
inline void CheckNonFinite(const simd::AttentionKernel& kernel, std::size_t lk, std::size_t dk,
                           std::uint32_t seed, const HeadLayout& layout) {
  CoreHead h(kernel, MakeCase(4, lk, dk, seed), layout);
  h.q[1 * h.ld + 3] = NAN;
  h.k[(lk - 1) * h.ld + 2] = HUGE_VALF;
  h.q[2 * h.ld + 2] = 0.0f;
  std::vector<float> out(h.lq * h.ld);
  h.Run(h.Args(out.data(), nullptr), {});
  for (std::size_t ch = 0; ch < dk; ++ch) {
    EXPECT_TRUE(std::isnan(out[1 * h.ld + ch]));
    EXPECT_TRUE(std::isnan(out[2 * h.ld + ch]));
    for (std::size_t row : {std::size_t{0}, std::size_t{3}}) {
      EXPECT_EQ(std::isnan(out[row * h.ld + ch]), h.q[row * h.ld + 2] > 0) << "row " << row;
    }
  }
}

// Cosine of the kernel's output to float attention on the unrounded data (double precision):
// lq rows, 300 keys, dk 64, N(0, 1) data or with outlier channels (6 channels of Q, K and V x20).
inline double CosineToFloat(const simd::AttentionKernel& kernel, std::size_t lq, bool outliers,
                            const HeadLayout& layout) {
  CoreHead h(kernel, MakeCase(lq, 300, 64, outliers ? 11 : 12), layout);
  if (outliers) {
    for (std::vector<float>* x : {&h.q, &h.k, &h.v}) {
      for (std::size_t r = 0; r < x->size() / h.ld; ++r) {
        for (std::size_t ch : {1, 9, 20, 33, 47, 60}) (*x)[r * h.ld + ch] *= 20.0f;
      }
    }
  }
  std::vector<float> out(h.lq * h.ld);
  h.Run(h.Args(out.data(), nullptr), {});
  std::vector<float> got, want;
  ReferenceRow row;
  for (std::size_t i = 0; i < h.lq; ++i) {
    row.p.assign(h.lk, 0.0);
    for (std::size_t j = 0; j < h.lk; ++j) {
      double dot = 0.0;
      for (std::size_t ch = 0; ch < h.dk; ++ch)
        dot += double(h.q[i * h.ld + ch]) * h.k[j * h.ld + ch];
      row.p[j] = dot * h.scale;
    }
    Exponentiate(row, -HUGE_VAL, /*base2=*/false);
    for (std::size_t ch = 0; ch < h.dk; ++ch) {
      double acc = 0.0;
      for (std::size_t j = 0; j < h.lk; ++j) acc += row.p[j] * h.v[j * h.ld + ch];
      want.push_back(float(acc / row.sum));
      got.push_back(out[i * h.ld + ch]);
    }
  }
  return Cosine(got, want);
}

// The bound: cosine >= 0.9999 on N(0, 1) data, >= 0.999 with outlier channels.
inline void CheckAccuracyBound(const simd::AttentionKernel& kernel, std::size_t lq,
                               const HeadLayout& layout, const char* target) {
  const double normal = CosineToFloat(kernel, lq, false, layout);
  const double outliers = CosineToFloat(kernel, lq, true, layout);
  std::cout << std::setprecision(7) << kernel.name << " on " << target
            << ": cosine vs float attention " << normal << " (normal), " << outliers
            << " (outliers)\n";
  EXPECT_GE(normal, 0.9999);
  EXPECT_GE(outliers, 0.999);
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_SIMD_COMPACT_KV_CORE_HARNESS_H_
