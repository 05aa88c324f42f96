// libFuzzer target: the safetensors parser and float conversion on arbitrary bytes. Any input
// must either parse or raise edgeattn::Error; sanitizers catch everything else. What parses
// must meet the reference's rules (header starting with '{', no NUL, the tensors tiling the data
// exactly), parse the same in place (View) as copied (Parse), and survive a write and re-read.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"

namespace {

void CheckRules(const edgeattn::SafetensorsFile& file, const std::uint8_t* data, std::size_t size) {
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | data[i];
  if (header_len == 0 || data[8] != '{' || header_len > 100000000) __builtin_trap();
  if (std::memchr(data + 8, 0, header_len) != nullptr) __builtin_trap();
  std::size_t covered = 0;
  for (const auto& [name, info] : file.tensors()) covered += info.bytes;
  if (8 + header_len + covered != size) __builtin_trap();
}

void WriteAndReread(const edgeattn::SafetensorsFile& file) {
  edgeattn::SafetensorsWriter writer;
  for (const auto& [name, info] : file.tensors()) {
    writer.Add(name, info.dtype, info.shape, file.Data(name));
  }
  for (const auto& [key, value] : file.metadata()) writer.SetMetadata(key, value);
  const edgeattn::SafetensorsFile again =
      edgeattn::SafetensorsFile::Parse(writer.Serialize(), "again");
  if (again.tensors().size() != file.tensors().size() || again.metadata() != file.metadata()) {
    __builtin_trap();
  }
  for (const auto& [name, info] : file.tensors()) {
    const edgeattn::TensorInfo& other = again.Info(name);
    if (other.dtype != info.dtype || other.shape != info.shape || other.bytes != info.bytes ||
        (info.bytes > 0 && std::memcmp(again.Data(name), file.Data(name), info.bytes) != 0)) {
      __builtin_trap();
    }
  }
}

// The writer takes what the reader accepted (but an empty name, which Add refuses) and writes a
// file that reads back the same: any Error here is the writer's or the reader's fault.
void CheckRoundTrip(const edgeattn::SafetensorsFile& file) {
  if (file.tensors().count("") != 0) return;
  try {
    WriteAndReread(file);
  } catch (const edgeattn::Error&) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bool viewed = false;
  try {
    const edgeattn::SafetensorsFile view = edgeattn::SafetensorsFile::View(data, size, "view");
    viewed = true;
    CheckRules(view, data, size);
    CheckRoundTrip(view);
  } catch (const edgeattn::Error&) {
  }
  try {
    const edgeattn::SafetensorsFile file =
        edgeattn::SafetensorsFile::Parse(std::vector<std::uint8_t>(data, data + size), "fuzz");
    if (!viewed) __builtin_trap();
    for (const auto& [name, info] : file.tensors()) {
      try {
        const std::vector<float> values = file.ReadFloat(name);
        if (values.size() != info.elements()) __builtin_trap();
      } catch (const edgeattn::Error&) {
      }
    }
  } catch (const edgeattn::Error&) {
    if (viewed) __builtin_trap();
  }
  return 0;
}
