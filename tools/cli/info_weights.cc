#include "tools/cli/info_weights.h"

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "edgeattn/checkpoint.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/text_checks.h"

namespace edgeattn {
namespace cli {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "none" : out;
}

void PrintLayer(const AttentionLayerInfo& layer) {
  std::set<std::string> dtypes;
  for (const auto& tensor : layer.tensors) dtypes.insert(DTypeName(tensor.second.dtype));
  const std::string heads = layer.num_heads != 0 ? std::to_string(layer.num_heads)
                                                 : "not recorded (pass --heads)";
  std::printf("\nlayer '%s': %s (%s)\n", layer.prefix.c_str(), layer.family.c_str(),
              layer.description.c_str());
  std::printf("  d_model %zu, kv dim %zu, heads %s\n", layer.d_model, layer.kv_dim, heads.c_str());
  std::printf("  biases: %s\n", Join(layer.biases).c_str());
  std::printf("  dtype: %s\n", Join({dtypes.begin(), dtypes.end()}).c_str());
  for (const auto& [name, info] : layer.tensors) {
    std::printf("  %-28s %-5s %s\n", name.c_str(), DTypeName(info.dtype), ShapeText(info.shape).c_str());
  }
}

}  // namespace

int PrintAttentionLayers(const std::string& path) {
  const SafetensorsFile file = SafetensorsFile::Read(path);
  const std::vector<AttentionLayerInfo> layers = FindAttentionLayers(file);
  std::printf("%s: %zu tensors, %zu attention layers edgeattn can load\n", path.c_str(),
              file.tensors().size(), layers.size());
  for (const AttentionLayerInfo& layer : layers) PrintLayer(layer);
  if (!layers.empty() && layers.front().family != "edgeattn-int8") {
    std::printf("\nload one with: edgeattn run --weights %s --prefix '%s' --heads N ...\n",
                path.c_str(), layers.front().prefix.c_str());
  }
  return 0;
}

}  // namespace cli
}  // namespace edgeattn
