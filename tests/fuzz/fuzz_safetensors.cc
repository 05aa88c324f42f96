// libFuzzer target: the safetensors parser and float conversion on arbitrary bytes. Any input
// must either parse or raise edgeattn::Error; sanitizers catch everything else.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const edgeattn::SafetensorsFile file =
        edgeattn::SafetensorsFile::Parse(std::vector<std::uint8_t>(data, data + size), "fuzz");
    for (const auto& [name, info] : file.tensors()) {
      try {
        const std::vector<float> values = file.ReadFloat(name);
        if (values.size() != info.elements()) __builtin_trap();
      } catch (const edgeattn::Error&) {
      }
    }
  } catch (const edgeattn::Error&) {
  }
  return 0;
}
