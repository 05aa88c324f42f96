// libFuzzer target: the strict name rules on checkpoints built from the bytes. Each name of
// every naming scheme (weights, biases, the parts of a block that are not attention, a few
// near misses) is present or not, under one of a few prefixes, with shapes that fit; the load
// options come from the bytes too. Invariants: no crash; a strict load that works gives the
// same operator as the non-strict one; a non-strict no_bias load of a file that loads strictly
// works too; loading from memory never keeps the buffer (it is overwritten before the forward).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"

namespace {

// Names and the rows they have (0: d, 1: kv_dim, 3: d + 2 kv_dim), 2-D when `matrix`.
struct Candidate {
  const char* name;
  int rows;
  bool matrix;
};

constexpr Candidate kCandidates[] = {
    {"in_proj_weight", 3, true},       {"in_proj_bias", 3, false},
    {"out_proj.weight", 0, true},      {"out_proj.bias", 0, false},
    {"q_proj_weight", 0, true},        {"k_proj_weight", 1, true},
    {"v_proj_weight", 1, true},        {"q_proj.weight", 0, true},
    {"k_proj.weight", 1, true},        {"v_proj.weight", 1, true},
    {"o_proj.weight", 0, true},        {"q_proj.bias", 0, false},
    {"k_proj.bias", 1, false},         {"v_proj.bias", 1, false},
    {"o_proj.bias", 0, false},         {"self.query.weight", 0, true},
    {"self.key.weight", 0, true},      {"self.value.weight", 0, true},
    {"output.dense.weight", 0, true},  {"self.query.bias", 0, false},
    {"self.key.bias", 0, false},       {"self.value.bias", 0, false},
    {"output.dense.bias", 0, false},   {"output.LayerNorm.weight", 0, false},
    {"rotary_emb.inv_freq", 0, false}, {"out_proj.bais", 0, false},
    {"bias_k", 0, false},              {"q_norm.weight", 0, false},
};
constexpr const char* kPrefixes[] = {"", "layers.0.self_attn.", "layers.1.self_attn.",
                                     "encoder.layer.0.attention."};

class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t Next() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool Bit() { return (Next() & 1) != 0; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

std::vector<float> Run(const std::vector<std::uint8_t>& file, const edgeattn::LoadOptions& o,
                       bool* loaded) {
  *loaded = false;
  try {
    std::vector<std::uint8_t> copy = file;
    const edgeattn::MultiheadAttention mha =
        edgeattn::MultiheadAttention::LoadFromMemory(copy.data(), copy.size(), o);
    std::fill(copy.begin(), copy.end(), 0xFF);  // a kept pointer would now read NaNs
    *loaded = true;
    const std::size_t d = mha.config().d_model;
    std::vector<float> x(2 * d, 0.25f), y(2 * d);
    edgeattn::Context context(1);
    mha.Forward(context, {x.data(), 1, 2, d}, {y.data(), 1, 2, d});
    for (float v : y) {
      if (!(v == v)) __builtin_trap();  // finite weights and inputs: NaN means a stale pointer
    }
    return y;
  } catch (const edgeattn::Error&) {
    return {};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  const std::size_t heads = 1 + in.Next() % 4;
  const std::size_t dk = 1 + in.Next() % 3;
  const std::size_t d = heads * dk;
  const std::size_t kvd = (1 + in.Next() % heads) * dk;
  const std::string prefix = kPrefixes[in.Next() % 4];
  edgeattn::SafetensorsWriter writer;
  std::vector<float> values(3 * d * d + 64);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.01f * float(i % 17) - 0.08f;
  for (const Candidate& c : kCandidates) {
    if (!in.Bit()) continue;
    const std::size_t rows = c.rows == 0 ? d : c.rows == 1 ? kvd : d + 2 * kvd;
    const std::vector<std::size_t> shape =
        c.matrix ? std::vector<std::size_t>{rows, d} : std::vector<std::size_t>{rows};
    writer.Add(prefix + c.name, edgeattn::DType::kF32, shape, values.data());
  }
  const std::vector<std::uint8_t> file = writer.Serialize();
  edgeattn::LoadOptions options;
  options.num_heads = in.Bit() ? heads : 1 + in.Next() % 4;
  options.prefix = kPrefixes[in.Next() % 4];
  options.no_bias = in.Bit();
  bool strict_loaded = false, lenient_loaded = false, dropped_loaded = false;
  const std::vector<float> strict = Run(file, options, &strict_loaded);
  options.strict = false;
  const std::vector<float> lenient = Run(file, options, &lenient_loaded);
  if (strict_loaded && (!lenient_loaded || strict != lenient)) __builtin_trap();
  options.no_bias = true;
  Run(file, options, &dropped_loaded);
  if (strict_loaded && !dropped_loaded) __builtin_trap();
  return 0;
}
