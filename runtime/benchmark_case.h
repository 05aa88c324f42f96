// The shapes edgeattn is measured on and their seeded random weights and inputs, shared by the
// CLI's bench command and the Google Benchmark suites so both measure the same thing.
#ifndef EDGEATTN_RUNTIME_BENCHMARK_CASE_H_
#define EDGEATTN_RUNTIME_BENCHMARK_CASE_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {

struct ShapeSpec {
  std::string name;
  std::size_t seq;
  std::size_t d_model;
  std::size_t heads;
};

// The shapes edgeattn is measured on (self-attention, batch 1), from models apps embed:
// a tiny encoder, MiniLM, BERT-base and Whisper-tiny's encoder (1500 audio frames).
inline const std::vector<ShapeSpec>& ContractShapes() {
  static const std::vector<ShapeSpec> kShapes = {
      {"tiny", 64, 256, 4},
      {"minilm", 128, 384, 12},
      {"bert", 128, 768, 12},
      {"whisper", 1500, 384, 6},
  };
  return kShapes;
}

// The decode shape: one new query position against a cache of `seq` positions.
inline const ShapeSpec& DecodeShape() {
  static const ShapeSpec kShape = {"decode", 512, 768, 12};
  return kShape;
}

// The cross-attention decode step: one decoder position of Whisper-tiny (d 384, 6 heads)
// against `seq` encoder frames (its 30-second window).
inline const ShapeSpec& CrossStepShape() {
  static const ShapeSpec kShape = {"whisper", 1500, 384, 6};
  return kShape;
}

// The decode shape's windowed row: a window of 512 at a cache of 4096 positions.
struct WindowedDecodeSpec {
  std::size_t window, cache_len;
};
inline const WindowedDecodeSpec& WindowedDecodeShape() {
  static const WindowedDecodeSpec kSpec = {512, 4096};
  return kSpec;
}

// Floating-point operations of one forward call (2 per multiply-add): the query and output
// projections over lq rows, the key and value projections (kv_dim wide: d for multi-head
// attention, less for grouped-query) over lk rows, and the attention core (Q K^T and P V) as if
// unmasked, so that masked calls show their effective rate.
inline double ForwardFlops(std::size_t batch, std::size_t lq, std::size_t lk, std::size_t d,
                           std::size_t kv_dim = 0) {
  const double dd = static_cast<double>(d);
  const double kv = kv_dim == 0 ? dd : static_cast<double>(kv_dim);
  return static_cast<double>(batch) *
         (4.0 * lq * dd * dd + 4.0 * lk * dd * kv + 4.0 * double(lq) * double(lk) * dd);
}

// Floating-point operations of one decode step: n new positions per sequence, projected alone,
// attending to the `cached` earlier positions and to themselves.
inline double DecodeFlops(std::size_t batch, std::size_t n, std::size_t cached, std::size_t d,
                          std::size_t kv_dim = 0) {
  const double dd = static_cast<double>(d);
  const double kv = kv_dim == 0 ? dd : static_cast<double>(kv_dim);
  return static_cast<double>(batch) * static_cast<double>(n) *
         (4.0 * dd * dd + 4.0 * dd * kv + 4.0 * static_cast<double>(cached + n) * dd);
}

// Weights ~ N(0, 1/d) and biases ~ N(0, 0.02^2), as trained layers have them, from a fixed
// seed. With kv_heads (a divisor of heads other than heads) the input projections are separate,
// as grouped-query models store them, with kv_heads * d / heads rows for keys and values.
struct RandomModel {
  Config config;
  std::vector<float> in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias;
  std::vector<float> q_proj_weight, k_proj_weight, v_proj_weight;

  RandomModel(std::size_t d, std::size_t heads, std::uint32_t seed = 42, std::size_t kv_heads = 0)
      : config{d, heads} {
    std::mt19937 rng(seed);
    const auto fill = [&](std::vector<float>& v, std::size_t n, float stddev) {
      std::normal_distribution<float> dist(0.0f, stddev);
      v.resize(n);
      for (float& x : v) x = dist(rng);
    };
    const float sd = 1.0f / std::sqrt(static_cast<float>(d));
    if (kv_heads == 0 || kv_heads == heads) {
      fill(in_proj_weight, 3 * d * d, sd);
      fill(in_proj_bias, 3 * d, 0.02f);
    } else {
      config.num_kv_heads = kv_heads;
      const std::size_t kv_dim = heads == 0 ? 0 : kv_heads * (d / heads);
      fill(q_proj_weight, d * d, sd);
      fill(k_proj_weight, kv_dim * d, sd);
      fill(v_proj_weight, kv_dim * d, sd);
      fill(in_proj_bias, d + 2 * kv_dim, 0.02f);
    }
    fill(out_proj_weight, d * d, sd);
    fill(out_proj_bias, d, 0.02f);
  }

  // The attention step's maths of the operators built from this model; a norm of Q and K gets
  // unit weights.
  void SetMath(const AttentionMath& math) {
    config.math = math;
    unit_norm_weight.assign(math.qk_norm ? config.d_model / config.num_heads : 0, 1.0f);
  }

  WeightsView view() const {
    const auto span = [](const std::vector<float>& v) {
      return FloatSpan{v.empty() ? nullptr : v.data(), v.size()};
    };
    WeightsView w;
    w.in_proj_weight = span(in_proj_weight);
    w.in_proj_bias = span(in_proj_bias);
    w.out_proj_weight = span(out_proj_weight);
    w.out_proj_bias = span(out_proj_bias);
    w.q_proj_weight = span(q_proj_weight);
    w.k_proj_weight = span(k_proj_weight);
    w.v_proj_weight = span(v_proj_weight);
    w.q_norm_weight = w.k_norm_weight = span(unit_norm_weight);
    return w;
  }

 private:
  std::vector<float> unit_norm_weight;
};

// Activations ~ N(0, 1) from a fixed seed.
inline std::vector<float> RandomActivations(std::size_t n, std::uint32_t seed = 7) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_BENCHMARK_CASE_H_
