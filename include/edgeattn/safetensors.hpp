// Reading and writing safetensors files (https://huggingface.co/docs/safetensors): an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype, shape and byte range,
// then the raw little-endian data. Every offset, size and shape is checked before use: a
// truncated or malformed file gets an edgeattn::Error, never an out-of-bounds read.
#ifndef EDGEATTN_SAFETENSORS_HPP_
#define EDGEATTN_SAFETENSORS_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "edgeattn/export.hpp"

namespace edgeattn {

enum class DType { kBool, kU8, kI8, kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kF64, kI64, kU64 };

// "F32", "I8", ... as written in the header.
EDGEATTN_API const char* DTypeName(DType dtype);
EDGEATTN_API std::size_t DTypeSize(DType dtype);

struct EDGEATTN_API TensorInfo {
  DType dtype;
  std::vector<std::size_t> shape;
  std::size_t offset;  // bytes into the data section
  std::size_t bytes;
  std::size_t elements() const;
};

class EDGEATTN_API SafetensorsFile {
 public:
  // Reads and validates a whole file.
  static SafetensorsFile Read(const std::string& path);
  // Validates an in-memory file; `source` names it in error messages.
  static SafetensorsFile Parse(std::vector<std::uint8_t> bytes, const std::string& source);

  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  bool Contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // Throws if the tensor is missing.
  const TensorInfo& Info(const std::string& name) const;
  // Raw little-endian bytes of a tensor.
  const std::uint8_t* Data(const std::string& name) const;

  // The tensor as float32, converted from F32, F16, BF16 or F64; throws for other dtypes and,
  // when expected_shape is not empty, for any other shape.
  std::vector<float> ReadFloat(const std::string& name,
                               const std::vector<std::size_t>& expected_shape = {}) const;

 private:
  std::string source_;
  std::vector<std::uint8_t> bytes_;
  std::size_t data_start_ = 0;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, TensorInfo> tensors_;
};

class EDGEATTN_API SafetensorsWriter {
 public:
  // Copies `data` (shape product * DTypeSize(dtype) bytes, little-endian).
  void Add(const std::string& name, DType dtype, const std::vector<std::size_t>& shape,
           const void* data);
  void SetMetadata(const std::string& key, const std::string& value);
  // The complete file, tensors laid out in name order.
  std::vector<std::uint8_t> Serialize() const;
  // Writes to a temporary file beside `path`, then renames it over `path`: a failed write
  // leaves no half-written file.
  void Write(const std::string& path) const;

 private:
  struct Entry {
    DType dtype;
    std::vector<std::size_t> shape;
    std::vector<std::uint8_t> data;
  };
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace edgeattn

#endif  // EDGEATTN_SAFETENSORS_HPP_
