#include "edgeattn/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "edgeattn/edgeattn.hpp"
#include "runtime/file_bytes.h"

namespace edgeattn {
namespace {

struct DTypeEntry {
  DType dtype;
  const char* name;
  std::size_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::kBool, "BOOL", 1}, {DType::kU8, "U8", 1},     {DType::kI8, "I8", 1},
    {DType::kI16, "I16", 2},   {DType::kU16, "U16", 2},   {DType::kF16, "F16", 2},
    {DType::kBF16, "BF16", 2}, {DType::kI32, "I32", 4},   {DType::kU32, "U32", 4},
    {DType::kF32, "F32", 4},   {DType::kF64, "F64", 8},   {DType::kI64, "I64", 8},
    {DType::kU64, "U64", 8},
};

const DTypeEntry& Entry(DType dtype) {
  for (const DTypeEntry& e : kDTypes) {
    if (e.dtype == dtype) return e;
  }
  throw Error("unknown DType value " + std::to_string(static_cast<int>(dtype)));
}

std::string ShapeText(const std::vector<std::size_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Product of the dimensions times the element size, or false on overflow.
bool ByteCount(const std::vector<std::size_t>& shape, std::size_t element_size,
               std::size_t* bytes) {
  std::size_t n = element_size;
  for (std::size_t dim : shape) {
    if (dim != 0 && n > std::numeric_limits<std::size_t>::max() / dim) return false;
    n *= dim;
  }
  *bytes = n;
  return true;
}

float HalfToFloat(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  std::uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal half: normalise
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

}  // namespace

const char* DTypeName(DType dtype) { return Entry(dtype).name; }
std::size_t DTypeSize(DType dtype) { return Entry(dtype).size; }

std::size_t TensorInfo::elements() const {
  std::size_t n = 1;
  for (std::size_t dim : shape) n *= dim;
  return n;
}

SafetensorsFile SafetensorsFile::Read(const std::string& path) {
  return Parse(ReadFileBytes(path), path);
}

SafetensorsFile SafetensorsFile::Parse(std::vector<std::uint8_t> bytes,
                                       const std::string& source) {
  const auto fail = [&](const std::string& what) -> Error {
    return Error("safetensors '" + source + "': " + what);
  };
  if (bytes.size() < 8) {
    throw fail("expected at least 8 bytes (the header length), got " +
               std::to_string(bytes.size()));
  }
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | bytes[static_cast<std::size_t>(i)];
  if (header_len > bytes.size() - 8) {
    throw fail("header length " + std::to_string(header_len) + " runs past the end of the " +
               std::to_string(bytes.size()) + "-byte file");
  }
  const auto* header_begin = reinterpret_cast<const char*>(bytes.data() + 8);
  const nlohmann::json header =
      nlohmann::json::parse(header_begin, header_begin + header_len, nullptr, false);
  if (header.is_discarded()) throw fail("the header is not valid JSON");
  if (!header.is_object()) throw fail("expected the header to be a JSON object");

  SafetensorsFile file;
  file.source_ = source;
  file.data_start_ = 8 + static_cast<std::size_t>(header_len);
  const std::size_t data_size = bytes.size() - file.data_start_;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) throw fail("expected __metadata__ to be an object");
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) throw fail("__metadata__['" + key + "'] is not a string");
        file.metadata_[key] = text.get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor '" + name + "': ";
    if (!value.is_object()) throw fail(where + "expected an object");
    const auto dtype_it = value.find("dtype");
    if (dtype_it == value.end() || !dtype_it->is_string()) throw fail(where + "missing dtype");
    const std::string dtype_name = dtype_it->get<std::string>();
    const auto known = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                                    [&](const DTypeEntry& e) { return dtype_name == e.name; });
    if (known == std::end(kDTypes)) throw fail(where + "unknown dtype '" + dtype_name + "'");
    const auto shape_it = value.find("shape");
    if (shape_it == value.end() || !shape_it->is_array()) throw fail(where + "missing shape");
    TensorInfo info{known->dtype, {}, 0, 0};
    for (const auto& dim : *shape_it) {
      if (!dim.is_number_unsigned()) throw fail(where + "shape holds a non-integer or negative");
      info.shape.push_back(dim.get<std::size_t>());
    }
    const auto offsets_it = value.find("data_offsets");
    if (offsets_it == value.end() || !offsets_it->is_array() || offsets_it->size() != 2 ||
        !(*offsets_it)[0].is_number_unsigned() || !(*offsets_it)[1].is_number_unsigned()) {
      throw fail(where + "expected data_offsets [begin, end]");
    }
    const auto begin = (*offsets_it)[0].get<std::uint64_t>();
    const auto end = (*offsets_it)[1].get<std::uint64_t>();
    if (begin > end || end > data_size) {
      throw fail(where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                 "] outside the " + std::to_string(data_size) + "-byte data section");
    }
    if (!ByteCount(info.shape, known->size, &info.bytes)) {
      throw fail(where + "shape " + ShapeText(info.shape) + " overflows the byte count");
    }
    if (info.bytes != end - begin) {
      throw fail(where + "shape " + ShapeText(info.shape) + " of " + dtype_name + " needs " +
                 std::to_string(info.bytes) + " bytes, data_offsets give " +
                 std::to_string(end - begin));
    }
    info.offset = static_cast<std::size_t>(begin);
    file.tensors_.emplace(name, std::move(info));
  }
  std::vector<const std::pair<const std::string, TensorInfo>*> by_offset;
  for (const auto& entry : file.tensors_) by_offset.push_back(&entry);
  std::sort(by_offset.begin(), by_offset.end(),
            [](auto* a, auto* b) { return a->second.offset < b->second.offset; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& prev = by_offset[i - 1]->second;
    if (by_offset[i]->second.offset < prev.offset + prev.bytes) {
      throw fail("tensors '" + by_offset[i - 1]->first + "' and '" + by_offset[i]->first +
                 "' overlap");
    }
  }
  file.bytes_ = std::move(bytes);
  return file;
}

const TensorInfo& SafetensorsFile::Info(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    throw Error("safetensors '" + source_ + "': no tensor named '" + name + "'");
  }
  return it->second;
}

const std::uint8_t* SafetensorsFile::Data(const std::string& name) const {
  return bytes_.data() + data_start_ + Info(name).offset;
}

std::vector<float> SafetensorsFile::ReadFloat(const std::string& name,
                                              const std::vector<std::size_t>& expected_shape) const {
  const TensorInfo& info = Info(name);
  if (!expected_shape.empty() && info.shape != expected_shape) {
    throw Error("safetensors '" + source_ + "': tensor '" + name + "' expected shape " +
                ShapeText(expected_shape) + ", got " + ShapeText(info.shape));
  }
  const std::uint8_t* data = Data(name);
  std::vector<float> out(info.elements());
  switch (info.dtype) {
    case DType::kF32:
      if (info.bytes > 0) std::memcpy(out.data(), data, info.bytes);  // empty: data() may be null
      break;
    case DType::kF64:
      for (std::size_t i = 0; i < out.size(); ++i) {
        double v;
        std::memcpy(&v, data + 8 * i, 8);
        out[i] = static_cast<float>(v);
      }
      break;
    case DType::kF16:
    case DType::kBF16:
      for (std::size_t i = 0; i < out.size(); ++i) {
        std::uint16_t h;
        std::memcpy(&h, data + 2 * i, 2);
        if (info.dtype == DType::kF16) {
          out[i] = HalfToFloat(h);
        } else {
          const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
          std::memcpy(&out[i], &bits, 4);
        }
      }
      break;
    default:
      throw Error("safetensors '" + source_ + "': tensor '" + name +
                  "' expected dtype F32, F16, BF16 or F64, got " + DTypeName(info.dtype));
  }
  return out;
}

void SafetensorsWriter::Add(const std::string& name, DType dtype,
                            const std::vector<std::size_t>& shape, const void* data) {
  if (name.empty() || name == "__metadata__") {
    throw Error("SafetensorsWriter::Add: name '" + name + "' is reserved or empty");
  }
  std::size_t bytes = 0;
  if (!ByteCount(shape, DTypeSize(dtype), &bytes)) {
    throw Error("SafetensorsWriter::Add: shape " + ShapeText(shape) + " overflows");
  }
  const auto* p = static_cast<const std::uint8_t*>(data);
  entries_[name] = Entry{dtype, shape, std::vector<std::uint8_t>(p, p + bytes)};
}

void SafetensorsWriter::SetMetadata(const std::string& key, const std::string& value) {
  metadata_[key] = value;
}

std::vector<std::uint8_t> SafetensorsWriter::Serialize() const {
  nlohmann::json header = nlohmann::json::object();
  std::size_t offset = 0;
  for (const auto& [name, entry] : entries_) {
    header[name] = {{"dtype", DTypeName(entry.dtype)},
                    {"shape", entry.shape},
                    {"data_offsets", {offset, offset + entry.data.size()}}};
    offset += entry.data.size();
  }
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data section 8-byte aligned
  std::vector<std::uint8_t> out;
  out.reserve(8 + text.size() + offset);
  for (int i = 0; i < 8; ++i) out.push_back((text.size() >> (8 * i)) & 0xFF);
  out.insert(out.end(), text.begin(), text.end());
  for (const auto& [name, entry] : entries_) {
    out.insert(out.end(), entry.data.begin(), entry.data.end());
  }
  return out;
}

void SafetensorsWriter::Write(const std::string& path) const {
  WriteFileAtomically(path, Serialize());
}

}  // namespace edgeattn
