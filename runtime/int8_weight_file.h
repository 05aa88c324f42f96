// The int8 weight file (format "edgeattn-int8-v1") that MultiheadAttention::SaveInt8 writes and
// Load reads, and every check a file of it gets. Tensors: in_proj_weight.int8 (I8
// [d + 2 kv_dim, d]), in_proj_weight.scale (F32 [d + 2 kv_dim]), out_proj.weight.int8 (I8
// [d, d]), out_proj.weight.scale (F32 [d]), optional in_proj_bias and out_proj.bias (F32).
// __metadata__: format, num_heads, num_kv_heads, d_model, int8_block as decimal text.
#ifndef EDGEATTN_RUNTIME_INT8_WEIGHT_FILE_H_
#define EDGEATTN_RUNTIME_INT8_WEIGHT_FILE_H_

#include <string>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/multihead_attention_impl.h"
#include "runtime/weight_loading.h"

namespace edgeattn {

// Whether the file claims to be an int8 weight file (format "edgeattn-int8-v1", or an int8
// tensor of the format); ReadInt8Layer then checks that it is one. Other "format" values are
// other writers' (Hugging Face files say "pt"): those are float files.
bool IsInt8File(const SafetensorsFile& file);

// Checks the metadata (strict decimal numbers naming the key, the format, d_model against the
// tensors), the tensor names (strict as for float files), dtypes and shapes, and every scale:
// finite and positive, or zero for a row whose int8 values are all zero. The int8 values are
// viewed in the file; scales and biases are copied.
LayerWeights ReadInt8Layer(const SafetensorsFile& file, const LoadOptions& options);

// Writes the file; the weights' scales must pass the same checks (a row with NaN or inf
// weights, which quantizes to a NaN scale, cannot be saved).
void WriteInt8File(const std::string& path, const Config& config,
                   const Int8Weights& weights);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_INT8_WEIGHT_FILE_H_
