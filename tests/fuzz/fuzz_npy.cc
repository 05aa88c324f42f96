// libFuzzer target: the .npy parser on arbitrary bytes, and the round trip of what it accepts.
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
    const edgeattn::NpyArray again = edgeattn::ParseNpy(edgeattn::SerializeNpy(array), "again");
    if (again.shape != array.shape || again.data.size() != array.data.size() ||
        (!array.data.empty() &&
         std::memcmp(again.data.data(), array.data.data(), array.data.size() * 4) != 0)) {
      __builtin_trap();
    }
  } catch (const edgeattn::Error&) {
  }
  return 0;
}
