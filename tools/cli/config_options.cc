#include "tools/cli/config_options.h"

#include <string>

namespace edgeattn {
namespace cli {

using std::to_string;

void CheckHeadOptions(std::size_t d_model, std::size_t heads, std::size_t kv_heads) {
  if (d_model < 1 || d_model > kMaxModelDim) {
    throw Error("--d-model: expected a value in [1, " + to_string(kMaxModelDim) + "], got " +
                to_string(d_model));
  }
  if (heads < 1 || heads > d_model) {
    throw Error("--heads: expected a value in [1, " + to_string(d_model) + "] (--d-model), got " +
                to_string(heads));
  }
  if (d_model % heads != 0) {
    throw Error("--d-model and --heads: expected --d-model a multiple of --heads (" +
                to_string(heads) + "), got " + to_string(d_model));
  }
  if (kv_heads != 0 && (kv_heads > heads || heads % kv_heads != 0)) {
    throw Error("--kv-heads: expected a divisor of the heads (" + to_string(heads) + "), got " +
                to_string(kv_heads));
  }
}

void CheckInt8BlockOption(std::size_t int8_block) {
  if (int8_block < 4 || int8_block > kMaxInt8Block || int8_block % 4 != 0) {
    throw Error("--int8-block: expected a multiple of 4 in [4, " + to_string(kMaxInt8Block) +
                "], got " + to_string(int8_block));
  }
}

void CheckRotaryDimOption(const AttentionMath& math, std::size_t head_dim) {
  if (math.rotary == RotaryLayout::kNone || math.rotary_dim == 0) return;
  if (math.rotary_dim > head_dim || math.rotary_dim % 2 != 0) {
    throw Error("--rotary-dim: expected 0 (all of head_dim) or an even count in [2, " +
                to_string(head_dim) + "] (head_dim = d_model / heads), got " +
                to_string(math.rotary_dim));
  }
}

}  // namespace cli
}  // namespace edgeattn
