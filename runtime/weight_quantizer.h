// Quantizes a weight matrix to int8: symmetric, one scale per output channel (row).
#ifndef EDGEATTN_RUNTIME_WEIGHT_QUANTIZER_H_
#define EDGEATTN_RUNTIME_WEIGHT_QUANTIZER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgeattn {

struct QuantizedMatrix {
  std::vector<std::int8_t> values;  // [n x k], in [-127, 127]
  std::vector<float> scales;        // [n]: w ~= values * scale
};

// scale = max|row| / 127, values = round(w / scale); an all-zero row gets scale 0. A row holding
// NaN or inf gets a NaN scale, so its outputs are NaN rather than silently finite.
QuantizedMatrix QuantizePerChannel(const float* w, std::size_t n, std::size_t k);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_WEIGHT_QUANTIZER_H_
