#include "runtime/mha_validation.h"

#include <string>

namespace edgeattn {
namespace {

std::string Str(std::size_t v) { return std::to_string(v); }

void CheckRange(const char* name, std::size_t value, std::size_t lo, std::size_t hi) {
  if (value < lo || value > hi) {
    throw Error(std::string(name) + ": expected a value in [" + Str(lo) + ", " + Str(hi) +
                "], got " + Str(value));
  }
}

void CheckSpan(const char* name, const FloatSpan& span, std::size_t expected,
               const std::string& shape, bool optional) {
  if (span.data == nullptr) {
    if (optional) return;
    throw Error(std::string(name) + ": expected " + Str(expected) + " floats " + shape +
                ", got a null pointer");
  }
  if (span.size != expected) {
    throw Error(std::string(name) + ": expected " + Str(expected) + " floats " + shape +
                ", got " + Str(span.size));
  }
}

template <class T>
void CheckTensor(const char* name, const T& t, std::size_t d_model) {
  if (t.data == nullptr) throw Error(std::string(name) + ".data: expected a buffer, got null");
  CheckRange((std::string(name) + ".batch").c_str(), t.batch, 1, kMaxBatch);
  CheckRange((std::string(name) + ".length").c_str(), t.length, 1, kMaxSequenceLength);
  if (t.features != d_model) {
    throw Error(std::string(name) + ".features: expected d_model = " + Str(d_model) + ", got " +
                Str(t.features));
  }
}

}  // namespace

void ValidateConfig(const Config& config) {
  CheckRange("Config.d_model", config.d_model, 1, kMaxModelDim);
  CheckRange("Config.num_heads", config.num_heads, 1, config.d_model);
  if (config.d_model % config.num_heads != 0) {
    throw Error("Config.d_model: expected a multiple of num_heads (" + Str(config.num_heads) +
                "), got " + Str(config.d_model));
  }
  if (config.precision != Precision::kFp32 && config.precision != Precision::kInt8) {
    throw Error("Config.precision: expected kFp32 or kInt8, got " +
                Str(static_cast<std::size_t>(config.precision)));
  }
  if (config.precision == Precision::kInt8 &&
      (config.int8_block < 4 || config.int8_block > 65536 || config.int8_block % 4 != 0)) {
    throw Error("Config.int8_block: expected a multiple of 4 in [4, 65536], got " +
                Str(config.int8_block));
  }
}

void ValidateWeights(const Config& config, const WeightsView& weights) {
  const std::size_t d = config.d_model;
  const std::string dd = "[" + Str(d) + ", " + Str(d) + "]";
  CheckSpan("in_proj_weight", weights.in_proj_weight, 3 * d * d,
            "[" + Str(3 * d) + ", " + Str(d) + "]", false);
  CheckSpan("in_proj_bias", weights.in_proj_bias, 3 * d, "[" + Str(3 * d) + "]", true);
  CheckSpan("out_proj.weight", weights.out_proj_weight, d * d, dd, false);
  CheckSpan("out_proj.bias", weights.out_proj_bias, d, "[" + Str(d) + "]", true);
}

MhaShape ValidateForward(const Config& config, const ConstTensor& query, const ConstTensor& key,
                         const ConstTensor& value, const Tensor& out) {
  CheckTensor("query", query, config.d_model);
  CheckTensor("key", key, config.d_model);
  CheckTensor("value", value, config.d_model);
  CheckTensor("out", out, config.d_model);
  if (key.batch != query.batch || value.batch != query.batch) {
    throw Error("key.batch and value.batch: expected query.batch = " + Str(query.batch) +
                ", got " + Str(key.batch) + " and " + Str(value.batch));
  }
  if (value.length != key.length) {
    throw Error("value.length: expected key.length = " + Str(key.length) + ", got " +
                Str(value.length));
  }
  if (out.batch != query.batch || out.length != query.length) {
    throw Error("out: expected shape [" + Str(query.batch) + ", " + Str(query.length) + ", " +
                Str(config.d_model) + "] like query, got [" + Str(out.batch) + ", " +
                Str(out.length) + ", " + Str(out.features) + "]");
  }
  return {query.batch, query.length, key.length, config.d_model, config.num_heads};
}

}  // namespace edgeattn
