// libFuzzer target: what `edgeattn run` does with a weights file: load it as an operator (float
// or int8 file) and run one forward call if it loads. The first byte picks the heads, the
// strictness, no_bias and a prefix; the rest is the file. Loading from memory and from a path
// must agree, and a strict load that works must give what the non-strict load gives.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"

namespace {

constexpr const char* kPrefixes[] = {"", "layers.0.self_attn.", "model.layers.1.self_attn.",
                                     "bert.encoder.layer.0.attention."};

// The forward output, or empty if the file does not load.
std::vector<float> LoadAndRun(const std::uint8_t* data, std::size_t size,
                              const edgeattn::LoadOptions& options, const std::string* path) {
  try {
    const edgeattn::MultiheadAttention mha =
        path != nullptr ? edgeattn::MultiheadAttention::Load(*path, options)
                        : edgeattn::MultiheadAttention::LoadFromMemory(data, size, options);
    const std::size_t d = mha.config().d_model;
    if (d > 256) return {0.0f};
    std::vector<float> x(3 * d, 0.5f), y(3 * d);
    edgeattn::Context context(1);
    mha.Forward(context, {x.data(), 1, 3, d}, {y.data(), 1, 3, d});
    return y;
  } catch (const edgeattn::Error&) {
    return {};
  }
}

bool Same(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i] || (a[i] != a[i] && b[i] != b[i]))) return false;  // NaN == NaN here
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  edgeattn::LoadOptions options;
  options.num_heads = data[0] % 9;  // 0: take it from an int8 file's metadata
  options.strict = (data[0] / 9) % 2 == 0;
  options.no_bias = (data[0] / 18) % 2 != 0;
  options.prefix = kPrefixes[(data[0] / 36) % 4];
  const std::uint8_t* file = data + 1;
  const std::size_t file_size = size - 1;
  const std::string path = "/tmp/edgeattn_fuzz_weights_" + std::to_string(getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(file, 1, file_size, f);
  std::fclose(f);
  const std::vector<float> from_path = LoadAndRun(file, file_size, options, &path);
  std::remove(path.c_str());
  const std::vector<float> from_memory = LoadAndRun(file, file_size, options, nullptr);
  if (!Same(from_path, from_memory)) __builtin_trap();
  if (options.strict && !from_memory.empty()) {
    options.strict = false;
    if (!Same(LoadAndRun(file, file_size, options, nullptr), from_memory)) __builtin_trap();
  }
  return 0;
}
