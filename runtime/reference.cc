#include "edgeattn/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/mha_validation.h"

namespace edgeattn {
namespace {

// x in float's range: +-inf where rounding x to float would overflow (from FLT_MAX + half its
// ulp on, ties going to the even infinity), x itself otherwise. The reference computes in double
// for its precision, not its range: where Forward (and PyTorch) store a projection or a score in
// float, a value too large for float is infinite here too.
double InFloatRange(double x) {
  constexpr double kOverflow = (2.0 - 0x1p-24) * 0x1p127;
  return std::fabs(x) >= kOverflow ? std::copysign(std::numeric_limits<double>::infinity(), x) : x;
}

// y[r][n] = sum_k x[r][k] * w[n][k] + bias[n], for r < rows and n < n_out.
std::vector<double> Project(const float* x, std::size_t rows, std::size_t d, const float* w,
                            const float* bias, std::size_t n_out) {
  std::vector<double> y(rows * n_out);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t n = 0; n < n_out; ++n) {
      double sum = bias != nullptr ? bias[n] : 0.0;
      for (std::size_t k = 0; k < d; ++k) sum += static_cast<double>(x[r * d + k]) * w[n * d + k];
      y[r * n_out + n] = InFloatRange(sum);
    }
  }
  return y;
}

// RMS norm of each of `heads` heads of dk values per row, with a learned weight.
void NormHeads(std::vector<double>& x, std::size_t rows, std::size_t heads, std::size_t dk,
               const FloatSpan& weight, double eps) {
  for (std::size_t r = 0; r < rows * heads; ++r) {
    double* head = x.data() + r * dk;
    double sum = 0.0;
    for (std::size_t c = 0; c < dk; ++c) sum += head[c] * head[c];
    const double scale = 1.0 / std::sqrt(sum / static_cast<double>(dk) + eps);
    for (std::size_t c = 0; c < dk; ++c) head[c] *= scale * weight.data[c];
  }
}

// Rotary embedding of each head of each row (row r at positions[r], or r when null).
void RotateHeads(std::vector<double>& x, std::size_t rows, std::size_t heads, std::size_t dk,
                 const AttentionMath& m, const std::size_t* positions) {
  const std::size_t dims = m.rotary_dim != 0 ? m.rotary_dim : dk;
  const std::size_t half = dims / 2;
  for (std::size_t r = 0; r < rows; ++r) {
    const double position = static_cast<double>(positions != nullptr ? positions[r] : r);
    for (std::size_t h = 0; h < heads; ++h) {
      double* head = x.data() + (r * heads + h) * dk;
      for (std::size_t i = 0; i < half; ++i) {
        const double inv_freq =
            std::pow(static_cast<double>(m.rotary_base), -2.0 * static_cast<double>(i) / dims);
        const double angle = position / m.rotary_scaling * inv_freq;
        const bool interleaved = m.rotary == RotaryLayout::kInterleaved;
        double& a = head[interleaved ? 2 * i : i];
        double& b = head[interleaved ? 2 * i + 1 : i + half];
        const double a0 = a, b0 = b;
        a = a0 * std::cos(angle) - b0 * std::sin(angle);
        b = b0 * std::cos(angle) + a0 * std::sin(angle);
      }
    }
  }
}

// Q or K of one batch item with the attention step's per-head transforms.
std::vector<double> TransformedHeads(std::vector<double> x, std::size_t rows, std::size_t heads,
                                     std::size_t dk, const Config& config,
                                     const FloatSpan& norm_weight, const std::size_t* positions) {
  const AttentionMath& m = config.math;
  if (m.qk_norm) NormHeads(x, rows, heads, dk, norm_weight, m.qk_norm_eps);
  if (m.rotary != RotaryLayout::kNone) RotateHeads(x, rows, heads, dk, m, positions);
  return x;
}

// Whether the query at position i sees the key at position j under the window.
bool InWindow(std::size_t window, std::size_t i, std::size_t j) {
  return window == 0 || (i >= j ? i - j : j - i) < window;
}

// One forward's inputs and the constants every phase reads.
struct Forward {
  const Config& config;
  const WeightsView& weights;
  const MhaShape& s;
  const MhaOptions& o;
  const ProjectionWeights& w;
  std::size_t d, dk, kvd, group;
  double scale;
};

// Q, K and V of one batch item with its query and key lengths, as the heads read them.
struct ItemProjections {
  std::size_t lq, lk;
  std::vector<double> q, k, v;
};

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The weights are summed into (averaged over heads), so they start at zero; so do the entries of
// rows and keys past a batch item's lengths.
void ZeroWeights(const Forward& f) {
  if (f.o.weights == nullptr) return;
  const std::size_t n = f.s.batch * f.s.lq * f.s.lk *
                        (f.o.weights_mode == AttentionWeights::kPerHead ? f.s.heads : 1);
  for (std::size_t i = 0; i < n; ++i) f.o.weights[i] = 0.0f;
}

ItemProjections ProjectItem(const Forward& f, ConstTensor query, ConstTensor key, ConstTensor value,
                            std::size_t b) {
  const MhaShape& s = f.s;
  const MhaOptions& o = f.o;
  const ProjectionWeights& w = f.w;
  ItemProjections x;
  x.lq = o.query_lengths != nullptr ? o.query_lengths[b] : s.lq;
  x.lk = o.key_lengths != nullptr ? o.key_lengths[b] : s.lk;
  x.q = TransformedHeads(Project(query.data + b * s.lq * f.d, x.lq, f.d, w.q, w.q_bias, f.d), x.lq,
                         s.heads, f.dk, f.config, f.weights.q_norm_weight, o.positions);
  x.k = TransformedHeads(Project(key.data + b * s.lk * f.d, x.lk, f.d, w.k, w.k_bias, f.kvd), x.lk,
                         s.kv_heads, f.dk, f.config, f.weights.k_norm_weight, o.key_positions);
  x.v = Project(value.data + b * s.lk * f.d, x.lk, f.d, w.v, w.v_bias, f.kvd);
  return x;
}

// p[j] = the score of query i against key j of head h (scaled, capped, masked) for j < lk;
// returns their maximum with the sink's, NaN if a score the row sees is NaN (so that the row
// is NaN, as a non-finite input makes it in Forward, rather than taken for all masked).
double ScoreRow(const Forward& f, const ItemProjections& x, std::size_t b, std::size_t h,
                std::size_t i, const float* mask, double sink, std::vector<double>& p) {
  const AttentionMath& m = f.config.math;
  const MhaOptions& o = f.o;
  const std::size_t g = h / f.group;
  double max = sink;
  for (std::size_t j = 0; j < x.lk; ++j) {
    double dot = 0.0;
    for (std::size_t c = 0; c < f.dk; ++c) {
      dot += x.q[i * f.d + h * f.dk + c] * x.k[j * f.kvd + g * f.dk + c];
    }
    p[j] = InFloatRange(dot * f.scale);
    if (m.softcap != 0.0f) p[j] = m.softcap * std::tanh(p[j] / m.softcap);
    // Masks meet a NaN score as in Forward: attn_mask is added (as in PyTorch), so NaN stays;
    // padding, the window and causality remove the key, NaN or not.
    if (mask != nullptr) p[j] += mask[i * f.s.lk + j];
    if ((o.key_padding != nullptr && o.key_padding[b * f.s.lk + j]) ||
        !InWindow(m.window, i, j) || (o.causal && j > i)) {
      p[j] = kNegInf;
    }
    max = std::isnan(max) || std::isnan(p[j]) ? std::numeric_limits<double>::quiet_NaN()
                                               : std::max(max, p[j]);
  }
  return max;
}

// p[j] = exp(p[j] - max); returns their sum with the sink's, which joins the denominator with no
// value.
double ExponentiateRow(std::size_t lk, double max, double sink, std::vector<double>& p) {
  double sum = sink == kNegInf ? 0.0 : std::exp(sink - max);
  for (std::size_t j = 0; j < lk; ++j) {
    p[j] = max == kNegInf ? 0.0 : std::exp(p[j] - max);
    sum += p[j];
  }
  return sum;
}

// Adds row i's probabilities p / sum of head h to the weights (per head, or averaged).
void AddWeightsRow(const Forward& f, std::size_t b, std::size_t h, std::size_t i, std::size_t lk,
                   const std::vector<double>& p, double sum) {
  const MhaShape& s = f.s;
  const std::size_t weights_size = s.lq * s.lk;
  const bool per_head = f.o.weights_mode == AttentionWeights::kPerHead;
  float* row =
      f.o.weights + (per_head ? (b * s.heads + h) * weights_size : b * weights_size) + i * s.lk;
  for (std::size_t j = 0; j < lk; ++j) {
    row[j] += static_cast<float>(p[j] / sum / (per_head ? 1.0 : double(s.heads)));
  }
}

// Head h of batch item b: softmax(scores) V into its columns of concat (and the weights).
void AttendHead(const Forward& f, const ItemProjections& x, std::size_t b, std::size_t h,
                std::vector<double>& concat, std::vector<double>& p) {
  const MhaOptions& o = f.o;
  const std::size_t g = h / f.group;
  const std::size_t weights_size = f.s.lq * f.s.lk;
  const float* mask =
      o.attn_mask == nullptr
          ? nullptr
          : o.attn_mask + (o.mask_per_head ? (b * f.s.heads + h) * weights_size : 0);
  const double sink = f.weights.sinks.data != nullptr ? f.weights.sinks.data[h] : kNegInf;
  for (std::size_t i = 0; i < x.lq; ++i) {
    const double max = ScoreRow(f, x, b, h, i, mask, sink, p);
    const double sum = ExponentiateRow(x.lk, max, sink, p);
    if (sum == 0.0) continue;  // every key masked: this head contributes zeros
    for (std::size_t c = 0; c < f.dk; ++c) {
      double acc = 0.0;
      for (std::size_t j = 0; j < x.lk; ++j) acc += p[j] * x.v[j * f.kvd + g * f.dk + c];
      concat[i * f.d + h * f.dk + c] = acc / sum;
    }
    if (o.weights != nullptr) AddWeightsRow(f, b, h, i, x.lk, p, sum);
  }
}

// out rows of batch item b = concat W_out^T + bias; zeros past its query length.
void ProjectOutput(const Forward& f, std::size_t b, std::size_t lq,
                   const std::vector<double>& concat, Tensor out) {
  const std::size_t d = f.d;
  for (std::size_t i = 0; i < f.s.lq; ++i) {
    for (std::size_t n = 0; n < d; ++n) {
      double acc = 0.0;
      if (i < lq) {
        acc = f.w.out_bias != nullptr ? f.w.out_bias[n] : 0.0;
        for (std::size_t c = 0; c < d; ++c) acc += concat[i * d + c] * f.w.out[n * d + c];
      }
      out.data[(b * f.s.lq + i) * d + n] = static_cast<float>(InFloatRange(acc));
    }
  }
}

}  // namespace

// In double throughout, in the plainest order: per batch item, the projections, each head's
// attention into the concat buffer, and the output projection.
void ReferenceForward(const Config& config, const WeightsView& weights, ConstTensor query,
                      ConstTensor key, ConstTensor value, Tensor out,
                      const ForwardOptions& options) {
  ValidateConfig(config);
  ValidateWeights(config, weights);
  MhaOptions o;
  const MhaShape s = ValidateForward(config, query, key, value, out, options, &o);
  const ProjectionWeights w = SplitProjections(config, weights);
  const std::size_t dk = s.head_dim();
  const double scale = config.math.score_scale != 0.0f ? config.math.score_scale
                                                       : 1.0 / std::sqrt(static_cast<double>(dk));
  const Forward f{config, weights, s, o, w, s.d_model, dk, s.kv_dim(), s.heads / s.kv_heads, scale};
  ZeroWeights(f);
  for (std::size_t b = 0; b < s.batch; ++b) {
    const ItemProjections x = ProjectItem(f, query, key, value, b);
    std::vector<double> concat(x.lq * f.d, 0.0);
    std::vector<double> p(x.lk);
    for (std::size_t h = 0; h < s.heads; ++h) AttendHead(f, x, b, h, concat, p);
    ProjectOutput(f, b, x.lq, concat, out);
  }
}

}  // namespace edgeattn
