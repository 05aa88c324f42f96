#include "edgeattn/checkpoint.hpp"

#include "runtime/int8_weight_file.h"
#include "runtime/text_checks.h"
#include "runtime/weight_names.h"

namespace edgeattn {
namespace {

// Rows of a 2-D tensor, 0 for anything else.
std::size_t Rows(const SafetensorsFile& file, const std::string& name) {
  if (!file.Contains(name)) return 0;
  const TensorInfo& info = file.Info(name);
  return info.shape.size() == 2 ? info.shape[0] : 0;
}

// The key rows of a packed [d + 2 kv_dim, d] projection.
std::size_t KvRows(std::size_t packed_rows, std::size_t d) {
  return packed_rows > d ? (packed_rows - d) / 2 : 0;
}

AttentionLayerInfo Describe(const SafetensorsFile& file, const FoundLayer& found) {
  const NameScheme& scheme = *found.scheme;
  AttentionLayerInfo layer;
  layer.prefix = found.prefix;
  layer.family = scheme.family;
  layer.description = scheme.description;
  layer.d_model = Rows(file, found.prefix + scheme.weights[kOut]);
  layer.kv_dim = scheme.weights[kK] != nullptr
                     ? Rows(file, found.prefix + scheme.weights[kK])
                     : KvRows(Rows(file, found.prefix + scheme.weights[kPacked]), layer.d_model);
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    for (const char* name : {scheme.weights[slot], scheme.biases[slot]}) {
      if (name == nullptr || !file.Contains(found.prefix + name)) continue;
      layer.tensors.emplace_back(name, file.Info(found.prefix + name));
      if (name == scheme.biases[slot]) layer.biases.push_back(name);
    }
  }
  return layer;
}

AttentionLayerInfo DescribeInt8(const SafetensorsFile& file) {
  AttentionLayerInfo layer;
  layer.family = "edgeattn-int8";
  layer.description = "int8 weights written by edgeattn quantize / SaveInt8";
  layer.d_model = Rows(file, "out_proj.weight.int8");
  layer.kv_dim = KvRows(Rows(file, "in_proj_weight.int8"), layer.d_model);
  const auto heads = file.metadata().find("num_heads");
  if (heads == file.metadata().end() ||
      !ParseDecimal(heads->second, layer.d_model, &layer.num_heads)) {
    layer.num_heads = 0;  // Load names the problem
  }
  for (const auto& [name, info] : file.tensors()) {
    layer.tensors.emplace_back(name, info);
    if (name == "in_proj_bias" || name == "out_proj.bias") layer.biases.push_back(name);
  }
  return layer;
}

}  // namespace

std::vector<AttentionLayerInfo> FindAttentionLayers(const SafetensorsFile& file) {
  if (IsInt8File(file)) return {DescribeInt8(file)};
  std::vector<std::string> names;
  for (const auto& entry : file.tensors()) names.push_back(entry.first);
  std::vector<AttentionLayerInfo> layers;
  for (const FoundLayer& found : FindLayerNames(names)) layers.push_back(Describe(file, found));
  return layers;
}

}  // namespace edgeattn
