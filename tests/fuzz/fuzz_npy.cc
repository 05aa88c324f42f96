// libFuzzer target: the .npy parser on arbitrary bytes, and the round trip of what it accepts.
// What parses must meet numpy's header rules: no NUL, at most 10000 characters, a known
// version.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const edgeattn::NpyArray array =
        edgeattn::ParseNpy(std::vector<std::uint8_t>(data, data + size), "fuzz");
    const std::uint8_t major = data[6];
    std::size_t header_len = data[8] | static_cast<std::size_t>(data[9]) << 8;
    if (major != 1) header_len |= static_cast<std::size_t>(data[10]) << 16 |
                                  static_cast<std::size_t>(data[11]) << 24;
    const std::size_t start = major == 1 ? 10 : 12;
    // 10000 characters: bytes in versions 1.0 and 2.0, UTF-8 (up to 4 bytes each) in 3.0.
    if (data[7] != 0 || major < 1 || major > 3 || header_len > (major == 3 ? 40000 : 10000) ||
        std::memchr(data + start, 0, header_len) != nullptr) {
      __builtin_trap();
    }
    const edgeattn::NpyArray again = edgeattn::ParseNpy(edgeattn::SerializeNpy(array), "again");
    if (again.shape != array.shape || again.dtype != array.dtype ||
        again.data.size() != array.data.size() ||
        (!array.data.empty() &&
         std::memcmp(again.data.data(), array.data.data(), array.data.size() * 4) != 0)) {
      __builtin_trap();
    }
  } catch (const edgeattn::Error&) {
  }
  return 0;
}
