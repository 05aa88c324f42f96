// Finds one attention layer's tensors in a safetensors file, checks them (names, shapes, dtypes,
// int8 metadata and scales) and views them as the constructors take them. Building the operator
// from them is the caller's business.
#ifndef EDGEATTN_RUNTIME_WEIGHT_LOADING_H_
#define EDGEATTN_RUNTIME_WEIGHT_LOADING_H_

#include <cstdint>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/multihead_attention_impl.h"
#include "runtime/weight_names.h"

namespace edgeattn {

// The views point into the file or into `copies`: they live as long as both do.
struct LayerWeights {
  Config config;
  bool int8 = false;
  // Precision kBf16 / kFp16 asked for and every weight tensor stored in that format: the
  // weights are views of the file's 16-bit values, by slot (null: absent), and `floats` holds
  // the biases only.
  bool half = false;
  const std::uint16_t* half_weights[kSlots] = {};
  WeightsView floats;                      // float files (half: the biases)
  Int8Weights int8_weights{};              // int8 files
  std::vector<std::vector<float>> copies;  // tensors converted to float32
};

LayerWeights FindLayerWeights(const SafetensorsFile& file, const LoadOptions& options);

// A half layer's four projections as MultiheadAttention::Impl::Build takes them.
MultiheadAttention::Impl::Weights HalfLayerWeights(const LayerWeights& layer);

// A tensor as float32 of the given shape: a view of the file's bytes when they are F32 and
// aligned for float, else a converted copy appended to *copies. Throws naming the tensor.
FloatSpan FloatTensor(const SafetensorsFile& file, const std::string& name,
                      const std::vector<std::size_t>& shape,
                      std::vector<std::vector<float>>* copies);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_WEIGHT_LOADING_H_
