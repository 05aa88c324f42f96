#include "edgeattn/reference.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/mha_validation.h"

namespace edgeattn {
namespace {

// y[r][n] = sum_k x[r][k] * w[row0 + n][k] + bias[row0 + n], for n < d.
std::vector<double> Project(const float* x, std::size_t rows, std::size_t d, const float* w,
                            const float* bias, std::size_t row0) {
  std::vector<double> y(rows * d);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t n = 0; n < d; ++n) {
      double sum = bias != nullptr ? bias[row0 + n] : 0.0;
      for (std::size_t k = 0; k < d; ++k) {
        sum += static_cast<double>(x[r * d + k]) * w[(row0 + n) * d + k];
      }
      y[r * d + n] = sum;
    }
  }
  return y;
}

}  // namespace

void ReferenceForward(const Config& config, const WeightsView& weights, ConstTensor query,
                      ConstTensor key, ConstTensor value, Tensor out) {
  ValidateConfig(config);
  ValidateWeights(config, weights);
  const MhaShape s = ValidateForward(config, query, key, value, out);
  const std::size_t d = s.d_model;
  const std::size_t dk = d / s.heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
  const float* w_in = weights.in_proj_weight.data;
  const float* b_in = weights.in_proj_bias.data;

  for (std::size_t b = 0; b < s.batch; ++b) {
    const std::vector<double> q = Project(query.data + b * s.lq * d, s.lq, d, w_in, b_in, 0);
    const std::vector<double> k = Project(key.data + b * s.lk * d, s.lk, d, w_in, b_in, d);
    const std::vector<double> v = Project(value.data + b * s.lk * d, s.lk, d, w_in, b_in, 2 * d);
    std::vector<double> concat(s.lq * d, 0.0);
    std::vector<double> p(s.lk);
    for (std::size_t h = 0; h < s.heads; ++h) {
      for (std::size_t i = 0; i < s.lq; ++i) {
        double max = -std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < s.lk; ++j) {
          double dot = 0.0;
          for (std::size_t c = 0; c < dk; ++c) dot += q[i * d + h * dk + c] * k[j * d + h * dk + c];
          p[j] = dot * scale;
          max = std::fmax(max, p[j]);
        }
        double sum = 0.0;
        for (std::size_t j = 0; j < s.lk; ++j) {
          p[j] = std::exp(p[j] - max);
          sum += p[j];
        }
        for (std::size_t c = 0; c < dk; ++c) {
          double acc = 0.0;
          for (std::size_t j = 0; j < s.lk; ++j) acc += p[j] * v[j * d + h * dk + c];
          concat[i * d + h * dk + c] = acc / sum;
        }
      }
    }
    const float* w_out = weights.out_proj_weight.data;
    const float* b_out = weights.out_proj_bias.data;
    for (std::size_t i = 0; i < s.lq; ++i) {
      for (std::size_t n = 0; n < d; ++n) {
        double acc = b_out != nullptr ? b_out[n] : 0.0;
        for (std::size_t c = 0; c < d; ++c) acc += concat[i * d + c] * w_out[n * d + c];
        out.data[(b * s.lq + i) * d + n] = static_cast<float>(acc);
      }
    }
  }
}

}  // namespace edgeattn
