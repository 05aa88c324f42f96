#include "tools/cli/layer_options.h"

#include <CLI/CLI.hpp>

namespace edgeattn {
namespace cli {

LoadOptions LayerFlags::ToLoadOptions(std::size_t heads, Precision precision,
                                      std::size_t int8_block) const {
  LoadOptions options;
  options.num_heads = heads;
  options.precision = precision;
  options.int8_block = int8_block;
  options.prefix = prefix;
  options.strict = !non_strict;
  options.no_bias = no_bias;
  return options;
}

std::vector<std::string> PrecisionNames() {
  std::vector<std::string> names;
  for (Precision precision : kPrecisions) names.emplace_back(PrecisionName(precision));
  names.emplace_back(PrecisionName(Precision::kAuto));
  return names;
}

Precision PrecisionNamed(const std::string& name) {
  for (Precision precision : kPrecisions) {
    if (name == PrecisionName(precision)) return precision;
  }
  if (name == PrecisionName(Precision::kAuto)) return Precision::kAuto;
  throw Error("--precision: expected one of fp32, int8, bf16, fp16, auto, got '" + name + "'");
}

std::vector<std::string> KvFormatNames() {
  std::vector<std::string> names;
  for (KvFormat format : kKvFormats) names.emplace_back(KvFormatName(format));
  names.emplace_back(KvFormatName(KvFormat::kAuto));
  return names;
}

KvFormat KvFormatNamed(const std::string& name) {
  for (KvFormat format : kKvFormats) {
    if (name == KvFormatName(format)) return format;
  }
  if (name == KvFormatName(KvFormat::kAuto)) return KvFormat::kAuto;
  throw Error("--kv-format: expected one of fp32, bf16, fp16, int8, auto, got '" + name + "'");
}

void AddLayerFlags(CLI::App* app, LayerFlags* flags) {
  app->add_option("--prefix", flags->prefix,
                  "Load the attention layer whose tensors start with this prefix in a "
                  "whole-model checkpoint, e.g. model.encoder.layers.3.self_attn. ('edgeattn "
                  "info --weights FILE' lists them)");
  app->add_flag("--non-strict", flags->non_strict,
                "Ignore tensors the layer does not use and take missing biases as zeros "
                "(default: strict, as PyTorch's load_state_dict: they are errors)");
  app->add_flag("--no-bias", flags->no_bias,
                "The layer has no biases (bias=False): with strict loading, a bias tensor in "
                "the file is an error; with --non-strict, the file's biases are ignored");
}

}  // namespace cli
}  // namespace edgeattn
