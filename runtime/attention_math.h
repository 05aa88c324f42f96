// The attention step's maths beyond plain attention (AttentionMath): its checks, and what the
// operator keeps of it for the forward phases (the learned sinks and norm weights copied, the
// rotary frequencies computed once).
#ifndef EDGEATTN_RUNTIME_ATTENTION_MATH_H_
#define EDGEATTN_RUNTIME_ATTENTION_MATH_H_

#include <cstddef>
#include <vector>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {

// Checks Config::math against the configuration (head_dim for the rotary dims).
void ValidateAttentionMath(const Config& config);
// Checks WeightsView::sinks, q_norm_weight and k_norm_weight against config.math.
void ValidateMathWeights(const Config& config, const WeightsView& weights);

struct StepMath {
  float scale = 0.0f;  // of Q K^T
  float softcap = 0.0f;
  std::size_t window = 0;
  std::vector<float> sinks;                         // [heads], or empty: none
  std::vector<float> q_norm_weight, k_norm_weight;  // [head_dim], or empty: no norm
  float norm_eps = 0.0f;
  std::size_t rotary_dim = 0;  // 0: no rotary embedding
  bool interleaved = false;
  float rotary_scaling = 1.0f;
  std::vector<float> inv_freq;  // [rotary_dim / 2]

  // Q and K rows are transformed before they are scored.
  bool transforms_heads() const { return !q_norm_weight.empty() || rotary_dim != 0; }
};

// The operator's StepMath from a validated configuration and weights (weights null: an int8
// file, which holds no sinks or norm weights).
StepMath ResolveStepMath(const Config& config, const WeightsView* weights);

// Checks optional positions [length] (ForwardOptions::positions, key_positions) named `name`:
// only with a rotary embedding, each below kMaxPosition.
const std::size_t* CheckPositions(const char* name, const Span<const std::size_t>& positions,
                                  std::size_t length, const AttentionMath& math);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_ATTENTION_MATH_H_
