// The flags of the attention step's maths (AttentionMath) shared by run and bench (and the rotary
// ones by quantize).
#ifndef EDGEATTN_TOOLS_CLI_MATH_OPTIONS_H_
#define EDGEATTN_TOOLS_CLI_MATH_OPTIONS_H_

#include <string>

#include "edgeattn/edgeattn.hpp"
#include "tools/cli/cli_app.h"

namespace edgeattn {
namespace cli {

struct MathFlags {
  std::size_t window = 0;
  float score_scale = 0.0f;
  float softcap = 0.0f;
  std::string rotary = "none";
  std::size_t rotary_dim = 0;
  float rotary_base = 10000.0f;
  float rotary_scaling = 1.0f;
  float qk_norm_eps = 0.0f;  // > 0: RMS norm of Q and K

  // The flags checked, each error naming its flag.
  AttentionMath ToMath() const;
};

// --window, --score-scale, --softcap, the rotary flags, --qk-norm-eps.
void AddMathFlags(CLI::App* app, MathFlags* flags);

// --rotary-layout, --rotary-dim, --rotary-base, --rotary-scaling alone: quantize checks a file's
// stored rotary frequencies with them (its int8 file records none).
void AddRotaryFlags(CLI::App* app, MathFlags* flags);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_MATH_OPTIONS_H_
