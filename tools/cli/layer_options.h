// The options that pick and check one attention layer in a weights file (run and quantize).
#ifndef EDGEATTN_TOOLS_CLI_LAYER_OPTIONS_H_
#define EDGEATTN_TOOLS_CLI_LAYER_OPTIONS_H_

#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "tools/cli/cli_app.h"

namespace edgeattn {
namespace cli {

struct LayerFlags {
  std::string prefix;
  bool non_strict = false;
  bool no_bias = false;

  // The flags as load options for a file with `heads` heads (0: from an int8 file); throws
  // naming --int8-block if the library would refuse it.
  LoadOptions ToLoadOptions(std::size_t heads, Precision precision, std::size_t int8_block) const;
};

// --prefix, --non-strict, --no-bias.
void AddLayerFlags(CLI::App* app, LayerFlags* flags);

// MultiheadAttention::Load, its errors naming the options (--heads, --rotary-dim,
// --qk-norm-eps) where the library's name the fields they set: these checks need the file's
// d_model, so the CLI cannot make them before loading.
MultiheadAttention LoadLayer(const std::string& path, const LoadOptions& options);

// Every precision, in the order the CLI lists them.
inline constexpr Precision kPrecisions[] = {Precision::kFp32, Precision::kInt8, Precision::kBf16,
                                            Precision::kFp16};
// Their names ("fp32", "int8", "bf16", "fp16") and "auto", and the precision of a name among
// them.
std::vector<std::string> PrecisionNames();
Precision PrecisionNamed(const std::string& name);

// The K/V formats ("fp32", "bf16", "fp16", "int8"), their names and "auto", and the format of a
// name among them.
inline constexpr KvFormat kKvFormats[] = {KvFormat::kFp32, KvFormat::kBf16, KvFormat::kFp16,
                                          KvFormat::kInt8};
std::vector<std::string> KvFormatNames();
KvFormat KvFormatNamed(const std::string& name);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_LAYER_OPTIONS_H_
