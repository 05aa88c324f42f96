// The library's rules for the Config fields that options set, checked where the CLI turns the
// options into a Config, so that an error names the option typed (--kv-heads) where the
// library's names the field (Config.num_kv_heads). The library checks them again and stays the
// authority: tests/tools/cli_config_options_test.cc shows both accept the same values.
#ifndef EDGEATTN_TOOLS_CLI_CONFIG_OPTIONS_H_
#define EDGEATTN_TOOLS_CLI_CONFIG_OPTIONS_H_

#include <cstddef>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace cli {

// --d-model in [1, kMaxModelDim], --heads in [1, d_model] dividing it, --kv-heads 0 (the heads)
// or a divisor of the heads. Only bench sets d_model and the heads by option; a contract shape's
// pass these checks, so an error there can only be the --kv-heads given with it.
void CheckHeadOptions(std::size_t d_model, std::size_t heads, std::size_t kv_heads);

// --int8-block: a multiple of 4 in [4, kMaxInt8Block]. Checked whatever the precision: the
// library reads it for int8 only, but a value it would refuse is a mistake either way.
void CheckInt8BlockOption(std::size_t int8_block);

// --rotary-dim: 0 (all of head_dim) or an even count in [2, head_dim].
void CheckRotaryDimOption(const AttentionMath& math, std::size_t head_dim);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_CONFIG_OPTIONS_H_
