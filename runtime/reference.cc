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
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
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
    const std::vector<double> q = Project(query.data + b * s.lq * d, lq, d, w.q, w.q_bias, d);
    const std::vector<double> k = Project(key.data + b * s.lk * d, lk, d, w.k, w.k_bias, kvd);
    const std::vector<double> v = Project(value.data + b * s.lk * d, lk, d, w.v, w.v_bias, kvd);
    std::vector<double> concat(lq * d, 0.0);
    std::vector<double> p(lk);
    for (std::size_t h = 0; h < s.heads; ++h) {
      const std::size_t g = h / group;
      const float* mask = o.attn_mask == nullptr ? nullptr
                          : o.attn_mask + (o.mask_per_head ? (b * s.heads + h) * weights_size : 0);
      for (std::size_t i = 0; i < lq; ++i) {
        double max = neg_inf;
        for (std::size_t j = 0; j < lk; ++j) {
          double dot = 0.0;
          for (std::size_t c = 0; c < dk; ++c) dot += q[i * d + h * dk + c] * k[j * kvd + g * dk + c];
          p[j] = dot * scale;
          if (mask != nullptr) p[j] += mask[i * s.lk + j];
          if (o.key_padding != nullptr && o.key_padding[b * s.lk + j]) p[j] = neg_inf;
          if (o.causal && j > i) p[j] = neg_inf;
          max = std::fmax(max, p[j]);
        }
        double sum = 0.0;
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
