#include "edgeattn/reference.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/mha_validation.h"

namespace edgeattn {
namespace {

// y[r][n] = sum_k x[r][k] * w[n][k] + bias[n], for r < rows and n < n_out.
std::vector<double> Project(const float* x, std::size_t rows, std::size_t d, const float* w,
                            const float* bias, std::size_t n_out) {
  std::vector<double> y(rows * n_out);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t n = 0; n < n_out; ++n) {
      double sum = bias != nullptr ? bias[n] : 0.0;
      for (std::size_t k = 0; k < d; ++k) sum += static_cast<double>(x[r * d + k]) * w[n * d + k];
      y[r * n_out + n] = sum;
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
        const double inv_freq = std::pow(static_cast<double>(m.rotary_base),
                                         -2.0 * static_cast<double>(i) / dims);
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

}  // namespace

void ReferenceForward(const Config& config, const WeightsView& weights, ConstTensor query,
                      ConstTensor key, ConstTensor value, Tensor out,
                      const ForwardOptions& options) {
  ValidateConfig(config);
  ValidateWeights(config, weights);
  MhaOptions o;
  const MhaShape s = ValidateForward(config, query, key, value, out, options, &o);
  const ProjectionWeights w = SplitProjections(config, weights);
  const std::size_t d = s.d_model;
  const std::size_t dk = s.head_dim();
  const std::size_t kvd = s.kv_dim();
  const std::size_t group = s.heads / s.kv_heads;
  const AttentionMath& m = config.math;
  const double scale =
      m.score_scale != 0.0f ? m.score_scale : 1.0 / std::sqrt(static_cast<double>(dk));
  const double neg_inf = -std::numeric_limits<double>::infinity();
  const std::size_t weights_size = s.lq * s.lk;
  if (o.weights != nullptr) {
    const std::size_t n = s.batch * weights_size *
                          (o.weights_mode == AttentionWeights::kPerHead ? s.heads : 1);
    for (std::size_t i = 0; i < n; ++i) o.weights[i] = 0.0f;
  }

  for (std::size_t b = 0; b < s.batch; ++b) {
    const std::size_t lq = o.query_lengths != nullptr ? o.query_lengths[b] : s.lq;
    const std::size_t lk = o.key_lengths != nullptr ? o.key_lengths[b] : s.lk;
    const std::vector<double> q =
        TransformedHeads(Project(query.data + b * s.lq * d, lq, d, w.q, w.q_bias, d), lq, s.heads,
                         dk, config, weights.q_norm_weight, o.positions);
    const std::vector<double> k =
        TransformedHeads(Project(key.data + b * s.lk * d, lk, d, w.k, w.k_bias, kvd), lk,
                         s.kv_heads, dk, config, weights.k_norm_weight, o.key_positions);
    const std::vector<double> v = Project(value.data + b * s.lk * d, lk, d, w.v, w.v_bias, kvd);
    std::vector<double> concat(lq * d, 0.0);
    std::vector<double> p(lk);
    for (std::size_t h = 0; h < s.heads; ++h) {
      const std::size_t g = h / group;
      const float* mask = o.attn_mask == nullptr ? nullptr
                          : o.attn_mask + (o.mask_per_head ? (b * s.heads + h) * weights_size : 0);
      const double sink = weights.sinks.data != nullptr ? weights.sinks.data[h] : neg_inf;
      for (std::size_t i = 0; i < lq; ++i) {
        double max = sink;
        for (std::size_t j = 0; j < lk; ++j) {
          double dot = 0.0;
          for (std::size_t c = 0; c < dk; ++c) dot += q[i * d + h * dk + c] * k[j * kvd + g * dk + c];
          p[j] = dot * scale;
          if (m.softcap != 0.0f) p[j] = m.softcap * std::tanh(p[j] / m.softcap);
          if (!InWindow(m.window, i, j)) p[j] = neg_inf;
          if (mask != nullptr) p[j] += mask[i * s.lk + j];
          if (o.key_padding != nullptr && o.key_padding[b * s.lk + j]) p[j] = neg_inf;
          if (o.causal && j > i) p[j] = neg_inf;
          max = std::fmax(max, p[j]);
        }
        // The sink joins the denominator with no value.
        double sum = sink == neg_inf ? 0.0 : std::exp(sink - max);
        for (std::size_t j = 0; j < lk; ++j) {
          p[j] = max == neg_inf ? 0.0 : std::exp(p[j] - max);
          sum += p[j];
        }
        if (sum == 0.0) continue;  // every key masked: this head contributes zeros
        for (std::size_t c = 0; c < dk; ++c) {
          double acc = 0.0;
          for (std::size_t j = 0; j < lk; ++j) acc += p[j] * v[j * kvd + g * dk + c];
          concat[i * d + h * dk + c] = acc / sum;
        }
        if (o.weights != nullptr) {
          const bool per_head = o.weights_mode == AttentionWeights::kPerHead;
          float* row = o.weights + (per_head ? (b * s.heads + h) * weights_size
                                             : b * weights_size) + i * s.lk;
          for (std::size_t j = 0; j < lk; ++j) {
            row[j] += static_cast<float>(p[j] / sum / (per_head ? 1.0 : double(s.heads)));
          }
        }
      }
    }
    for (std::size_t i = 0; i < s.lq; ++i) {
      for (std::size_t n = 0; n < d; ++n) {
        double acc = 0.0;
        if (i < lq) {
          acc = w.out_bias != nullptr ? w.out_bias[n] : 0.0;
          for (std::size_t c = 0; c < d; ++c) acc += concat[i * d + c] * w.out[n * d + c];
        }
        out.data[(b * s.lq + i) * d + n] = static_cast<float>(acc);
      }
    }
  }
}

}  // namespace edgeattn
