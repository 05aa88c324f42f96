// Reading and writing safetensors files (https://huggingface.co/docs/safetensors): an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype, shape and byte range,
// then the raw little-endian data.
//
// A file is accepted exactly when the reference implementation (huggingface/safetensors,
// safetensors/src/tensor.rs) accepts it, and the format's rule against duplicate keys holds:
// - the header length is at most 100,000,000 bytes and fits in the file;
// - the header starts with '{', is UTF-8 without NUL bytes, is one JSON object and nothing but
//   whitespace follows it; no key appears twice;
// - each tensor has a known dtype, a shape of whole numbers whose byte count does not overflow,
//   and data_offsets [begin, end] with end - begin equal to that byte count;
// - taken in offset order, the tensors tile the data section exactly: the first begins at 0,
//   each begins where the previous one ends (so an empty tensor may share its offset with the
//   next one), and the last ends at the end of the file: no gaps, no trailing bytes;
// - __metadata__, if present, maps strings to strings; unknown fields of a tensor are ignored.
// A malformed file gets an edgeattn::Error naming the file and the rule, never an
// out-of-bounds read.
#ifndef EDGEATTN_SAFETENSORS_HPP_
#define EDGEATTN_SAFETENSORS_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "edgeattn/export.hpp"

namespace edgeattn {

// Every dtype of the format. Only F32, F16, BF16 and F64 convert to float (ReadFloat); the
// 8-bit float, sub-byte and complex dtypes are parsed and sized, so that files holding them load.
enum class DType {
  kBool, kU8, kI8, kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kF64, kI64, kU64,
  kF8E5M2, kF8E4M3, kF8E8M0, kF8E4M3FNUZ, kF8E5M2FNUZ, kC64, kF4, kF6E2M3, kF6E3M2
};

// "F32", "I8", "F8_E4M3", ... as written in the header.
EDGEATTN_API const char* DTypeName(DType dtype);
// Bits per element (4 for F4, 6 for F6_*).
EDGEATTN_API std::size_t DTypeBits(DType dtype);
// Bytes per element; throws for the sub-byte dtypes (F4, F6_*).
EDGEATTN_API std::size_t DTypeSize(DType dtype);

struct EDGEATTN_API TensorInfo {
  DType dtype;
  std::vector<std::size_t> shape;
  std::size_t offset;  // bytes into the data section
  std::size_t bytes;
  std::size_t elements() const;
};

// A validated file and a view of its tensors. Copies share the bytes they view.
class EDGEATTN_API SafetensorsFile {
 public:
  // Maps the file read-only (mmap; a plain read where the platform has no mmap) and validates
  // it: tensors are read from the mapping, never copied as a whole. The file must not be
  // truncated while this object or a copy lives.
  static SafetensorsFile Read(const std::string& path);
  // Validates an in-memory file and keeps `bytes`; `source` names it in error messages.
  static SafetensorsFile Parse(std::vector<std::uint8_t> bytes, const std::string& source);
  // Validates size bytes at data without copying them: they must stay valid and unchanged
  // while this object or a copy lives.
  static SafetensorsFile View(const void* data, std::size_t size, const std::string& source);

  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  bool Contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // Throws if the tensor is missing.
  const TensorInfo& Info(const std::string& name) const;
  // Raw little-endian bytes of a tensor (Info(name).bytes of them; not aligned in general).
  const std::uint8_t* Data(const std::string& name) const;
  const std::string& source() const { return source_; }

  // The tensor as float32, converted from F32, F16, BF16 or F64; throws for other dtypes and,
  // when expected_shape is not empty, for any other shape.
  std::vector<float> ReadFloat(const std::string& name,
                               const std::vector<std::size_t>& expected_shape = {}) const;

 private:
  struct Storage;
  static SafetensorsFile Validate(std::shared_ptr<const Storage> storage,
                                  const std::string& source);

  std::string source_;
  std::shared_ptr<const Storage> storage_;  // the bytes: owned (mapping, vector) or borrowed
  const std::uint8_t* data_ = nullptr;      // the data section
  std::size_t data_size_ = 0;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, TensorInfo> tensors_;
};

class EDGEATTN_API SafetensorsWriter {
 public:
  // Copies `data` (shape product * DTypeSize(dtype) bytes, little-endian).
  void Add(const std::string& name, DType dtype, const std::vector<std::size_t>& shape,
           const void* data);
  void SetMetadata(const std::string& key, const std::string& value);
  // The complete file, tensors laid out as safetensors' own writer does: by alignment (largest
  // element first), then by name, so that every tensor starts on a multiple of its element size.
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
