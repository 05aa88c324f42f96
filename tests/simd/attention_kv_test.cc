// The compact-KV attention kernels (bf16, fp16, int8 keys and values) on every compiled target
// against a scalar model of their rounding: the keys and values rounded as the format stores
// them (and, for int8, keys and each scaled query row rotated and quantized per row), then
// softmax(Q K^T) V in double precision.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/attention_kv_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "simd/attention.h"
#include "simd/attention_kv.h"
#include "simd/half_float.h"
#include "simd/softmax-inl.h"
#include "simd/targets.h"
#include "tests/simd/attention_head.h"
#include "tests/simd/attention_reference.h"
#include "tests/simd/kv_int8_model.h"
#include "tests/test_support.h"

// Per target: the softmax step that the int8 P V test models; the kernels' tests are compiled
// once (below). The int8 rows' own rounding and rotation: kv_int8_rows_test.cc.
HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace {

// This target's softmax step on p[0, n): p_j = 2^(p_j - shift) in place; returns their sum.
float Exp2ShiftSum(float* p, size_t n, float shift) {
  namespace hn = hwy::HWY_NAMESPACE;
  const simd::HWY_NAMESPACE::RowTag d;
  return hn::GetLane(hn::SumOfLanes(d, simd::HWY_NAMESPACE::Exp2ShiftSumF32(p, n, shift)));
}

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {

HWY_EXPORT(Exp2ShiftSum);

namespace {

using testing_support::AdditiveMask;
using testing_support::AttentionHead;
using testing_support::Exponentiate;
using testing_support::KernelRow;
using testing_support::KeyPadding;
using testing_support::kFloatEps;
using testing_support::ModelQuantizeI8;
using testing_support::ModelRotateI8;
using testing_support::RandomNormal;
using testing_support::ReferenceRow;
using testing_support::RowBounds;

constexpr simd::KvType kCompactTypes[] = {simd::KvType::kBf16, simd::KvType::kF16,
                                          simd::KvType::kI8};

// The kernels modelled here: those with fp32 queries and probabilities. The bf16 and fp16
// arithmetic cores (named bf16dot, bf16amx, f16fma after "kv_") round both:
// attention_bf16dot_test.cc, attention_f16fma_test.cc (x86) and attention_arm_half_test.cc (ARM)
// model them.
std::vector<const simd::AttentionKernel*> ModelledKernels(simd::KvType type) {
  std::vector<const simd::AttentionKernel*> kernels;
  for (const simd::AttentionKernel* kernel : simd::AttentionKernels(type)) {
    const char* arithmetic = std::strstr(kernel->name, "kv_") + 3;
    if (std::strncmp(arithmetic, "bf16", 4) != 0 && std::strncmp(arithmetic, "f16", 3) != 0) {
      kernels.push_back(kernel);
    }
  }
  return kernels;
}

// Runs check on every compact kernel of the target under test.
void ForEachKernel(int64_t target, void (*check)(const simd::AttentionKernel&)) {
  ASSERT_EQ(simd::ChosenTarget(), hwy::TargetName(target));
  for (simd::KvType type : kCompactTypes) {
    const std::vector<const simd::AttentionKernel*> kernels = ModelledKernels(type);
    ASSERT_FALSE(kernels.empty());
    for (const simd::AttentionKernel* kernel : kernels) {
      SCOPED_TRACE(kernel->name);
      ASSERT_EQ(simd::FindAttentionKernel(type, kernel->name), kernel);
      check(*kernel);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Rows as the format stores them; int8 keys rotated first (the model's rotation, which every
// target's matches bit for bit, tested below), so that their dot products with rotated queries
// are the kernel's.
enum class Rows { kKeys, kValues };
std::vector<double> RoundRows(simd::KvType type, Rows what, const std::vector<float>& x,
                              size_t rows, size_t dk, size_t ld) {
  std::vector<double> out(rows * dk);
  std::vector<int8_t> q(dk);
  std::vector<float> rotated(dk);
  for (size_t i = 0; i < rows; ++i) {
    const float* row = x.data() + i * ld;
    if (type == simd::KvType::kI8 && what == Rows::kKeys) {
      std::copy(row, row + dk, rotated.begin());
      ModelRotateI8(rotated.data(), dk);
      row = rotated.data();
    }
    const float scale = type == simd::KvType::kI8 ? ModelQuantizeI8(row, dk, q.data()) : 0;
    for (size_t c = 0; c < dk; ++c) {
      if (type == simd::KvType::kBf16) {
        out[i * dk + c] = simd::F32FromBf16(simd::Bf16FromF32(row[c]));
      } else if (type == simd::KvType::kF16) {
        out[i * dk + c] = simd::F32FromF16(simd::F16FromF32(row[c]));
      } else {
        out[i * dk + c] = double(q[c]) * scale;
      }
    }
  }
  return out;
}

struct Head : AttentionHead {
  using AttentionHead::AttentionHead;

  // Query row i as the kernel scores it: scaled in float, and for int8 keys rotated, quantized
  // and divided by the rotation's block (H^T H = block I).
  std::vector<double> QueryRow(size_t i) const {
    std::vector<float> scaled(dk);
    for (size_t c = 0; c < dk; ++c) scaled[c] = q[i * ld + c] * scale;
    if (kernel.kv != simd::KvType::kI8) return std::vector<double>(scaled.begin(), scaled.end());
    ModelRotateI8(scaled.data(), dk);
    std::vector<int8_t> q8(dk);
    const float q8_scale = ModelQuantizeI8(scaled.data(), dk, q8.data());
    std::vector<double> row(dk);
    const double block = double(simd::I8RotationBlock(dk));
    for (size_t c = 0; c < dk; ++c) row[c] = double(q8[c]) * q8_scale / block;
    return row;
  }
};

// The model's score of a query row and rounded key j (rows of q.size() channels), and the sum of
// the products' magnitudes.
struct KeyDot {
  double s, abs;
};
KeyDot ModelDot(const std::vector<double>& q, const std::vector<double>& k, size_t j) {
  const size_t dk = q.size();
  KeyDot dot{0.0, 0.0};
  for (size_t c = 0; c < dk; ++c) {
    dot.s += q[c] * k[j * dk + c];
    dot.abs += std::fabs(q[c] * k[j * dk + c]);
  }
  return dot;
}

// The int8 kernels' P V rounds each row's products p_j scale_j of a key tile to int16 steps of
// the tile's largest / kI8ProbabilityMax (kv_int8_values-inl.h): half a step per key, times the
// stored value's |q| <= 127, so at most half a step of p_j max_c |v_j c| / kI8ProbabilityMax per
// visible key.
// Returns that bound on a row's outputs (v: rows of dk as the format stores them).
double I16ProbabilityStepsBound(simd::KvType type, const ReferenceRow& row,
                                const std::vector<double>& v, size_t dk) {
  if (type != simd::KvType::kI8 || row.sum == 0.0) return 0.0;
  double bound = 0.0;
  for (size_t t0 = 0; t0 < row.p.size(); t0 += simd::kAttentionKeyTile) {
    double largest = 0.0;
    size_t visible = 0;
    for (size_t j = t0; j < std::min(row.p.size(), t0 + simd::kAttentionKeyTile); ++j) {
      double max_v = 0.0;
      for (size_t c = 0; c < dk; ++c) max_v = std::max(max_v, std::fabs(v[j * dk + c]));
      largest = std::max(largest, row.p[j] * max_v);
      visible += row.p[j] != 0.0;
    }
    bound += 0.5 * visible * largest / simd::kI8ProbabilityMax;
  }
  return bound / row.sum;
}

// Rows [0, lq) at positions offset + i, causal, with an optional sink, against the model.
void CheckAgainstModel(Head& head, size_t offset, float sink, const std::vector<size_t>& cuts) {
  std::vector<float> out(head.lq * head.ld, -3.0f);
  simd::AttentionHeadArgs args = head.Args(out.data());
  args.mask.causal = true;
  args.mask.causal_offset = offset;
  args.sink = sink;
  head.Run(args, cuts);
  const size_t dk = head.dk;
  const std::vector<double> k =
      RoundRows(head.kernel.kv, Rows::kKeys, head.k, head.lk, dk, head.ld);
  const std::vector<double> v =
      RoundRows(head.kernel.kv, Rows::kValues, head.v, head.lk, dk, head.ld);
  double max_v = 0.0;
  for (double x : v) max_v = std::max(max_v, std::fabs(x));
  for (size_t i = 0; i < head.lq; ++i) {
    const std::vector<double> q = head.QueryRow(i);
    const size_t visible = std::min(head.lk, offset + i + 1);
    ReferenceRow row;
    row.p.resize(visible);
    double abs_max = 0.0;
    for (size_t j = 0; j < visible; ++j) {
      const KeyDot dot = ModelDot(q, k, j);
      row.p[j] = dot.s;
      abs_max = std::max(abs_max, dot.abs);
    }
    Exponentiate(row, sink, /*base2=*/false);
    // Scores: dk float roundings of the half kernels' fused multiply-adds (exact integers for
    // int8, then two roundings of the scales); exp adds a few ulp. Each weight is off by about
    // twice that, relative; the weighted sum of the values adds (lk + 2) roundings. Doubled.
    const double score_err = ((dk + 4) * abs_max + 8.0) * kFloatEps;
    const double tol = 2.0 * max_v * (2.0 * score_err + (visible + 2) * kFloatEps) +
                       2.0 * I16ProbabilityStepsBound(head.kernel.kv, row, v, dk);
    for (size_t c = 0; c < head.ld; ++c) {
      const float value = out[i * head.ld + c];
      if (c >= dk) {
        ASSERT_EQ(value, -3.0f) << "wrote outside the head's columns";
        continue;
      }
      double want = 0.0;
      for (size_t j = 0; j < visible; ++j) want += row.p[j] * v[j * dk + c];
      ASSERT_NEAR(value, want / row.sum, tol)
          << "dk=" << dk << " lk=" << head.lk << " lq=" << head.lq << " row " << i << " col " << c;
    }
  }
}

void CheckMatchesModel(const simd::AttentionKernel& kernel) {
  uint32_t seed = 100;
  for (size_t dk : {1, 3, 17, 63, 64, 96, 129}) {  // int8 rotation blocks 1, 64, 32
    for (size_t lk : {1, 3, 17, 63, 129, 257, 300}) {
      for (size_t lq : {1, 3, 17}) {
        if (lq > lk) continue;
        Head head(kernel, lq, lk, dk, seed);
        seed += 3;
        // Decode rows follow the cache: the last lq positions; a sink on every other case.
        const float sink = seed % 2 == 0 ? 0.5f : -HUGE_VALF;
        CheckAgainstModel(head, lk - lq, sink, {});
        if (::testing::Test::HasFatalFailure()) return;
        // Any split of the query rows gives bit-identical rows.
        if (lq > 2) {
          std::vector<float> whole(lq * head.ld), split(lq * head.ld);
          simd::AttentionHeadArgs a = head.Args(whole.data()), b = head.Args(split.data());
          a.mask.causal = b.mask.causal = true;
          a.mask.causal_offset = b.mask.causal_offset = lk - lq;
          head.Run(a, {});
          head.Run(b, {1, lq / 2});
          ASSERT_EQ(0, std::memcmp(whole.data(), split.data(), whole.size() * sizeof(float)));
        }
      }
    }
  }
}

// need_weights against the model: an additive mask with -inf holes and one row with every key
// masked, key padding over a whole tile, causal with an offset, a window, a soft cap and a sink,
// and a two-sided window with key padding and the additive mask together; the weights and
// outputs, nothing written past a row's weights, and any split of rows bit-identical.
void CheckWeightsMatchModel(const simd::AttentionKernel& kernel) {
  uint32_t seed = 700;
  for (size_t dk : {1, 17, 64}) {
    for (size_t lk : {3, 63, 300, 513}) {
      for (size_t lq : {1, 9, 17}) {
        for (int variant = 0; variant < 5; ++variant) {
          Head head(kernel, lq, lk, dk, seed);
          seed += 3;
          const std::vector<float> mask = AdditiveMask(lq, lk, seed);
          const std::vector<float> key_bias = KeyPadding(lk);
          const size_t ldw = lk + 2;
          std::vector<float> out(lq * head.ld, -3.0f), weights(lq * ldw, -3.0f);
          simd::AttentionHeadArgs args = head.Args(out.data());
          args.weights = weights.data();
          args.ldw = ldw;
          if (variant == 0 || variant >= 3) {
            args.mask.additive = mask.data();
            args.mask.ld_additive = lk + 1;
          }
          if (variant != 2) args.mask.key_padding = key_bias.data();
          args.mask.causal = variant == 2 || variant == 3;
          // The window's rows at the end of the keys, so that whole tiles before it are skipped;
          // the two-sided one's (variant 4) 50 keys before the end, so that it ends before them.
          args.mask.causal_offset = variant == 3   ? lk / 2
                                    : variant == 2 ? (lk > lq ? lk - lq : 0)
                                    : variant == 4 ? (lk > lq + 50 ? lk - lq - 50 : 0)
                                                   : 0;
          args.mask.window = variant == 2 || variant == 4 ? 40 : 0;
          args.softcap = variant == 1 ? 3.0f : 0.0f;
          args.sink = variant == 3 ? 0.25f : -HUGE_VALF;
          head.Run(args, {lq / 3});

          const std::vector<double> k = RoundRows(kernel.kv, Rows::kKeys, head.k, lk, dk, head.ld);
          const std::vector<double> v =
              RoundRows(kernel.kv, Rows::kValues, head.v, lk, dk, head.ld);
          ReferenceRow row;
          row.p.resize(lk);
          for (size_t i = 0; i < lq; ++i) {
            const std::vector<double> q = head.QueryRow(i);
            double abs_max = 0.0;
            for (size_t j = 0; j < lk; ++j) {
              const KeyDot key_dot = ModelDot(q, k, j);
              double dot = key_dot.s;
              if (args.softcap > 0.0f) dot = args.softcap * std::tanh(dot / args.softcap);
              if (args.mask.additive != nullptr) dot += mask[i * (lk + 1) + j];
              if (args.mask.key_padding != nullptr) dot += key_bias[j];
              if (!args.mask.Sees(i, j)) dot = -INFINITY;
              row.p[j] = dot;
              abs_max = std::max(abs_max, key_dot.abs);
            }
            Exponentiate(row, args.sink, /*base2=*/false);
            // As CheckAgainstModel: score roundings (and the mask's addition), then exp.
            const double score_err = ((dk + 4) * abs_max + 16.0) * kFloatEps;
            RowBounds bounds;
            bounds.p_err = 2.0 * score_err + (lk + 2) * kFloatEps;
            bounds.weight_rel = 4.0 * score_err;
            bounds.weight_abs = 4 * kFloatEps;
            bounds.out_abs = I16ProbabilityStepsBound(kernel.kv, row, v, dk);
            const KernelRow got{out.data() + i * head.ld, head.ld, dk,
                                weights.data() + i * ldw, ldw,     lk};
            CheckRow(got, row, bounds, v.data(), dk, [&] {
              return ::testing::Message() << "dk=" << dk << " lk=" << lk << " lq=" << lq
                                          << " variant " << variant << " row " << i;
            });
            if (::testing::Test::HasFatalFailure()) return;
          }
          // Weights do not change the outputs, and any split of the rows gives the same bits.
          std::vector<float> plain(lq * head.ld, -3.0f), split_weights(lq * ldw, -3.0f);
          simd::AttentionHeadArgs b = args;
          b.out = plain.data();
          b.weights = nullptr;
          head.Run(b, {});
          ASSERT_EQ(0, std::memcmp(out.data(), plain.data(), out.size() * sizeof(float)));
          b.weights = split_weights.data();
          head.Run(b, {1, lq / 2});
          ASSERT_EQ(
              0, std::memcmp(weights.data(), split_weights.data(), weights.size() * sizeof(float)));
        }
      }
    }
  }
}

// A call of rows [begin, end) writes their outputs and weights only: the rows of its last block
// past `end` (another call's, or past the head) keep their bytes, whatever the block size.
void CheckCallWritesOnlyItsRows(const simd::AttentionKernel& kernel) {
  Head head(kernel, 9, 70, 17, 51);
  head.Pack();
  const size_t ldw = head.lk;
  std::vector<float> out(head.lq * head.ld, -3.0f), weights(head.lq * ldw, -3.0f);
  simd::AttentionHeadArgs args = head.Args(out.data());
  args.weights = weights.data();
  args.ldw = ldw;
  args.mask.causal = true;
  args.mask.causal_offset = head.lk - head.lq;
  kernel.run(args, 2, 3, head.scratch.get());
  for (size_t i = 0; i < head.lq; ++i) {
    for (size_t c = 0; c < head.ld; ++c) {
      ASSERT_EQ(out[i * head.ld + c] == -3.0f, i != 2 || c >= head.dk)
          << "row " << i << " col " << c;
    }
    for (size_t j = 0; j < ldw; ++j) {
      // Row 2 (position 63) sees keys [0, 63]: every weight of its row is written.
      ASSERT_EQ(weights[i * ldw + j] == -3.0f, i != 2) << "row " << i << " key " << j;
    }
  }
}

// The kernels of one format on this target give bit-identical results (the int8 ones compute
// the same integers).
void CheckVariantsAgree(const simd::AttentionKernel& kernel) {
  for (const simd::AttentionKernel* other : ModelledKernels(kernel.kv)) {
    for (size_t dk : {3, 64, 129}) {
      Head a(kernel, 5, 300, dk, 7), b(*other, 5, 300, dk, 7);
      std::vector<float> out_a(5 * a.ld), out_b(5 * b.ld);
      a.Run(a.Args(out_a.data()), {});
      b.Run(b.Args(out_b.data()), {});
      ASSERT_EQ(0, std::memcmp(out_a.data(), out_b.data(), out_a.size() * sizeof(float)))
          << kernel.name << " vs " << other->name << " dk=" << dk;
    }
  }
}

// The int8 kernels' P V bit for bit, where the scores are known exactly: a zero query row scores
// 0 against every key, so every visible key's probability is this target's exp2(0) (not 1: the
// polynomial's constant), and the row's sum and the probabilities come from the kernel's own
// softmax step on that row. Then p'_j = p_j scale_j, q_j = p'_j (P / max p') rounded to
// nearest even (P = kI8ProbabilityMax), and one tile's output is
// float(sum_j q_j v_j) * step * (1 / sum) (kv_int8_values-inl.h): one tile (lk <= 256), so the
// accumulation is a single rounding whether or not MulAdd fuses. Rows see different keys
// (causal), so each row has its own step; the row groups of 4, 2 and 1, the channel blocks of 4,
// 2 and 1 vectors and odd pair counts all run.
void CheckI8ValuesExact(const simd::AttentionKernel& kernel) {
  if (kernel.kv != simd::KvType::kI8) return;
  uint32_t seed = 900;
  for (size_t dk : {1, 48, 129}) {  // channel blocks of 1, 2 + 1, 4 + 4 + 1 (AVX-512 vectors)
    // 2, 3 and 4 pairs: a 4-stream tail, sdot's quads of two pair rows and of one; 65: a panel
    // of one key, its causal rows (57 to 65 keys) the tails of sdot's groups of 8 pairs
    for (size_t lk : {1, 4, 5, 7, 65}) {
      for (size_t lq : {1, 3, 9}) {
        if (lq > lk) continue;
        Head head(kernel, lq, lk, dk, seed);
        seed += 3;
        std::fill(head.q.begin(), head.q.end(), 0.0f);
        for (size_t j = 0; j < lk; j += 5) {  // scales that differ by orders of magnitude
          for (size_t c = 0; c < dk; ++c) head.v[j * head.ld + c] *= 1e-3f;
        }
        std::vector<float> out(lq * head.ld, -3.0f);
        simd::AttentionHeadArgs args = head.Args(out.data());
        args.mask.causal = true;
        args.mask.causal_offset = lk - lq;
        head.Run(args, {});
        std::vector<int8_t> v8(lk * dk);
        std::vector<float> scales(lk);
        for (size_t j = 0; j < lk; ++j) {
          scales[j] = ModelQuantizeI8(head.v.data() + j * head.ld, dk, v8.data() + j * dk);
        }
        for (size_t i = 0; i < lq; ++i) {
          const size_t visible = lk - lq + i + 1;
          HWY_ALIGN_MAX float p[simd::kAttentionKeyTile];
          std::fill(p, p + lk, -HUGE_VALF);
          std::fill(p, p + visible, 0.0f);
          const float row_sum = HWY_DYNAMIC_DISPATCH(Exp2ShiftSum)(p, lk, 0.0f);
          float max = 0.0f;
          for (size_t j = 0; j < visible; ++j) max = std::max(max, p[j] * scales[j]);
          const float step = max / simd::kI8ProbabilityMax;
          const float inverse = simd::kI8ProbabilityMax / max;
          for (size_t c = 0; c < dk; ++c) {
            int64_t sum = 0;
            for (size_t j = 0; j < visible; ++j) {
              const float scaled = p[j] * scales[j] * inverse;
              sum += static_cast<int64_t>(std::nearbyint(scaled)) * v8[j * dk + c];
            }
            const float want = float(sum) * step * (1.0f / row_sum);
            ASSERT_EQ(out[i * head.ld + c], want)
                << "dk=" << dk << " lk=" << lk << " lq=" << lq << " row " << i << " col " << c;
          }
        }
      }
    }
  }
}

// Values 2^-100 and 2^-110 times as large give outputs as much smaller, to a few ulp: every
// float in the int8 format and kernel scales exactly by a power of two while it stays normal.
// Their tiles' largest p' (near 2^-107 and 2^-117) once added nothing (below 2^-100); at 2^-117
// the int8 P V's kI8ProbabilityMax / max would overflow unless p' is rounded times 2^64.
void CheckI8TinyValues(const simd::AttentionKernel& kernel) {
  if (kernel.kv != simd::KvType::kI8) return;
  for (float tiny_scale : {0x1p-100f, 0x1p-110f}) {
    Head head(kernel, 3, 300, 17, 41);
    std::vector<float> out(3 * head.ld), tiny(3 * head.ld);
    head.Run(head.Args(out.data()), {});
    float max_v = 0.0f;  // the accumulators' scale, whose ulps the two runs' roundings differ by
    for (float& x : head.v) {
      max_v = std::max(max_v, std::fabs(x));
      x *= tiny_scale;
    }
    head.Run(head.Args(tiny.data()), {});
    for (size_t i = 0; i < 3; ++i) {
      for (size_t c = 0; c < head.dk; ++c) {
        ASSERT_NEAR(tiny[i * head.ld + c] / tiny_scale, out[i * head.ld + c], 1e-6f * max_v)
            << "scale " << tiny_scale << " row " << i << " col " << c;
      }
    }
  }
}

// A NaN key or value poisons the rows that see it (NaN). Rows that do not see a NaN key stay
// finite; a NaN value, as in the fp32 kernel, may reach the rows of its block that mask it
// (0 * NaN in P V).
void CheckNonFinite(const simd::AttentionKernel& kernel) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (bool in_values : {false, true}) {
    Head head(kernel, 3, 300, 17, 31);
    (in_values ? head.v : head.k)[200 * head.ld + 4] = nan;
    std::vector<float> out(3 * head.ld), weights(3 * head.lk);
    simd::AttentionHeadArgs args = head.Args(out.data());
    args.mask.causal = true;
    args.mask.causal_offset = 198;  // row 0 sees keys [0, 198], rows 1 and 2 also key 200
    args.weights = weights.data();
    args.ldw = head.lk;
    head.Run(args, {});
    // A NaN key poisons the weights of the rows that see it; a NaN value leaves them finite.
    for (size_t j = 0; j < head.lk; ++j) {
      ASSERT_TRUE(std::isfinite(weights[j])) << j;
      ASSERT_EQ(std::isnan(weights[2 * head.lk + j]), !in_values) << "in_values=" << in_values;
    }
    // A NaN key makes the row's scores NaN; a NaN value its column (int8: the row's scale).
    for (size_t c = 0; c < head.dk; ++c) {
      if (in_values && c != 4 && kernel.kv != simd::KvType::kI8) continue;
      if (!in_values) {
        EXPECT_TRUE(std::isfinite(out[c]));
      }
      EXPECT_TRUE(std::isnan(out[2 * head.ld + c])) << "in_values=" << in_values << " col " << c;
    }
  }
}

// A NaN query value makes every score of its row NaN, which the row maximum misses: the row
// must come out NaN (not zeros, as for a row whose keys are all masked), its neighbours finite.
void CheckNanQuery(const simd::AttentionKernel& kernel) {
  for (size_t lk : {1, 300}) {
    Head head(kernel, 3, lk, 17, 31);
    head.q[1 * head.ld + 3] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> out(3 * head.ld);
    head.Run(head.Args(out.data()), {});
    for (size_t c = 0; c < head.dk; ++c) {
      EXPECT_TRUE(std::isfinite(out[c]) && std::isfinite(out[2 * head.ld + c]))
          << "lk=" << lk << " col " << c;
      EXPECT_TRUE(std::isnan(out[head.ld + c]))
          << "lk=" << lk << " col " << c << " " << out[head.ld + c];
    }
  }
}

// An infinite query or key value makes its row's (its key's) int8 scale infinite and its bytes
// -128 (NaN times the zero inverse), the one input where the maddubs kernel's negated bytes
// wrap: every row it reaches must still come out NaN, the others finite.
void CheckI8Infinities(const simd::AttentionKernel& kernel) {
  if (kernel.kv != simd::KvType::kI8) return;
  for (bool in_key : {false, true}) {
    for (float sign : {1.0f, -1.0f}) {
      Head head(kernel, 3, 300, 17, 31);
      (in_key ? head.k[200 * head.ld + 3] : head.q[1 * head.ld + 3]) = sign * HUGE_VALF;
      std::vector<float> out(3 * head.ld);
      simd::AttentionHeadArgs args = head.Args(out.data());
      args.mask.causal = true;
      args.mask.causal_offset = 198;  // row r sees keys [0, 198 + r]: key 200 only row 2
      head.Run(args, {});
      const size_t poisoned = in_key ? 2 : 1;
      for (size_t r = 0; r < 3; ++r) {
        for (size_t c = 0; c < head.dk; ++c) {
          EXPECT_EQ(std::isnan(out[r * head.ld + c]), r == poisoned)
              << "in_key=" << in_key << " sign=" << sign << " row " << r << " col " << c;
          if (r != poisoned) {
            EXPECT_TRUE(std::isfinite(out[r * head.ld + c]));
          }
        }
      }
    }
  }
}

}  // namespace

// An instance per target. The kernels' tests, compiled once, reach its kernels by dynamic
// dispatch.
HWY_BEFORE_TEST(AttentionKvTest);
TEST_P(AttentionKvTest, TestCompactKvMatchesModel) { ForEachKernel(GetParam(), CheckMatchesModel); }
TEST_P(AttentionKvTest, TestCompactKvVariantsAgree) {
  ForEachKernel(GetParam(), CheckVariantsAgree);
}
TEST_P(AttentionKvTest, TestCompactKvWeights) { ForEachKernel(GetParam(), CheckWeightsMatchModel); }
TEST_P(AttentionKvTest, TestCompactKvCallWritesOnlyItsRows) {
  ForEachKernel(GetParam(), CheckCallWritesOnlyItsRows);
}
TEST_P(AttentionKvTest, TestCompactKvI8ValuesExact) {
  ForEachKernel(GetParam(), CheckI8ValuesExact);
}
TEST_P(AttentionKvTest, TestCompactKvTinyValues) { ForEachKernel(GetParam(), CheckI8TinyValues); }
TEST_P(AttentionKvTest, TestCompactKvNonFinite) { ForEachKernel(GetParam(), CheckNonFinite); }
TEST_P(AttentionKvTest, TestCompactKvNanQuery) { ForEachKernel(GetParam(), CheckNanQuery); }
TEST_P(AttentionKvTest, TestCompactKvI8Infinities) { ForEachKernel(GetParam(), CheckI8Infinities); }
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionKvTest);
}  // namespace edgeattn
#endif
