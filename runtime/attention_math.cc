#include "runtime/attention_math.h"

#include <cmath>
#include <string>

#include "runtime/mha_validation.h"
#include "runtime/text_checks.h"

namespace edgeattn {
namespace {

// A float option that is 0 (off) or finite and positive.
void CheckOffOrPositive(const char* name, float value) {
  if (!(value == 0.0f || (std::isfinite(value) && value > 0.0f))) {
    throw Error(std::string("Config.math.") + name +
                ": expected 0 (off) or a finite positive value, got " + FloatStr(value));
  }
}

void CheckPositive(const char* name, float value) {
  if (!(std::isfinite(value) && value > 0.0f)) {
    throw Error(std::string("Config.math.") + name + ": expected a finite positive value, got " +
                FloatStr(value));
  }
}

void CheckRotary(const AttentionMath& m, std::size_t head_dim) {
  if (m.rotary != RotaryLayout::kNone && m.rotary != RotaryLayout::kHalves &&
      m.rotary != RotaryLayout::kInterleaved) {
    throw Error("Config.math.rotary: expected kNone, kHalves or kInterleaved, got " +
                Str(static_cast<std::size_t>(m.rotary)));
  }
  if (m.rotary == RotaryLayout::kNone) {
    if (m.rotary_dim != 0) {
      throw Error("Config.math.rotary_dim: expected 0 without a rotary layout, got " +
                  Str(m.rotary_dim));
    }
    return;
  }
  // Left at 0, rotary_dim is the head width: an odd one is the head count's doing.
  if (m.rotary_dim == 0 && head_dim % 2 != 0) {
    throw Error(
        "Config.math.rotary: rotates channel pairs, expected an even head_dim (d_model / "
        "num_heads) or an even rotary_dim below it, got head_dim " +
        Str(head_dim));
  }
  const std::size_t dims = m.rotary_dim != 0 ? m.rotary_dim : head_dim;
  if (dims > head_dim || dims % 2 != 0) {
    throw Error("Config.math.rotary_dim: expected 0 (= head_dim) or an even count in [2, " +
                Str(head_dim) + "] (head_dim), got " + Str(dims));
  }
  if (!(std::isfinite(m.rotary_base) && m.rotary_base > 1.0f)) {
    throw Error("Config.math.rotary_base: expected a finite value above 1, got " +
                FloatStr(m.rotary_base));
  }
  CheckPositive("rotary_scaling", m.rotary_scaling);
}

// An optional per-head weight: absent, or `size` finite floats.
void CheckWeight(const char* name, const FloatSpan& span, std::size_t size, bool wanted,
                 const char* shape, const char* when) {
  if (span.data == nullptr && span.size != 0) {
    throw Error(std::string(name) + ": got a null pointer with size " + Str(span.size));
  }
  if (span.data == nullptr) {
    if (wanted) {
      throw Error(std::string(name) + ": expected " + Str(size) + " floats " + shape + " " + when +
                  ", got none");
    }
    return;
  }
  if (!wanted) throw Error(std::string(name) + ": given, but " + when + " is off");
  if (span.size != size) {
    throw Error(std::string(name) + ": expected " + Str(size) + " floats " + shape + ", got " +
                Str(span.size));
  }
  CheckFinite(name, span);
}

}  // namespace

void ValidateAttentionMath(const Config& config) {
  const AttentionMath& m = config.math;
  CheckOffOrPositive("score_scale", m.score_scale);
  CheckOffOrPositive("softcap", m.softcap);
  if (m.window > kMaxPosition) {
    throw Error("Config.math.window: expected 0 (off) or a value in [1, " + Str(kMaxPosition) +
                "], got " + Str(m.window));
  }
  if (m.qk_norm) CheckPositive("qk_norm_eps", m.qk_norm_eps);
  CheckRotary(m, config.d_model / config.num_heads);
}

void ValidateMathWeights(const Config& config, const WeightsView& weights) {
  const std::size_t dk = config.d_model / config.num_heads;
  const std::string heads = "[num_heads = " + Str(config.num_heads) + "]";
  const std::string dims = "[head_dim = " + Str(dk) + "]";
  if (weights.sinks.data != nullptr || weights.sinks.size != 0) {
    CheckWeight("sinks", weights.sinks, config.num_heads, true, heads.c_str(), "");
  }
  CheckWeight("q_norm_weight", weights.q_norm_weight, dk, config.math.qk_norm, dims.c_str(),
              "with Config.math.qk_norm");
  CheckWeight("k_norm_weight", weights.k_norm_weight, dk, config.math.qk_norm, dims.c_str(),
              "with Config.math.qk_norm");
}

StepMath ResolveStepMath(const Config& config, const WeightsView* weights) {
  const AttentionMath& m = config.math;
  const std::size_t dk = config.d_model / config.num_heads;
  StepMath s;
  s.scale = m.score_scale != 0.0f ? m.score_scale : 1.0f / std::sqrt(static_cast<float>(dk));
  s.softcap = m.softcap;
  s.window = m.window;
  if (m.qk_norm && weights == nullptr) {
    throw Error(
        "Config.math.qk_norm: needs q_norm_weight and k_norm_weight, which int8 files "
        "do not hold (build the operator from a WeightsView)");
  }
  if (weights != nullptr) {
    const auto copy = [](const FloatSpan& span) {
      return std::vector<float>(span.data, span.data + span.size);
    };
    s.sinks = copy(weights->sinks);
    s.q_norm_weight = copy(weights->q_norm_weight);
    s.k_norm_weight = copy(weights->k_norm_weight);
  }
  s.norm_eps = m.qk_norm_eps;
  if (m.rotary != RotaryLayout::kNone) {
    s.rotary_dim = m.rotary_dim != 0 ? m.rotary_dim : dk;
    s.interleaved = m.rotary == RotaryLayout::kInterleaved;
    s.rotary_scaling = m.rotary_scaling;
    // As PyTorch models compute it: 1 / base^(arange(0, dim, 2) / dim) in float.
    for (std::size_t i = 0; i < s.rotary_dim; i += 2) {
      const float exponent = static_cast<float>(i) / static_cast<float>(s.rotary_dim);
      s.inv_freq.push_back(1.0f / std::pow(m.rotary_base, exponent));
    }
  }
  return s;
}

const std::size_t* CheckPositions(const char* name, const Span<const std::size_t>& positions,
                                  std::size_t length, const AttentionMath& math) {
  if (positions.data == nullptr && positions.size != 0) {
    throw Error(std::string(name) + ": got a null pointer with size " + Str(positions.size));
  }
  if (positions.data == nullptr) return nullptr;
  if (math.rotary == RotaryLayout::kNone) {
    throw Error(std::string(name) +
                ": given, but the operator has no rotary embedding "
                "(Config.math.rotary)");
  }
  if (positions.size != length) {
    throw Error(std::string(name) + ": expected " + Str(length) + " positions, got " +
                Str(positions.size));
  }
  for (std::size_t i = 0; i < length; ++i) {
    if (positions.data[i] >= kMaxPosition) {
      throw Error(std::string(name) + "[" + Str(i) + "]: expected a position below " +
                  Str(kMaxPosition) + ", got " + Str(positions.data[i]));
    }
  }
  return positions.data;
}

}  // namespace edgeattn
