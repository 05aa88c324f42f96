// The attention layers in a safetensors checkpoint that MultiheadAttention::Load can load, as
// `edgeattn info --weights FILE` lists them.
#ifndef EDGEATTN_CHECKPOINT_HPP_
#define EDGEATTN_CHECKPOINT_HPP_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "edgeattn/export.hpp"
#include "edgeattn/safetensors.hpp"

namespace edgeattn {

struct AttentionLayerInfo {
  std::string prefix;       // LoadOptions::prefix (edgeattn run --prefix) for this layer
  std::string family;       // "torch", "bert", "whisper", "llama" or "edgeattn-int8"
  std::string description;  // the models that name their tensors this way
  std::size_t d_model = 0;  // rows of the output projection
  std::size_t kv_dim = 0;   // rows of the key projection: d_model, or less with grouped queries
  std::size_t num_heads = 0;  // 0: the file does not record it (float files): pass it to Load
  std::vector<std::string> biases;  // the bias tensors present, relative to the prefix
  // The layer's tensors (relative to the prefix) with their dtype and shape.
  std::vector<std::pair<std::string, TensorInfo>> tensors;
};

// Every layer whose naming scheme edgeattn knows (see LoadOptions::prefix), ordered by prefix
// with layer numbers compared as numbers. The tensors are not checked here: Load does that.
EDGEATTN_API std::vector<AttentionLayerInfo> FindAttentionLayers(const SafetensorsFile& file);

}  // namespace edgeattn

#endif  // EDGEATTN_CHECKPOINT_HPP_
