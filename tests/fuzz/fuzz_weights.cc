// libFuzzer target: what `edgeattn run` does with a weights file: load it as an operator (float
// or int8 file, number of heads from the first byte) and run one forward call if it loads.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t heads = data[0] % 9;  // 0: take it from an int8 file's metadata
  const std::string path = "/tmp/edgeattn_fuzz_weights_" + std::to_string(getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  try {
    const edgeattn::MultiheadAttention mha = edgeattn::MultiheadAttention::Load(path, heads);
    const std::size_t d = mha.config().d_model;
    if (d <= 256) {
      std::vector<float> x(3 * d, 0.5f), y(3 * d);
      edgeattn::Context context(1);
      mha.Forward(context, {x.data(), 1, 3, d}, {y.data(), 1, 3, d});
    }
  } catch (const edgeattn::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
