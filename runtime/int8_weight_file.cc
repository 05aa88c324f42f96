#include "runtime/int8_weight_file.h"

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "runtime/mha_validation.h"
#include "runtime/text_checks.h"
#include "runtime/weight_names.h"

namespace edgeattn {
namespace {

constexpr char kFormat[] = "edgeattn-int8-v1";
constexpr char kInQ[] = "in_proj_weight.int8";
constexpr char kInScale[] = "in_proj_weight.scale";
constexpr char kOutQ[] = "out_proj.weight.int8";
constexpr char kOutScale[] = "out_proj.weight.scale";
constexpr char kInBias[] = "in_proj_bias";
constexpr char kOutBias[] = "out_proj.bias";
// Far above any valid value; ValidateConfig then checks each against its own limit.
constexpr std::size_t kMaxMetaNumber = std::size_t{1} << 30;

std::string Where(const SafetensorsFile& file) {
  return "int8 weights '" + file.source() + "': ";
}

std::size_t MetaNumber(const SafetensorsFile& file, const char* key, bool required,
                       std::size_t fallback) {
  const auto it = file.metadata().find(key);
  if (it == file.metadata().end()) {
    if (!required) return fallback;
    throw Error(Where(file) + "expected __metadata__ '" + key + "'");
  }
  std::size_t value = 0;
  if (!ParseDecimal(it->second, kMaxMetaNumber, &value)) {
    throw Error(Where(file) + "__metadata__ '" + key +
                "': expected a decimal whole number (digits only, at most " + Str(kMaxMetaNumber) +
                "), got '" + Printable(it->second) + "'");
  }
  return value;
}

void CheckFormat(const SafetensorsFile& file) {
  const auto it = file.metadata().find("format");
  if (it == file.metadata().end()) {
    throw Error(Where(file) + "expected __metadata__ 'format' = '" + kFormat + "'");
  }
  if (it->second != kFormat) {
    throw Error(Where(file) + "__metadata__ 'format': expected '" + kFormat + "', got '" +
                Printable(it->second) + "'");
  }
}

// The same strictness as for float files: the four tensors, biases as the file has them, and
// nothing else.
void CheckNames(const SafetensorsFile& file, const LoadOptions& options) {
  if (!options.prefix.empty()) {
    throw Error(Where(file) + "prefix: an int8 file holds one layer at the top level, got '" +
                Printable(options.prefix) + "'");
  }
  for (const char* name : {kInQ, kInScale, kOutQ, kOutScale}) {
    if (!file.Contains(name)) throw Error(Where(file) + "missing tensor '" + name + "'");
  }
  const std::set<std::string> known = {kInQ, kInScale, kOutQ, kOutScale, kInBias, kOutBias};
  for (const auto& entry : file.tensors()) {
    if (options.strict && known.count(entry.first) == 0) {
      throw Error(Where(file) + "unexpected tensor '" + Printable(entry.first) +
                  "'; load non-strict to ignore it");
    }
  }
  if (options.strict && options.no_bias && (file.Contains(kInBias) || file.Contains(kOutBias))) {
    throw Error(Where(file) +
                "no_bias (bias=False) expects no bias tensors, got in_proj_bias or out_proj.bias; "
                "load non-strict to ignore them");
  }
}

Config Int8Config(const SafetensorsFile& file, const LoadOptions& options) {
  const std::size_t file_heads = MetaNumber(file, "num_heads", true, 0);
  if (options.num_heads != 0 && options.num_heads != file_heads) {
    throw Error("num_heads: the int8 file '" + file.source() + "' was quantized for " +
                Str(file_heads) + " heads, got " + Str(options.num_heads));
  }
  const Config config{MetaNumber(file, "d_model", true, 0),       file_heads,
                      Precision::kInt8,
                      MetaNumber(file, "int8_block", true, 0),
                      MetaNumber(file, "num_kv_heads", false, 0), options.projection_kernel};
  try {
    ValidateConfig(config);
  } catch (const Error& e) {
    // Every field it checks came from the file's metadata (the caller's kernel name is checked
    // where the kernel is chosen): say so, rather than name a Config the caller never set.
    throw Error("int8 weights '" + file.source() + "': its __metadata__ gives " + e.what());
  }
  return config;
}

const std::int8_t* Int8Values(const SafetensorsFile& file, const char* name, std::size_t rows,
                              std::size_t d) {
  const TensorInfo& info = file.Info(name);
  if (info.dtype != DType::kI8 || info.shape != std::vector<std::size_t>{rows, d}) {
    throw Error(Where(file) + name + ": expected I8 [" + Str(rows) + ", " + Str(d) +
                "] (d_model " + Str(d) + " from __metadata__), got " + DTypeName(info.dtype) + " " +
                ShapeText(info.shape));
  }
  return reinterpret_cast<const std::int8_t*>(file.Data(name));
}

// A scale is finite and positive, or zero for a row whose values are all zero (the quantizer
// gives an all-zero weight row the scale 0). Anything else would flip, zero or poison outputs.
void CheckScales(const std::string& where, const char* name, const float* scales,
                 const std::int8_t* values, std::size_t rows, std::size_t k) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float s = scales[r];
    bool zero_row = true;
    for (std::size_t i = 0; i < k && zero_row && s == 0.0f; ++i) zero_row = values[r * k + i] == 0;
    if (std::isfinite(s) && (s > 0.0f || (s == 0.0f && zero_row))) continue;
    throw Error(where + name + "[" + Str(r) + "]: expected a finite scale > 0 (or 0 for a row " +
                "of zeros), got " + std::to_string(s) +
                (s == 0.0f ? " for a row with nonzero values" : ""));
  }
}

const float* Scales(const SafetensorsFile& file, const char* name, std::size_t rows,
                    LayerWeights* layer) {
  const TensorInfo& info = file.Info(name);
  if (info.dtype != DType::kF32) {
    throw Error(Where(file) + name + ": expected F32, got " + DTypeName(info.dtype));
  }
  layer->copies.push_back(file.ReadFloat(name, {rows}));
  return layer->copies.back().data();
}

const float* Bias(const SafetensorsFile& file, const char* name, std::size_t rows,
                  const LoadOptions& options, LayerWeights* layer) {
  if (options.no_bias || !file.Contains(name)) return nullptr;
  return FloatTensor(file, name, {rows}, &layer->copies).data;
}

}  // namespace

bool IsInt8File(const SafetensorsFile& file) {
  const auto format = file.metadata().find("format");
  return (format != file.metadata().end() && format->second == kFormat) ||
         file.Contains(kInQ) || file.Contains(kOutQ);
}

LayerWeights ReadInt8Layer(const SafetensorsFile& file, const LoadOptions& options) {
  CheckFormat(file);
  CheckNames(file, options);
  LayerWeights layer;
  layer.int8 = true;
  layer.config = Int8Config(file, options);
  const std::size_t d = layer.config.d_model;
  const std::size_t kvd = KvDim(layer.config);
  const std::size_t in_rows = d + 2 * kvd;
  const std::int8_t* in_q = Int8Values(file, kInQ, in_rows, d);
  const std::int8_t* out_q = Int8Values(file, kOutQ, d, d);
  const float* in_scale = Scales(file, kInScale, in_rows, &layer);
  const float* out_scale = Scales(file, kOutScale, d, &layer);
  CheckScales(Where(file), kInScale, in_scale, in_q, in_rows, d);
  CheckScales(Where(file), kOutScale, out_scale, out_q, d, d);
  const float* in_bias = Bias(file, kInBias, in_rows, options, &layer);
  auto& w = layer.int8_weights;
  w = {in_q,         in_q + d * d,     in_q + (d + kvd) * d,     out_q,
       in_scale,     in_scale + d,     in_scale + d + kvd,       out_scale,
       in_bias,      in_bias ? in_bias + d : nullptr,
       in_bias ? in_bias + d + kvd : nullptr, Bias(file, kOutBias, d, options, &layer)};
  return layer;
}

void WriteInt8File(const std::string& path, const Config& config,
                   const Int8Weights& w) {
  const std::size_t d = config.d_model;
  const std::size_t kvd = KvDim(config);
  const std::size_t in_rows = d + 2 * kvd;
  const std::string where = "SaveInt8 '" + path + "': ";
  std::vector<std::int8_t> in_q;
  std::vector<float> in_scale, in_bias;
  const bool any_bias = w.q_bias != nullptr || w.k_bias != nullptr || w.v_bias != nullptr;
  const struct {
    const std::int8_t* values;
    const float *scales, *bias;
    std::size_t rows;
  } parts[] = {{w.q, w.q_scale, w.q_bias, d}, {w.k, w.k_scale, w.k_bias, kvd},
               {w.v, w.v_scale, w.v_bias, kvd}};
  for (const auto& p : parts) {
    in_q.insert(in_q.end(), p.values, p.values + p.rows * d);
    in_scale.insert(in_scale.end(), p.scales, p.scales + p.rows);
    // A file holds one bias for all three projections or none: missing ones become zeros.
    if (any_bias) {
      for (std::size_t n = 0; n < p.rows; ++n) in_bias.push_back(p.bias ? p.bias[n] : 0.0f);
    }
  }
  CheckScales(where, kInScale, in_scale.data(), in_q.data(), in_rows, d);
  CheckScales(where, kOutScale, w.out_scale, w.out, d, d);
  SafetensorsWriter writer;
  writer.Add(kInQ, DType::kI8, {in_rows, d}, in_q.data());
  writer.Add(kInScale, DType::kF32, {in_rows}, in_scale.data());
  writer.Add(kOutQ, DType::kI8, {d, d}, w.out);
  writer.Add(kOutScale, DType::kF32, {d}, w.out_scale);
  if (any_bias) writer.Add(kInBias, DType::kF32, {in_rows}, in_bias.data());
  if (w.out_bias != nullptr) writer.Add(kOutBias, DType::kF32, {d}, w.out_bias);
  writer.SetMetadata("format", kFormat);
  writer.SetMetadata("num_heads", Str(config.num_heads));
  writer.SetMetadata("num_kv_heads", Str(KvHeads(config)));
  writer.SetMetadata("d_model", Str(d));
  writer.SetMetadata("int8_block", Str(config.int8_block));
  writer.SetMetadata("weights", "int8 symmetric, one F32 scale per output channel (row)");
  writer.SetMetadata("activations",
                     "int8 symmetric, one scale per row and per int8_block values, at run time");
  writer.Write(path);
}

}  // namespace edgeattn
