// NumPy .npy files of float32 or bool in C order with 1 to 4 dimensions, as numpy.save writes
// them (format versions 1.0, 2.0 and 3.0 are read; 1.0 is written). Bool arrays are masks.
#ifndef EDGEATTN_NPY_HPP_
#define EDGEATTN_NPY_HPP_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "edgeattn/export.hpp"

namespace edgeattn {

enum class NpyDType { kFloat32, kBool };

struct NpyArray {
  std::vector<std::size_t> shape;
  std::vector<float> data;  // bool arrays: 0.0f (False) or 1.0f (True)
  NpyDType dtype = NpyDType::kFloat32;
};

// Throws edgeattn::Error for anything but a well-formed float32 ('<f4') or bool ('|b1', bytes
// 0 or 1) C-order array of rank 1-4.
EDGEATTN_API NpyArray ReadNpy(const std::string& path);
EDGEATTN_API NpyArray ParseNpy(const std::vector<std::uint8_t>& bytes, const std::string& source);

EDGEATTN_API std::vector<std::uint8_t> SerializeNpy(const NpyArray& array);
// Atomic: a failed write leaves no half-written file.
EDGEATTN_API void WriteNpy(const std::string& path, const NpyArray& array);

// PyTorch's boolean masks in the forms ForwardOptions takes them. A key_padding_mask: one bool
// per value (true = ignore that key).
inline std::unique_ptr<bool[]> NpyBools(const NpyArray& mask) {
  std::unique_ptr<bool[]> bools(new bool[mask.data.size()]);
  for (std::size_t i = 0; i < mask.data.size(); ++i) bools[i] = mask.data[i] != 0.0f;
  return bools;
}

// A bool attn_mask as the additive float mask it stands for (true = not allowed to attend: -inf;
// false: 0); a float32 mask is left as it is.
inline void BoolMaskToAdditive(NpyArray* mask) {
  if (mask->dtype != NpyDType::kBool) return;
  for (float& x : mask->data) x = x != 0.0f ? -std::numeric_limits<float>::infinity() : 0.0f;
  mask->dtype = NpyDType::kFloat32;
}

}  // namespace edgeattn

#endif  // EDGEATTN_NPY_HPP_
