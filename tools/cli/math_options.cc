#include "tools/cli/math_options.h"
#include "tools/cli/whole_number.h"

#include <cmath>

#include <CLI/CLI.hpp>

namespace edgeattn {
namespace cli {
namespace {

std::string FloatText(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return std::to_string(value);
}

// 0 (off) or a finite positive value.
float OffOrPositive(const char* flag, float value) {
  if (value == 0.0f || (std::isfinite(value) && value > 0.0f)) return value;
  throw Error(std::string(flag) + ": expected 0 (off) or a finite positive number, got " +
              FloatText(value));
}

}  // namespace

AttentionMath MathFlags::ToMath() const {
  AttentionMath m;
  if (window > kMaxPosition) {
    throw Error("--window: expected 0 (off) or at most " + std::to_string(kMaxPosition) + ", got " +
                std::to_string(window));
  }
  m.window = window;
  m.score_scale = OffOrPositive("--score-scale", score_scale);
  m.softcap = OffOrPositive("--softcap", softcap);
  m.qk_norm = OffOrPositive("--qk-norm-eps", qk_norm_eps) > 0.0f;
  if (m.qk_norm) m.qk_norm_eps = qk_norm_eps;
  m.rotary = rotary == "halves"        ? RotaryLayout::kHalves
             : rotary == "interleaved" ? RotaryLayout::kInterleaved
                                       : RotaryLayout::kNone;
  if (m.rotary == RotaryLayout::kNone &&
      (rotary_dim != 0 || rotary_base != 10000.0f || rotary_scaling != 1.0f)) {
    throw Error(
        "--rotary-dim, --rotary-base, --rotary-scaling: expected with --rotary-layout "
        "halves or interleaved, got --rotary-layout none");
  }
  if (rotary_dim % 2 != 0) {
    throw Error("--rotary-dim: expected an even number of dims (pairs), got " +
                std::to_string(rotary_dim));
  }
  if (!(std::isfinite(rotary_base) && rotary_base > 1.0f)) {
    throw Error("--rotary-base: expected a finite number above 1, got " + FloatText(rotary_base));
  }
  if (!(std::isfinite(rotary_scaling) && rotary_scaling > 0.0f)) {
    throw Error("--rotary-scaling: expected a finite positive number, got " +
                FloatText(rotary_scaling));
  }
  m.rotary_dim = rotary_dim;
  m.rotary_base = rotary_base;
  m.rotary_scaling = rotary_scaling;
  return m;
}

void AddRotaryFlags(CLI::App* app, MathFlags* flags) {
  const auto number = NotEmpty("a number");
  app->add_option("--rotary-layout", flags->rotary,
                  "Rotary position embedding of Q and K: halves (Llama, NeoX), interleaved "
                  "(GPT-J) or none")
      ->check(CLI::IsMember({"none", "halves", "interleaved"}))
      ->capture_default_str();
  app->add_option("--rotary-dim", flags->rotary_dim,
                  "Dims of each head rotated (even; 0: all of head_dim)")
      ->check(CheckWholeNumber);
  app->add_option("--rotary-base", flags->rotary_base, "Rotary frequency base")
      ->check(number)
      ->capture_default_str();
  app->add_option("--rotary-scaling", flags->rotary_scaling,
                  "Linear rotary scaling: positions are divided by it")
      ->check(number)
      ->capture_default_str();
}

void AddMathFlags(CLI::App* app, MathFlags* flags) {
  const auto number = NotEmpty("a number");
  app->add_option("--window", flags->window,
                  "Sliding-window attention: a query sees keys less than this many positions "
                  "away (0: all); a decode cache then holds only the window")
      ->check(CheckWholeNumber);
  app->add_option("--score-scale", flags->score_scale,
                  "Multiply Q K^T by this instead of 1/sqrt(head_dim) (0: that default)")
      ->check(number);
  app->add_option("--softcap", flags->softcap,
                  "Logit soft-capping: scores become softcap * tanh(score / softcap) (0: off)")
      ->check(number);
  AddRotaryFlags(app, flags);
  app->add_option("--qk-norm-eps", flags->qk_norm_eps,
                  "RMS norm of Q and K per head with this epsilon (0: off): run uses the "
                  "layer's q_norm.weight and k_norm.weight, bench unit weights")
      ->check(number);
}

}  // namespace cli
}  // namespace edgeattn
