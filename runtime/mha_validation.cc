#include "runtime/mha_validation.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include "runtime/attention_math.h"
#include "runtime/first_bad_value.h"
#include "runtime/text_checks.h"

namespace edgeattn {
namespace {

void CheckRange(const char* name, std::size_t value, std::size_t lo, std::size_t hi) {
  if (value < lo || value > hi) {
    throw Error(std::string(name) + ": expected a value in [" + Str(lo) + ", " + Str(hi) +
                "], got " + Str(value));
  }
}

// A weight or bias of `expected` finite floats (a NaN or infinite weight would make every row
// it reaches NaN: refused here, naming it, as a corrupt checkpoint's should be).
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
  CheckFinite(name, span);
}

// a * b * ..., or SIZE_MAX when the product overflows (then no span can match it).
std::size_t Product(std::initializer_list<std::size_t> factors) {
  std::size_t p = 1;
  for (std::size_t f : factors) {
    if (f != 0 && p > std::numeric_limits<std::size_t>::max() / f) {
      return std::numeric_limits<std::size_t>::max();
    }
    p *= f;
  }
  return p;
}

// An optional option array: null data with size 0 means absent.
template <class T>
bool Present(const char* name, const Span<T>& span) {
  if (span.data == nullptr && span.size != 0) {
    throw Error(std::string(name) + ": got a null pointer with size " + Str(span.size));
  }
  return span.data != nullptr;
}

// shape: a literal, so that nothing is allocated unless the check fails.
template <class T>
void CheckSize(const char* name, const Span<T>& span, std::size_t expected, const char* shape) {
  if (span.size != expected) {
    throw Error(std::string(name) + ": expected " + Str(expected) + " values " + shape +
                ", got " + Str(span.size));
  }
}

template <class T>
std::size_t Bytes(const Span<T>& span) {
  return span.size * sizeof(T);
}

std::size_t Bytes(const Tensor& t) { return t.batch * t.length * t.features * sizeof(float); }

// The outputs are written while some inputs are still being read: the attention weights while
// the masks and lengths are, the output while the lengths are. Such overlaps are refused (the
// output over query, key or value is fine: they are read before it is first written).
void CheckOutputsApart(const MhaShape& s, const Tensor& out, const ForwardOptions& o) {
  const std::size_t lengths_bytes = s.batch * sizeof(std::size_t);
  const auto apart = [&](const char* output, const void* p, std::size_t bytes) {
    const auto check = [&](const char* input, const void* q, std::size_t q_bytes) {
      if (Overlap(p, bytes, q, q_bytes)) {
        throw Error(std::string(output) + ": expected a buffer apart from " + input +
                    ", got one that overlaps it");
      }
    };
    check("query_lengths", o.query_lengths.data, o.query_lengths.data ? lengths_bytes : 0);
    check("key_lengths", o.key_lengths.data, o.key_lengths.data ? lengths_bytes : 0);
    if (p == o.attn_weights.data) {
      check("attn_mask", o.attn_mask.data, Bytes(o.attn_mask));
      check("key_padding_mask", o.key_padding_mask.data, Bytes(o.key_padding_mask));
    }
  };
  apart("out", out.data, Bytes(out));
  apart("attn_weights", o.attn_weights.data, Bytes(o.attn_weights));
  if (Overlap(out.data, Bytes(out), o.attn_weights.data, Bytes(o.attn_weights))) {
    throw Error("attn_weights: expected a buffer apart from out, got one that overlaps it");
  }
}

}  // namespace

void CheckFinite(const char* name, const FloatSpan& span) {
  const std::size_t i = FirstBadValue(span.size, [&](std::size_t j) {
    return !(std::fabs(span.data[j]) <= std::numeric_limits<float>::max());
  });
  if (i != span.size) {
    throw Error(std::string(name) + "[" + Str(i) + "]: expected a finite value, got " +
                FloatStr(span.data[i]));
  }
}

const std::size_t* CheckLengths(const char* name, const Span<const std::size_t>& lengths,
                                std::size_t batch, std::size_t length) {
  if (!Present(name, lengths)) return nullptr;
  CheckSize(name, lengths, batch, "[batch]");
  for (std::size_t b = 0; b < batch; ++b) {
    if (lengths.data[b] > length) {
      throw Error(std::string(name) + "[" + Str(b) + "]: expected a length in [0, " +
                  Str(length) + "], got " + Str(lengths.data[b]));
    }
  }
  return lengths.data;
}

// True when the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool Overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  if (a == nullptr || b == nullptr || a_bytes == 0 || b_bytes == 0) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a);
  const auto b0 = reinterpret_cast<std::uintptr_t>(b);
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

void ValidateTensor(const char* name, const ConstTensor& t, std::size_t d_model) {
  // The shape first: an empty tensor's data may well be null, and its length is the news.
  CheckRange((std::string(name) + ".batch").c_str(), t.batch, 1, kMaxBatch);
  CheckRange((std::string(name) + ".length").c_str(), t.length, 1, kMaxSequenceLength);
  if (t.features != d_model) {
    throw Error(std::string(name) + ".features: expected d_model = " + Str(d_model) + ", got " +
                Str(t.features));
  }
  if (t.data == nullptr) throw Error(std::string(name) + ".data: expected a buffer, got null");
}

void ValidateTensor(const char* name, const Tensor& t, std::size_t d_model) {
  ValidateTensor(name, ConstTensor{t.data, t.batch, t.length, t.features}, d_model);
}

void ValidateConfig(const Config& config) {
  CheckRange("Config.d_model", config.d_model, 1, kMaxModelDim);
  CheckRange("Config.num_heads", config.num_heads, 1, config.d_model);
  if (config.d_model % config.num_heads != 0) {
    throw Error("Config.d_model: expected a multiple of num_heads (" + Str(config.num_heads) +
                "), got " + Str(config.d_model));
  }
  if (config.num_kv_heads != 0 &&
      (config.num_kv_heads > config.num_heads || config.num_heads % config.num_kv_heads != 0)) {
    throw Error("Config.num_kv_heads: expected 0 (= num_heads) or a divisor of num_heads (" +
                Str(config.num_heads) + "), got " + Str(config.num_kv_heads));
  }
  if (config.precision != Precision::kFp32 && config.precision != Precision::kInt8 &&
      config.precision != Precision::kBf16 && config.precision != Precision::kFp16) {
    throw Error("Config.precision: expected kFp32, kInt8, kBf16, kFp16 or kAuto, got " +
                Str(static_cast<std::size_t>(config.precision)));
  }
  if (config.precision == Precision::kInt8 &&
      (config.int8_block < 4 || config.int8_block > kMaxInt8Block || config.int8_block % 4 != 0)) {
    throw Error("Config.int8_block: expected a multiple of 4 in [4, " + Str(kMaxInt8Block) +
                "], got " + Str(config.int8_block));
  }
  if (config.kv_format != KvFormat::kFp32 && config.kv_format != KvFormat::kBf16 &&
      config.kv_format != KvFormat::kFp16 && config.kv_format != KvFormat::kInt8) {
    throw Error("Config.kv_format: expected kFp32, kBf16, kFp16, kInt8 or kAuto, got " +
                Str(static_cast<std::size_t>(config.kv_format)));
  }
  ValidateAttentionMath(config);
}

std::size_t KvHeads(const Config& config) {
  return config.num_kv_heads != 0 ? config.num_kv_heads : config.num_heads;
}

std::size_t KvDim(const Config& config) {
  return KvHeads(config) * (config.d_model / config.num_heads);
}

namespace {

void CheckProjectionMatrices(const Config& config, const WeightsView& weights) {
  const std::size_t d = config.d_model;
  const std::size_t kvd = KvDim(config);
  const std::string dd = "[" + Str(d) + ", " + Str(d) + "]";
  const std::string kd = "[" + Str(kvd) + ", " + Str(d) + "]";
  const bool separate = weights.q_proj_weight.data != nullptr ||
                        weights.k_proj_weight.data != nullptr ||
                        weights.v_proj_weight.data != nullptr;
  if (separate) {
    if (weights.in_proj_weight.data != nullptr) {
      throw Error("in_proj_weight: expected null when q/k/v_proj_weight are given, got both");
    }
    CheckSpan("q_proj_weight", weights.q_proj_weight, d * d, dd, false);
    CheckSpan("k_proj_weight", weights.k_proj_weight, kvd * d, kd, false);
    CheckSpan("v_proj_weight", weights.v_proj_weight, kvd * d, kd, false);
  } else {
    if (kvd != d) {
      throw Error("in_proj_weight: grouped-query attention (num_kv_heads = " +
                  Str(KvHeads(config)) + " of " + Str(config.num_heads) +
                  " heads) needs separate q/k/v_proj_weight, got in_proj_weight");
    }
    CheckSpan("in_proj_weight", weights.in_proj_weight, 3 * d * d,
              "[" + Str(3 * d) + ", " + Str(d) + "]", false);
  }
  CheckSpan("out_proj.weight", weights.out_proj_weight, d * d, dd, false);
}

void CheckBiases(const Config& config, const WeightsView& weights) {
  const std::size_t d = config.d_model;
  const std::size_t kvd = KvDim(config);
  const bool separate_bias = weights.q_proj_bias.data != nullptr ||
                             weights.k_proj_bias.data != nullptr ||
                             weights.v_proj_bias.data != nullptr;
  if (separate_bias) {
    if (weights.in_proj_bias.data != nullptr) {
      throw Error("in_proj_bias: expected null when q/k/v_proj_bias are given, got both");
    }
    // Each may be absent on its own: Whisper's k_proj has no bias, its q_proj and v_proj do.
    CheckSpan("q_proj_bias", weights.q_proj_bias, d, "[" + Str(d) + "]", true);
    CheckSpan("k_proj_bias", weights.k_proj_bias, kvd, "[" + Str(kvd) + "]", true);
    CheckSpan("v_proj_bias", weights.v_proj_bias, kvd, "[" + Str(kvd) + "]", true);
  } else {
    CheckSpan("in_proj_bias", weights.in_proj_bias, d + 2 * kvd, "[" + Str(d + 2 * kvd) + "]",
              true);
  }
  CheckSpan("out_proj.bias", weights.out_proj_bias, d, "[" + Str(d) + "]", true);
}

}  // namespace

void ValidateWeights(const Config& config, const WeightsView& weights) {
  CheckProjectionMatrices(config, weights);
  ValidateVectorWeights(config, weights);
}

void ValidateVectorWeights(const Config& config, const WeightsView& weights) {
  CheckBiases(config, weights);
  ValidateMathWeights(config, weights);
}

ProjectionWeights SplitProjections(const Config& config, const WeightsView& weights) {
  const std::size_t d = config.d_model;
  const std::size_t kvd = KvDim(config);
  ProjectionWeights p;
  if (weights.in_proj_weight.data != nullptr) {
    p.q = weights.in_proj_weight.data;
    p.k = p.q + d * d;
    p.v = p.k + kvd * d;
  } else {
    p.q = weights.q_proj_weight.data;
    p.k = weights.k_proj_weight.data;
    p.v = weights.v_proj_weight.data;
  }
  if (weights.in_proj_bias.data != nullptr) {
    p.q_bias = weights.in_proj_bias.data;
    p.k_bias = p.q_bias + d;
    p.v_bias = p.k_bias + kvd;
  } else {
    p.q_bias = weights.q_proj_bias.data;
    p.k_bias = weights.k_proj_bias.data;
    p.v_bias = weights.v_proj_bias.data;
  }
  p.out = weights.out_proj_weight.data;
  p.out_bias = weights.out_proj_bias.data;
  return p;
}

MhaShape ValidateForward(const Config& config, const ConstTensor& query, const ConstTensor& key,
                         const ConstTensor& value, const Tensor& out,
                         const ForwardOptions& options, MhaOptions* resolved) {
  ValidateTensor("query", query, config.d_model);
  ValidateTensor("key", key, config.d_model);
  ValidateTensor("value", value, config.d_model);
  ValidateTensor("out", out, config.d_model);
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
  const MhaShape shape{query.batch, query.length,     key.length,
                       config.d_model, config.num_heads, KvHeads(config)};
  *resolved = ResolveOptions(shape, options);
  resolved->positions = CheckPositions("positions", options.positions, shape.lq, config.math);
  resolved->key_positions =
      CheckPositions("key_positions", options.key_positions, shape.lk, config.math);
  CheckOutputsApart(shape, out, options);
  return shape;
}

MhaOptions ResolveOptions(const MhaShape& s, const ForwardOptions& options) {
  MhaOptions r;
  r.causal = options.is_causal;
  if (Present("key_padding_mask", options.key_padding_mask)) {
    CheckSize("key_padding_mask", options.key_padding_mask, Product({s.batch, s.lk}), "[batch, Lk]");
    r.key_padding = options.key_padding_mask.data;
  }
  if (Present("attn_mask", options.attn_mask)) {
    const std::size_t shared = Product({s.lq, s.lk});
    const std::size_t per_head = Product({s.batch, s.heads, s.lq, s.lk});
    if (options.attn_mask.size != shared && options.attn_mask.size != per_head) {
      throw Error("attn_mask: expected " + Str(shared) + " floats [Lq = " + Str(s.lq) +
                  ", Lk = " + Str(s.lk) + "] or " + Str(per_head) + " [batch * num_heads = " +
                  Str(s.batch * s.heads) + ", Lq, Lk], got " + Str(options.attn_mask.size));
    }
    r.attn_mask = options.attn_mask.data;
    r.mask_per_head = options.attn_mask.size != shared;
  }
  r.query_lengths = CheckLengths("query_lengths", options.query_lengths, s.batch, s.lq);
  r.key_lengths = CheckLengths("key_lengths", options.key_lengths, s.batch, s.lk);
  const bool has_weights = Present("attn_weights", options.attn_weights);
  switch (options.need_weights) {
    case AttentionWeights::kNone:
      if (has_weights) {
        throw Error("attn_weights: given, but need_weights is kNone (set kPerHead or kAveraged)");
      }
      break;
    case AttentionWeights::kPerHead:
    case AttentionWeights::kAveraged: {
      const bool per_head = options.need_weights == AttentionWeights::kPerHead;
      const char* shape = per_head ? "[batch, num_heads, Lq, Lk]" : "[batch, Lq, Lk]";
      if (!has_weights) {
        throw Error(std::string("attn_weights: expected a buffer ") + shape +
                    " for need_weights, got null");
      }
      CheckSize("attn_weights", options.attn_weights,
                Product({s.batch, per_head ? s.heads : 1, s.lq, s.lk}), shape);
      r.weights_mode = options.need_weights;
      r.weights = options.attn_weights.data;
      break;
    }
    default:
      throw Error("need_weights: expected kNone, kPerHead or kAveraged, got " +
                  Str(static_cast<std::size_t>(options.need_weights)));
  }
  return r;
}

}  // namespace edgeattn
