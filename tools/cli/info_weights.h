// edgeattn info --weights FILE: the attention layers a checkpoint holds.
#ifndef EDGEATTN_TOOLS_CLI_INFO_WEIGHTS_H_
#define EDGEATTN_TOOLS_CLI_INFO_WEIGHTS_H_

#include <string>

namespace edgeattn {
namespace cli {

// Prints each layer's prefix, family, d_model, kv dim, heads, biases, dtypes and tensor shapes.
int PrintAttentionLayers(const std::string& path);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_INFO_WEIGHTS_H_
