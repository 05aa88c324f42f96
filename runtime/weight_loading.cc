#include "runtime/weight_loading.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/first_bad_value.h"
#include "runtime/int8_weight_file.h"
#include "runtime/mha_validation.h"
#include "runtime/text_checks.h"
#include "runtime/weight_names.h"

namespace edgeattn {
namespace {

std::vector<std::string> TensorNames(const SafetensorsFile& file) {
  std::vector<std::string> names;
  for (const auto& entry : file.tensors()) names.push_back(entry.first);
  return names;
}

// d_model from the output projection, the heads from the caller, the key/value heads from the
// key projection's rows (grouped-query attention).
Config FloatConfig(const SafetensorsFile& file, const MatchedNames& names,
                   const LoadOptions& options) {
  const std::string where = "safetensors '" + file.source() + "': ";
  const std::string& out_name = names.weights[kOut];
  const TensorInfo& out = file.Info(out_name);
  if (out.shape.size() != 2 || out.shape[0] != out.shape[1]) {
    throw Error(where + "'" + Printable(out_name) +
                "': expected a square [d_model, d_model] matrix (heads x head_dim = d_model)");
  }
  const std::size_t d = out.shape[0];
  if (d == 0 || d > kMaxModelDim) {
    throw Error(where + "'" + Printable(out_name) + "': expected d_model in [1, " +
                Str(kMaxModelDim) + "], got a [" + Str(d) + ", " + Str(d) + "] matrix");
  }
  if (options.num_heads == 0) {
    throw Error("num_heads: '" + file.source() +
                "' holds float weights, which do not record the number of attention heads; "
                "pass it (edgeattn run --heads N)");
  }
  // The caller's number, checked against the file's d_model here, where the message can say
  // where d_model came from.
  if (options.num_heads > d || d % options.num_heads != 0) {
    throw Error("num_heads: expected a divisor of d_model " + Str(d) + " (from '" +
                Printable(out_name) + "' in '" + file.source() + "'), got " +
                Str(options.num_heads));
  }
  std::size_t kv_heads = 0;
  const std::string& k_name = names.weights[kK];
  if (!k_name.empty()) {
    const TensorInfo& k = file.Info(k_name);
    const std::size_t dk = d / options.num_heads;
    if (k.shape.size() != 2 || k.shape[0] == 0 || k.shape[0] % dk != 0) {
      throw Error(where + "'" + Printable(k_name) + "': expected [num_kv_heads * " + Str(dk) +
                  ", " + Str(d) + "] for " + Str(options.num_heads) + " heads, got " +
                  ShapeText(k.shape));
    }
    kv_heads = k.shape[0] / dk;
    if (options.num_heads % kv_heads != 0) {
      throw Error(where + "'" + Printable(k_name) + "': its " + Str(k.shape[0]) + " rows are " +
                  Str(kv_heads) + " key/value heads of " + Str(dk) +
                  " channels, expected a divisor of the " + Str(options.num_heads) + " heads");
    }
  }
  const Config config{d,        options.num_heads, options.precision, options.int8_block,
                      kv_heads, options.projection_kernel};
  ValidateConfig(config);
  return config;
}

// Views every tensor the names give (a half layer: the biases), checked against the
// configuration's shapes.
void ViewFloatTensors(const SafetensorsFile& file, const MatchedNames& names,
                      LayerWeights* layer) {
  const std::size_t d = layer->config.d_model;
  const std::size_t kvd = KvDim(layer->config);
  const std::size_t rows[kSlots] = {d + 2 * kvd, d, kvd, kvd, d};
  FloatSpan weights[kSlots], biases[kSlots];
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    if (!names.weights[slot].empty() && !layer->half) {
      weights[slot] = FloatTensor(file, names.weights[slot], {rows[slot], d}, &layer->copies);
    }
    if (!names.biases[slot].empty()) {
      biases[slot] = FloatTensor(file, names.biases[slot], {rows[slot]}, &layer->copies);
    }
  }
  WeightsView& w = layer->floats;
  w.in_proj_weight = weights[kPacked];
  w.q_proj_weight = weights[kQ];
  w.k_proj_weight = weights[kK];
  w.v_proj_weight = weights[kV];
  w.out_proj_weight = weights[kOut];
  w.in_proj_bias = biases[kPacked];
  w.q_proj_bias = biases[kQ];
  w.k_proj_bias = biases[kK];
  w.v_proj_bias = biases[kV];
  w.out_proj_bias = biases[kOut];
}

// The file's dtype for the weights of a 16-bit precision; kF32 (never chosen) otherwise.
DType HalfDType(Precision precision) {
  if (precision == Precision::kBf16) return DType::kBF16;
  if (precision == Precision::kFp16) return DType::kF16;
  return DType::kF32;
}

// Every value of a 16-bit weight tensor finite (its exponent bits not all ones), as the float
// path's operator checks its weights; else an error naming the tensor and the first bad value.
void CheckHalfFinite(const SafetensorsFile& file, const std::string& name,
                     const std::uint16_t* values, std::size_t count, DType dtype) {
  const std::uint16_t exponent = dtype == DType::kBF16 ? 0x7F80 : 0x7C00;
  const std::size_t i =
      FirstBadValue(count, [&](std::size_t j) { return (values[j] & exponent) == exponent; });
  if (i != count) {
    throw Error("safetensors '" + file.source() + "': '" + Printable(name) + "'[" + Str(i) +
                "]: expected a finite value, got " +
                ((values[i] & ~exponent & 0x7FFF) != 0 ? "NaN" : "inf"));
  }
}

// Views the weight tensors as 16-bit values when every one is stored in the precision's format
// with its expected shape; otherwise leaves the layer alone for the float path, which converts
// them (and reports any shape or dtype it cannot take).
void ViewHalfWeights(const SafetensorsFile& file, const MatchedNames& names,
                     LayerWeights* layer) {
  const DType dtype = HalfDType(layer->config.precision);
  if (dtype == DType::kF32) return;
  const std::size_t d = layer->config.d_model;
  const std::size_t kvd = KvDim(layer->config);
  const std::size_t rows[kSlots] = {d + 2 * kvd, d, kvd, kvd, d};
  const std::uint16_t* views[kSlots] = {};
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    if (names.weights[slot].empty()) continue;
    const TensorInfo& info = file.Info(names.weights[slot]);
    const std::uint8_t* data = file.Data(names.weights[slot]);
    const bool aligned = reinterpret_cast<std::uintptr_t>(data) % alignof(std::uint16_t) == 0;
    if (info.dtype != dtype || info.shape != std::vector<std::size_t>{rows[slot], d} ||
        !aligned) {
      return;
    }
    views[slot] = reinterpret_cast<const std::uint16_t*>(data);
  }
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    if (views[slot] != nullptr) {
      CheckHalfFinite(file, names.weights[slot], views[slot], rows[slot] * d, dtype);
    }
  }
  layer->half = true;
  std::copy(std::begin(views), std::end(views), layer->half_weights);
}

}  // namespace

MultiheadAttention::Impl::Weights HalfLayerWeights(const LayerWeights& layer) {
  const std::size_t d = layer.config.d_model;
  const std::size_t kvd = KvDim(layer.config);
  const ProjectionWeights biases = SplitProjections(layer.config, layer.floats);
  const std::uint16_t* const* w = layer.half_weights;
  const std::uint16_t* q = w[kPacked] != nullptr ? w[kPacked] : w[kQ];
  const std::uint16_t* k = w[kPacked] != nullptr ? q + d * d : w[kK];
  const std::uint16_t* v = w[kPacked] != nullptr ? k + kvd * d : w[kV];
  return {q,       k,       v,       w[kOut],         nullptr,        nullptr,
          nullptr, nullptr, biases.q_bias, biases.k_bias, biases.v_bias, biases.out_bias};
}

FloatSpan FloatTensor(const SafetensorsFile& file, const std::string& name,
                      const std::vector<std::size_t>& shape,
                      std::vector<std::vector<float>>* copies) {
  const TensorInfo& info = file.Info(name);
  const std::uint8_t* data = file.Data(name);
  const bool aligned = reinterpret_cast<std::uintptr_t>(data) % alignof(float) == 0;
  if (info.dtype == DType::kF32 && info.shape == shape && aligned) {
    return {reinterpret_cast<const float*>(data), info.elements()};
  }
  copies->push_back(file.ReadFloat(name, shape));  // checks the shape and the dtype
  return {copies->back().data(), copies->back().size()};
}

namespace {

// The learned parts of the attention step a Llama-family layer may hold: gpt-oss's `sinks`
// [heads] (used when present) and Qwen3's `q_norm.weight`, `k_norm.weight` [head_dim] (used
// with options.math.qk_norm; strict loading refuses them without it, as they would change the
// result).
void ViewStepTensors(const SafetensorsFile& file, const std::string& prefix,
                     const LoadOptions& options, LayerWeights* layer) {
  const auto has = [&](const char* name) { return file.tensors().count(prefix + name) != 0; };
  const std::size_t heads = layer->config.num_heads;
  const std::size_t dk = layer->config.d_model / heads;
  WeightsView& w = layer->floats;
  if (has("sinks")) w.sinks = FloatTensor(file, prefix + "sinks", {heads}, &layer->copies);
  for (const char* name : {"q_norm.weight", "k_norm.weight"}) {
    if (!has(name)) continue;
    if (!options.math.qk_norm) {
      if (!options.strict) continue;
      throw Error(file.source() + ": '" + Printable(prefix + name) +
                  "' is a norm of Q and K: expected LoadOptions.math.qk_norm (or non-strict "
                  "loading, which ignores it)");
    }
    const FloatSpan weight = FloatTensor(file, prefix + name, {dk}, &layer->copies);
    (name[0] == 'q' ? w.q_norm_weight : w.k_norm_weight) = weight;
  }
}

LayerWeights ReadFloatLayer(const SafetensorsFile& file, const LoadOptions& options) {
  const NameRules rules{NormalizePrefix(options.prefix), options.strict, options.no_bias};
  const MatchedNames names = MatchLayerNames(TensorNames(file), rules, file.source());
  LayerWeights layer;
  layer.config = FloatConfig(file, names, options);
  ViewHalfWeights(file, names, &layer);
  ViewFloatTensors(file, names, &layer);
  if (std::string(names.scheme->family) == "llama") {
    ViewStepTensors(file, rules.prefix, options, &layer);
  }
  return layer;
}

// How far a stored frequency may lie from base^(-2i / dims): the float computation's few ulps
// (1e-5 relative) plus its dtype's rounding, half a unit in the last of bf16's 8 and fp16's 11
// significant bits (and half of 2^-24, the step of fp16's subnormals below 2^-14).
struct FrequencyTolerance {
  double relative, absolute;
};
FrequencyTolerance ToleranceOf(DType dtype) {
  if (dtype == DType::kBF16) return {std::ldexp(1.0, -8) + 1e-5, 0.0};
  if (dtype == DType::kF16) return {std::ldexp(1.0, -11) + 1e-5, std::ldexp(1.0, -25)};
  return {1e-5, 0.0};
}

// `rotary_emb.inv_freq` (older Llama conversions) records the frequencies the layer was trained
// with, which LoadOptions.math must reproduce: strict loading refuses it without math.rotary,
// and every load with rotary refuses frequencies that math's base and rotary_dim do not give
// (another base, or a scaling of the frequencies edgeattn does not compute). Either would
// silently compute another layer.
void CheckRotaryFrequencies(const SafetensorsFile& file, const LoadOptions& options,
                            const Config& config) {
  const std::string name = NormalizePrefix(options.prefix) + "rotary_emb.inv_freq";
  if (file.tensors().count(name) == 0) return;
  const AttentionMath& m = config.math;
  const std::string where = "safetensors '" + file.source() + "': '" + Printable(name) + "'";
  if (m.rotary == RotaryLayout::kNone) {
    if (!options.strict) return;
    throw Error(where +
                " holds rotary frequencies: expected LoadOptions.math.rotary (or "
                "non-strict loading, which ignores it)");
  }
  const std::size_t dims = m.rotary_dim != 0 ? m.rotary_dim : config.d_model / config.num_heads;
  const std::vector<std::size_t>& shape = file.Info(name).shape;
  if (shape != std::vector<std::size_t>{dims / 2}) {
    throw Error(where + ": expected [" + Str(dims / 2) + "], one frequency per pair of the " +
                Str(dims) + " rotated dims (" +
                (m.rotary_dim != 0 ? "LoadOptions.math.rotary_dim"
                                   : "head_dim: d_model / num_heads, as rotary_dim is 0") +
                "), got " + ShapeText(shape));
  }
  const std::vector<float> got = file.ReadFloat(name, shape);  // converts, or names the dtype
  const FrequencyTolerance tolerance = ToleranceOf(file.Info(name).dtype);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double want = std::pow(double(m.rotary_base), -2.0 * double(i) / double(dims));
    if (std::abs(got[i] - want) <= tolerance.relative * want + tolerance.absolute) continue;
    throw Error(where + "[" + Str(i) +
                "]: expected rotary_base^(-2i / rotary_dim) = " + FloatDigits(float(want)) +
                " for LoadOptions.math.rotary_base " + FloatDigits(m.rotary_base) + " and " +
                Str(dims) + " rotated dims, got " + FloatDigits(got[i]) +
                " (another base, or scaled frequencies edgeattn does not "
                "compute)");
  }
}

}  // namespace

LayerWeights FindLayerWeights(const SafetensorsFile& file, const LoadOptions& options) {
  LayerWeights layer =
      IsInt8File(file) ? ReadInt8Layer(file, options) : ReadFloatLayer(file, options);
  // What the file does not record: the attention kernel and the attention step's maths.
  layer.config.attention_kernel = options.attention_kernel;
  layer.config.kv_format = options.kv_format;
  layer.config.math = options.math;
  ValidateConfig(layer.config);
  CheckRotaryFrequencies(file, options, layer.config);
  return layer;
}

}  // namespace edgeattn
