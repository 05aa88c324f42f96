#include "tools/cli/layer_options.h"

#include <cstring>
#include <utility>

#include <CLI/CLI.hpp>

#include "tools/cli/config_options.h"

namespace edgeattn {
namespace cli {
namespace {

// The fields of the library's messages that run's and quantize's options set, longest first
// where one name begins another.
constexpr std::pair<const char*, const char*> kOptionOfField[] = {
    {"Config.math.rotary_dim", "--rotary-dim"},
    {"Config.math.rotary", "--rotary-layout"},
    {"Config.math.qk_norm_eps", "--qk-norm-eps"},
    {"Config.math.qk_norm", "--qk-norm-eps"},
    {"LoadOptions.math.rotary_dim", "--rotary-dim"},
    {"LoadOptions.math.rotary_base", "--rotary-base"},
    {"LoadOptions.math.rotary", "--rotary-layout"},
    {"LoadOptions.math.qk_norm", "--qk-norm-eps"},
    {"non-strict loading", "--non-strict"},
};

std::string WithOptionNames(std::string message) {
  // LoadOptions.num_heads is named bare, as the message's subject.
  if (message.rfind("num_heads: ", 0) == 0) message.replace(0, std::strlen("num_heads"), "--heads");
  for (const auto& [field, option] : kOptionOfField) {
    for (std::size_t at = message.find(field); at != std::string::npos;
         at = message.find(field, at + std::strlen(option))) {
      message.replace(at, std::strlen(field), option);
    }
  }
  return message;
}

}  // namespace

LoadOptions LayerFlags::ToLoadOptions(std::size_t heads, Precision precision,
                                      std::size_t int8_block) const {
  CheckInt8BlockOption(int8_block);
  LoadOptions options;
  options.num_heads = heads;
  options.precision = precision;
  options.int8_block = int8_block;
  options.prefix = prefix;
  options.strict = !non_strict;
  options.no_bias = no_bias;
  return options;
}

MultiheadAttention LoadLayer(const std::string& path, const LoadOptions& options) {
  try {
    return MultiheadAttention::Load(path, options);
  } catch (const Error& e) {
    throw Error(WithOptionNames(e.what()));
  }
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
