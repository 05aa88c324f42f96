#include "edgeattn/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "runtime/file_bytes.h"
#include "runtime/json_text.h"
#include "runtime/mapped_file.h"
#include "runtime/text_checks.h"
#include "simd/half_float.h"

namespace edgeattn {
namespace {

struct DTypeEntry {
  DType dtype;
  const char* name;
  std::size_t bits;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::kBool, "BOOL", 8},          {DType::kU8, "U8", 8},
    {DType::kI8, "I8", 8},              {DType::kI16, "I16", 16},
    {DType::kU16, "U16", 16},           {DType::kF16, "F16", 16},
    {DType::kBF16, "BF16", 16},         {DType::kI32, "I32", 32},
    {DType::kU32, "U32", 32},           {DType::kF32, "F32", 32},
    {DType::kF64, "F64", 64},           {DType::kI64, "I64", 64},
    {DType::kU64, "U64", 64},           {DType::kF8E5M2, "F8_E5M2", 8},
    {DType::kF8E4M3, "F8_E4M3", 8},     {DType::kF8E8M0, "F8_E8M0", 8},
    {DType::kF8E4M3FNUZ, "F8_E4M3FNUZ", 8}, {DType::kF8E5M2FNUZ, "F8_E5M2FNUZ", 8},
    {DType::kC64, "C64", 64},           {DType::kF4, "F4", 4},
    {DType::kF6E2M3, "F6_E2M3", 6},     {DType::kF6E3M2, "F6_E3M2", 6},
};

// The reference implementation's limit on the JSON header (MAX_HEADER_SIZE).
constexpr std::uint64_t kMaxHeaderBytes = 100000000;

const DTypeEntry& Entry(DType dtype) {
  for (const DTypeEntry& e : kDTypes) {
    if (e.dtype == dtype) return e;
  }
  throw Error("unknown DType value " + std::to_string(static_cast<int>(dtype)));
}

// The data bytes of a tensor: the product of the dimensions times the element's bits, over 8.
// Returns false on overflow or when the bits do not fill whole bytes.
bool ByteCount(const std::vector<std::size_t>& shape, std::size_t bits, std::size_t* bytes,
               bool* whole_bytes) {
  std::size_t n = bits;
  for (std::size_t dim : shape) {
    if (dim != 0 && n > std::numeric_limits<std::size_t>::max() / dim) return false;
    n *= dim;
  }
  *whole_bytes = n % 8 == 0;
  *bytes = n / 8;
  return true;
}

using FailFn = std::function<Error(const std::string&)>;

// Checks the length prefix and the header's bytes; returns the header's size.
std::size_t CheckHeader(const std::uint8_t* bytes, std::size_t size, const FailFn& fail) {
  if (size < 8) {
    throw fail("expected at least 8 bytes (the header length), got " + std::to_string(size));
  }
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | bytes[static_cast<std::size_t>(i)];
  if (header_len > kMaxHeaderBytes) {
    throw fail("header length " + std::to_string(header_len) + " exceeds the format's limit of " +
               std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (header_len > size - 8) {
    throw fail("header length " + std::to_string(header_len) + " runs past the end of the " +
               std::to_string(size) + "-byte file");
  }
  const std::uint8_t* header = bytes + 8;
  if (header_len == 0 || header[0] != '{') throw fail("expected the header to start with '{'");
  const void* nul = std::memchr(header, 0, header_len);
  if (nul != nullptr) {
    throw fail("the header holds a NUL byte at offset " +
               std::to_string(static_cast<const std::uint8_t*>(nul) - header));
  }
  std::size_t bad = 0;
  if (!IsUtf8(header, header_len, &bad)) {
    throw fail("the header is not UTF-8 (offset " + std::to_string(bad) + ")");
  }
  return static_cast<std::size_t>(header_len);
}

// A tensor entry's fields as read; checked once the entry's object is read, so that the errors
// come in one order whatever the fields' order.
struct TensorFields {
  bool has_dtype = false, has_shape = false, shape_unsigned = true;
  // What is wrong with data_offsets, for the message ("none": the entry has none); empty: two
  // offsets were read.
  std::string offsets_problem = "none";
  std::string dtype;
  std::vector<std::size_t> shape;
  std::uint64_t offsets[2] = {0, 0};
};

void ReadShape(JsonReader& json, TensorFields* fields) {
  fields->has_shape = json.Peek() == JsonReader::Kind::kArray;
  if (!fields->has_shape) return json.Skip();
  json.BeginArray();
  while (json.NextElement()) {
    std::uint64_t dim = 0;
    if (json.Peek() != JsonReader::Kind::kNumber) {
      json.Skip();
      fields->shape_unsigned = false;
    } else if (!json.ReadUnsigned(&dim) || dim > std::numeric_limits<std::size_t>::max()) {
      fields->shape_unsigned = false;
    }
    fields->shape.push_back(static_cast<std::size_t>(dim));
  }
}

void ReadOffsets(JsonReader& json, TensorFields* fields) {
  if (json.Peek() != JsonReader::Kind::kArray) {
    fields->offsets_problem = "no array";
    return json.Skip();
  }
  json.BeginArray();
  std::size_t count = 0;
  bool all_unsigned = true;
  while (json.NextElement()) {
    std::uint64_t offset = 0;
    if (json.Peek() != JsonReader::Kind::kNumber) {
      json.Skip();
      all_unsigned = false;
    } else if (!json.ReadUnsigned(&offset)) {
      all_unsigned = false;
    }
    if (count < 2) fields->offsets[count] = offset;
    ++count;
  }
  if (!all_unsigned) {
    fields->offsets_problem = "a value that is not an integer in [0, 2^64)";
  } else if (count != 2) {
    fields->offsets_problem = std::to_string(count) + " value" + (count == 1 ? "" : "s");
  } else {
    fields->offsets_problem.clear();
  }
}

// The entry's fields other than dtype, shape and data_offsets are skipped, not stored.
TensorFields ReadTensorFields(JsonReader& json) {
  TensorFields fields;
  json.BeginObject();
  std::string key;
  while (json.NextMember(&key)) {
    if (key == "dtype") {
      fields.has_dtype = json.Peek() == JsonReader::Kind::kString;
      if (fields.has_dtype) {
        fields.dtype = json.ReadString();
      } else {
        json.Skip();
      }
    } else if (key == "shape") {
      ReadShape(json, &fields);
    } else if (key == "data_offsets") {
      ReadOffsets(json, &fields);
    } else {
      json.Skip();
    }
  }
  return fields;
}

TensorInfo ParseTensor(const std::string& name, JsonReader& json, const FailFn& fail) {
  const std::string where = "tensor '" + Printable(name) + "': ";
  if (json.Peek() != JsonReader::Kind::kObject) throw fail(where + "expected an object");
  TensorFields fields = ReadTensorFields(json);
  if (!fields.has_dtype) throw fail(where + "missing dtype");
  const auto known = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                                  [&](const DTypeEntry& e) { return fields.dtype == e.name; });
  if (known == std::end(kDTypes)) {
    throw fail(where + "unknown dtype '" + Printable(fields.dtype) + "'");
  }
  if (!fields.has_shape) throw fail(where + "missing shape");
  if (!fields.shape_unsigned) throw fail(where + "shape holds a non-integer or negative");
  TensorInfo info{known->dtype, std::move(fields.shape), 0, 0};
  if (!fields.offsets_problem.empty()) {
    throw fail(where + "expected data_offsets [begin, end] of two integers, got " +
               fields.offsets_problem);
  }
  const std::uint64_t begin = fields.offsets[0];
  const std::uint64_t end = fields.offsets[1];
  if (begin > end) {
    throw fail(where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
               "] end before they begin");
  }
  bool whole_bytes = true;
  if (!ByteCount(info.shape, known->bits, &info.bytes, &whole_bytes)) {
    throw fail(where + "shape " + ShapeText(info.shape) + " overflows the byte count");
  }
  if (!whole_bytes) {
    throw fail(where + "shape " + ShapeText(info.shape) + " of " + fields.dtype +
               " does not fill a whole number of bytes");
  }
  if (info.bytes != end - begin) {
    throw fail(where + "shape " + ShapeText(info.shape) + " of " + fields.dtype + " needs " +
               std::to_string(info.bytes) + " bytes, data_offsets give " +
               std::to_string(end - begin));
  }
  info.offset = static_cast<std::size_t>(begin);
  return info;
}

// In offset order the tensors must cover the data section exactly, as the reference requires
// (no holes: a file cannot hide a second format in its gaps or tail).
void CheckTiling(const std::map<std::string, TensorInfo>& tensors, std::size_t data_size,
                 const FailFn& fail) {
  std::vector<const std::pair<const std::string, TensorInfo>*> by_offset;
  for (const auto& entry : tensors) by_offset.push_back(&entry);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) {
    return std::make_pair(a->second.offset, a->second.bytes) <
           std::make_pair(b->second.offset, b->second.bytes);
  });
  std::size_t covered = 0;
  const std::string* previous = nullptr;
  for (const auto* entry : by_offset) {
    const std::size_t begin = entry->second.offset;
    const std::string name = "tensor '" + Printable(entry->first) + "'";
    const std::string after =
        previous == nullptr ? "the start of the data" : "'" + Printable(*previous) + "'";
    if (begin < covered) throw fail(name + " overlaps " + after);
    if (begin > covered) {
      throw fail(name + " leaves a gap of " + std::to_string(begin - covered) + " bytes after " +
                 after);
    }
    covered = begin + entry->second.bytes;
    previous = &entry->first;
  }
  if (covered != data_size) {
    if (covered > data_size) {
      throw fail("the tensors need " + std::to_string(covered) + " bytes of data, the file has " +
                 std::to_string(data_size));
    }
    throw fail(std::to_string(data_size - covered) + " bytes follow the last tensor's data");
  }
}

// __metadata__: null (the reference's Option: none) or an object of strings.
void ReadMetadata(JsonReader& json, std::map<std::string, std::string>* metadata,
                  const FailFn& fail) {
  const JsonReader::Kind kind = json.Peek();
  if (kind == JsonReader::Kind::kNull) return json.Skip();
  if (kind != JsonReader::Kind::kObject) throw fail("expected __metadata__ to be an object");
  json.BeginObject();
  std::string key;
  while (json.NextMember(&key)) {
    if (json.Peek() != JsonReader::Kind::kString) {
      throw fail("__metadata__['" + Printable(key) + "'] is not a string");
    }
    (*metadata)[key] = json.ReadString();
  }
}

}  // namespace

struct SafetensorsFile::Storage {
  std::unique_ptr<MappedFile> mapped;
  std::vector<std::uint8_t> bytes;
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
};

const char* DTypeName(DType dtype) { return Entry(dtype).name; }
std::size_t DTypeBits(DType dtype) { return Entry(dtype).bits; }
std::size_t DTypeSize(DType dtype) {
  const std::size_t bits = Entry(dtype).bits;
  if (bits % 8 != 0) {
    throw Error(std::string("DTypeSize: ") + DTypeName(dtype) + " elements are " +
                std::to_string(bits) + " bits, not whole bytes");
  }
  return bits / 8;
}

std::size_t TensorInfo::elements() const {
  std::size_t n = 1;
  for (std::size_t dim : shape) n *= dim;
  return n;
}

SafetensorsFile SafetensorsFile::Read(const std::string& path) {
  auto storage = std::make_shared<Storage>();
  storage->mapped = std::make_unique<MappedFile>(path);
  storage->data = storage->mapped->data();
  storage->size = storage->mapped->size();
  return Validate(std::move(storage), path);
}

SafetensorsFile SafetensorsFile::Parse(std::vector<std::uint8_t> bytes,
                                       const std::string& source) {
  auto storage = std::make_shared<Storage>();
  storage->bytes = std::move(bytes);
  storage->data = storage->bytes.data();
  storage->size = storage->bytes.size();
  return Validate(std::move(storage), source);
}

SafetensorsFile SafetensorsFile::View(const void* data, std::size_t size,
                                      const std::string& source) {
  if (data == nullptr && size != 0) {
    throw Error("safetensors '" + source + "': expected a buffer of " + std::to_string(size) +
                " bytes, got null");
  }
  auto storage = std::make_shared<Storage>();
  storage->data = static_cast<const std::uint8_t*>(data);
  storage->size = size;
  return Validate(std::move(storage), source);
}

SafetensorsFile SafetensorsFile::Validate(std::shared_ptr<const Storage> storage,
                                          const std::string& source) {
  const FailFn fail = [&](const std::string& what) {
    return Error("safetensors '" + source + "': " + what);
  };
  const std::size_t header_len = CheckHeader(storage->data, storage->size, fail);
  const auto* header_begin = reinterpret_cast<const char*>(storage->data + 8);
  const char* header_end = header_begin + header_len;
  // The whole header is checked as JSON first: a text that is not JSON (cut short, a key twice,
  // nested too deep) says so, rather than what a tensor before the fault lacks.
  JsonReader syntax(header_begin, header_end, fail);
  syntax.Skip();
  syntax.ExpectEnd();
  JsonReader json(header_begin, header_end, fail);
  SafetensorsFile file;
  file.source_ = source;
  json.BeginObject();
  std::string name;
  while (json.NextMember(&name)) {
    if (name == "__metadata__") {
      ReadMetadata(json, &file.metadata_, fail);
    } else {
      file.tensors_.emplace(name, ParseTensor(name, json, fail));
    }
  }
  json.ExpectEnd();
  file.data_ = storage->data + 8 + header_len;
  file.data_size_ = storage->size - 8 - header_len;
  CheckTiling(file.tensors_, file.data_size_, fail);
  file.storage_ = std::move(storage);
  return file;
}

const TensorInfo& SafetensorsFile::Info(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    throw Error("safetensors '" + source_ + "': no tensor named '" + Printable(name) + "'");
  }
  return it->second;
}

const std::uint8_t* SafetensorsFile::Data(const std::string& name) const {
  return data_ + Info(name).offset;
}

std::vector<float> SafetensorsFile::ReadFloat(const std::string& name,
                                              const std::vector<std::size_t>& expected_shape) const {
  const TensorInfo& info = Info(name);
  if (!expected_shape.empty() && info.shape != expected_shape) {
    throw Error("safetensors '" + source_ + "': tensor '" + Printable(name) + "' expected shape " +
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
        out[i] = info.dtype == DType::kF16 ? simd::F32FromF16(h) : simd::F32FromBf16(h);
      }
      break;
    default:
      throw Error("safetensors '" + source_ + "': tensor '" + Printable(name) +
                  "' expected dtype F32, F16, BF16 or F64, got " + DTypeName(info.dtype));
  }
  return out;
}

namespace {

// The header holds UTF-8 only (the reader's rule): say so when a name or metadata is not.
void RequireUtf8(const std::string& text, const char* what) {
  std::size_t bad = 0;
  if (!IsUtf8(reinterpret_cast<const std::uint8_t*>(text.data()), text.size(), &bad)) {
    throw Error(std::string("SafetensorsWriter: ") + what + " '" + Printable(text) +
                "' is not UTF-8 (offset " + std::to_string(bad) + ")");
  }
}

// An object's JSON text: members in key order, no whitespace, so the same tensors always give
// the same bytes.
std::string ObjectJson(const std::map<std::string, std::string>& members) {
  std::string json = "{";
  for (const auto& [key, value] : members) {
    if (json.size() > 1) json += ',';
    AppendJsonString(key, &json);
    json += ':';
    json += value;
  }
  return json + "}";
}

std::string EntryJson(DType dtype, const std::vector<std::size_t>& shape, std::size_t begin,
                      std::size_t end) {
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dims += (i == 0 ? "" : ",") + std::to_string(shape[i]);
  }
  std::string dtype_json;
  AppendJsonString(DTypeName(dtype), &dtype_json);
  return ObjectJson(
      {{"data_offsets", "[" + std::to_string(begin) + "," + std::to_string(end) + "]"},
       {"dtype", dtype_json},
       {"shape", "[" + dims + "]"}});
}

std::string MetadataJson(const std::map<std::string, std::string>& metadata) {
  std::map<std::string, std::string> members;
  for (const auto& [key, value] : metadata) AppendJsonString(value, &members[key]);
  return ObjectJson(members);
}

}  // namespace

void SafetensorsWriter::Add(const std::string& name, DType dtype,
                            const std::vector<std::size_t>& shape, const void* data) {
  if (name.empty() || name == "__metadata__") {
    throw Error("SafetensorsWriter::Add: name '" + name + "' is reserved or empty");
  }
  RequireUtf8(name, "tensor name");
  std::size_t bytes = 0;
  bool whole_bytes = true;
  if (!ByteCount(shape, DTypeBits(dtype), &bytes, &whole_bytes) || !whole_bytes) {
    throw Error("SafetensorsWriter::Add: shape " + ShapeText(shape) + " of " + DTypeName(dtype) +
                " overflows or does not fill whole bytes");
  }
  const auto* p = static_cast<const std::uint8_t*>(data);
  entries_[name] = Entry{dtype, shape, std::vector<std::uint8_t>(p, p + bytes)};
}

void SafetensorsWriter::SetMetadata(const std::string& key, const std::string& value) {
  RequireUtf8(key, "metadata key");
  RequireUtf8(value, "metadata value");
  metadata_[key] = value;
}

std::vector<std::uint8_t> SafetensorsWriter::Serialize() const {
  std::vector<const std::pair<const std::string, Entry>*> order;
  for (const auto& entry : entries_) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) {
    return DTypeBits(a->second.dtype) > DTypeBits(b->second.dtype);
  });
  std::map<std::string, std::string> members;  // each key's JSON value
  std::size_t offset = 0;
  for (const auto* entry : order) {
    const std::size_t end = offset + entry->second.data.size();
    members[entry->first] = EntryJson(entry->second.dtype, entry->second.shape, offset, end);
    offset = end;
  }
  if (!metadata_.empty()) members["__metadata__"] = MetadataJson(metadata_);
  std::string text = ObjectJson(members);
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data section 8-byte aligned
  if (text.size() > kMaxHeaderBytes) {
    throw Error("SafetensorsWriter: the header would take " + std::to_string(text.size()) +
                " bytes, over the format's limit of " + std::to_string(kMaxHeaderBytes));
  }
  std::vector<std::uint8_t> out;
  out.reserve(8 + text.size() + offset);
  for (int i = 0; i < 8; ++i) out.push_back((text.size() >> (8 * i)) & 0xFF);
  out.insert(out.end(), text.begin(), text.end());
  for (const auto* entry : order) {
    out.insert(out.end(), entry->second.data.begin(), entry->second.data.end());
  }
  return out;
}

void SafetensorsWriter::Write(const std::string& path) const {
  WriteFileAtomically(path, Serialize());
}

}  // namespace edgeattn
