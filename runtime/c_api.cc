// The C API: each entry point converts C++ exceptions into a status and a thread-local message.
#include "edgeattn/edgeattn.h"

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "edgeattn/edgeattn.hpp"
#include "runtime/c_thread_pool.h"
#include "runtime/out_of_memory.h"

struct edgeattn_operator {
  edgeattn::MultiheadAttention mha;
};

struct edgeattn_context {
  std::unique_ptr<edgeattn::Executor> caller_pool;  // before context, which runs on it
  edgeattn::Context context;
  explicit edgeattn_context(std::size_t threads) : context(threads) {}
  explicit edgeattn_context(std::unique_ptr<edgeattn::Executor> pool)
      : caller_pool(std::move(pool)), context(*caller_pool) {}
};

struct edgeattn_kv_cache {
  edgeattn::KvCache cache;
};

struct edgeattn_cross_memory {
  edgeattn::CrossAttentionMemory memory;
};

namespace {

thread_local std::string last_error;

// Runs fn, mapping every exception to a status; nothing propagates to the C caller.
template <class Fn>
edgeattn_status Guard(const Fn& fn) {
  try {
    last_error.clear();
    fn();
    return EDGEATTN_OK;
  } catch (const edgeattn::Error& e) {
    last_error = e.what();
    return EDGEATTN_ERROR_INVALID_ARGUMENT;
  } catch (const edgeattn::OutOfMemory& e) {
    last_error = e.what();
    return EDGEATTN_ERROR_OUT_OF_MEMORY;
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return EDGEATTN_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    last_error = std::string("internal error: ") + e.what();
    return EDGEATTN_ERROR_INTERNAL;
  } catch (...) {
    last_error = "internal error";
    return EDGEATTN_ERROR_INTERNAL;
  }
}

void RequireNonNull(const void* p, const char* name) {
  if (p == nullptr) throw edgeattn::Error(std::string(name) + ": expected a pointer, got NULL");
}

edgeattn::KvFormat ToKvFormat(int f, const char* name) {
  if (f == EDGEATTN_KV_FP32) return edgeattn::KvFormat::kFp32;
  if (f == EDGEATTN_KV_BF16) return edgeattn::KvFormat::kBf16;
  if (f == EDGEATTN_KV_FP16) return edgeattn::KvFormat::kFp16;
  if (f == EDGEATTN_KV_INT8) return edgeattn::KvFormat::kInt8;
  if (f == EDGEATTN_KV_AUTO) return edgeattn::KvFormat::kAuto;
  throw edgeattn::Error(std::string(name) +
                        ": expected EDGEATTN_KV_FP32, EDGEATTN_KV_BF16, EDGEATTN_KV_FP16, "
                        "EDGEATTN_KV_INT8 or EDGEATTN_KV_AUTO, got " +
                        std::to_string(f));
}

edgeattn::Precision ToPrecision(int p) {
  if (p == EDGEATTN_FP32) return edgeattn::Precision::kFp32;
  if (p == EDGEATTN_INT8) return edgeattn::Precision::kInt8;
  if (p == EDGEATTN_BF16) return edgeattn::Precision::kBf16;
  if (p == EDGEATTN_FP16) return edgeattn::Precision::kFp16;
  if (p == EDGEATTN_AUTO) return edgeattn::Precision::kAuto;
  throw edgeattn::Error(
      "precision: expected EDGEATTN_FP32, EDGEATTN_INT8, EDGEATTN_BF16, EDGEATTN_FP16 or "
      "EDGEATTN_AUTO, got " +
      std::to_string(p));
}

edgeattn::AttentionWeights ToWeightsMode(int mode) {
  switch (mode) {
    case EDGEATTN_WEIGHTS_NONE:
      return edgeattn::AttentionWeights::kNone;
    case EDGEATTN_WEIGHTS_PER_HEAD:
      return edgeattn::AttentionWeights::kPerHead;
    case EDGEATTN_WEIGHTS_AVERAGED:
      return edgeattn::AttentionWeights::kAveraged;
    default:
      throw edgeattn::Error(
          "need_weights: expected EDGEATTN_WEIGHTS_NONE, _PER_HEAD or _AVERAGED, got " +
          std::to_string(mode));
  }
}

// A caller's C string, read no further than max_length bytes: one without a NUL by then is an
// error rather than a read past its buffer. NULL is "".
std::string BoundedString(const char* s, const char* name, std::size_t max_length) {
  if (s == nullptr) return "";
  const std::size_t length = strnlen(s, max_length + 1);
  if (length > max_length) {
    throw edgeattn::Error(std::string(name) + ": expected a NUL-terminated string of at most " +
                          std::to_string(max_length) + " bytes, got a longer one");
  }
  return std::string(s, length);
}

edgeattn::RotaryLayout ToRotaryLayout(int layout) {
  switch (layout) {
    case EDGEATTN_ROTARY_NONE:
      return edgeattn::RotaryLayout::kNone;
    case EDGEATTN_ROTARY_HALVES:
      return edgeattn::RotaryLayout::kHalves;
    case EDGEATTN_ROTARY_INTERLEAVED:
      return edgeattn::RotaryLayout::kInterleaved;
    default:
      throw edgeattn::Error(
          "math.rotary: expected EDGEATTN_ROTARY_NONE, _HALVES or _INTERLEAVED, got " +
          std::to_string(layout));
  }
}

// Zeros take the C++ defaults, as the header says.
edgeattn::AttentionMath ToMath(const edgeattn_attention_math& m) {
  edgeattn::AttentionMath r;
  r.score_scale = m.score_scale;
  r.softcap = m.softcap;
  r.window = m.window;
  r.qk_norm = m.qk_norm != 0;
  if (m.qk_norm_eps != 0.0f) r.qk_norm_eps = m.qk_norm_eps;
  r.rotary = ToRotaryLayout(m.rotary);
  r.rotary_dim = m.rotary_dim;
  if (m.rotary_base != 0.0f) r.rotary_base = m.rotary_base;
  if (m.rotary_scaling != 0.0f) r.rotary_scaling = m.rotary_scaling;
  return r;
}

// Names of kernels are short; prefixes are tensor-name prefixes.
constexpr std::size_t kMaxKernelName = 64;
constexpr std::size_t kMaxPrefix = 4096;

edgeattn::LoadOptions ToLoadOptions(const edgeattn_load_options* o) {
  edgeattn::LoadOptions r;
  if (o == nullptr) return r;
  r.num_heads = o->num_heads;
  r.precision = ToPrecision(o->precision);
  if (o->int8_block != 0) r.int8_block = o->int8_block;
  r.prefix = BoundedString(o->prefix, "prefix", kMaxPrefix);
  r.strict = o->non_strict == 0;
  r.no_bias = o->no_bias != 0;
  r.projection_kernel = BoundedString(o->projection_kernel, "projection_kernel", kMaxKernelName);
  r.attention_kernel = BoundedString(o->attention_kernel, "attention_kernel", kMaxKernelName);
  r.math = ToMath(o->math);
  r.kv_format = ToKvFormat(o->kv_format, "kv_format");
  return r;
}

// Lengths arrays carry no size in C: they hold one value per batch item.
edgeattn::ForwardOptions ToOptions(const edgeattn_forward_options* o, std::size_t batch) {
  edgeattn::ForwardOptions r;
  if (o == nullptr) return r;
  r.is_causal = o->is_causal != 0;
  r.key_padding_mask = {o->key_padding_mask, o->key_padding_mask_size};
  r.attn_mask = {o->attn_mask, o->attn_mask_size};
  if (o->query_lengths != nullptr) r.query_lengths = {o->query_lengths, batch};
  if (o->key_lengths != nullptr) r.key_lengths = {o->key_lengths, batch};
  r.need_weights = ToWeightsMode(o->need_weights);
  r.attn_weights = {o->attn_weights, o->attn_weights_size};
  r.positions = {o->positions, o->positions_size};
  r.key_positions = {o->key_positions, o->key_positions_size};
  return r;
}

}  // namespace

extern "C" {

const char* edgeattn_version(void) { return edgeattn::Version(); }

const char* edgeattn_last_error(void) { return last_error.c_str(); }

edgeattn_status edgeattn_operator_create(const edgeattn_config* config,
                                         const edgeattn_weights* weights,
                                         edgeattn_operator** out) {
  return Guard([&] {
    RequireNonNull(out, "out");
    *out = nullptr;
    RequireNonNull(config, "config");
    RequireNonNull(weights, "weights");
    const edgeattn::Config c{config->d_model, config->num_heads, ToPrecision(config->precision),
                             config->int8_block == 0 ? edgeattn::kDefaultInt8Block
                                                     : config->int8_block,
                             config->num_kv_heads,
                             BoundedString(config->projection_kernel, "projection_kernel",
                                           kMaxKernelName),
                             BoundedString(config->attention_kernel, "attention_kernel",
                                           kMaxKernelName),
                             ToMath(config->math),
                             ToKvFormat(config->kv_format, "config.kv_format")};
    const edgeattn::WeightsView w{{weights->in_proj_weight, weights->in_proj_weight_size},
                                  {weights->in_proj_bias, weights->in_proj_bias_size},
                                  {weights->out_proj_weight, weights->out_proj_weight_size},
                                  {weights->out_proj_bias, weights->out_proj_bias_size},
                                  {weights->q_proj_weight, weights->q_proj_weight_size},
                                  {weights->k_proj_weight, weights->k_proj_weight_size},
                                  {weights->v_proj_weight, weights->v_proj_weight_size},
                                  {weights->q_proj_bias, weights->q_proj_bias_size},
                                  {weights->k_proj_bias, weights->k_proj_bias_size},
                                  {weights->v_proj_bias, weights->v_proj_bias_size},
                                  {weights->sinks, weights->sinks_size},
                                  {weights->q_norm_weight, weights->q_norm_weight_size},
                                  {weights->k_norm_weight, weights->k_norm_weight_size}};
    *out = new edgeattn_operator{edgeattn::MultiheadAttention(c, w)};
  });
}

edgeattn_status edgeattn_operator_load(const char* path, size_t num_heads, int precision,
                                       edgeattn_operator** out) {
  return Guard([&] {
    RequireNonNull(out, "out");
    *out = nullptr;
    RequireNonNull(path, "path");
    *out = new edgeattn_operator{
        edgeattn::MultiheadAttention::Load(path, num_heads, ToPrecision(precision))};
  });
}

edgeattn_status edgeattn_operator_load_ex(const char* path, const edgeattn_load_options* options,
                                          edgeattn_operator** out) {
  return Guard([&] {
    RequireNonNull(out, "out");
    *out = nullptr;
    RequireNonNull(path, "path");
    *out = new edgeattn_operator{
        edgeattn::MultiheadAttention::Load(path, ToLoadOptions(options))};
  });
}

edgeattn_status edgeattn_operator_load_memory(const void* data, size_t size,
                                              const edgeattn_load_options* options,
                                              edgeattn_operator** out) {
  return Guard([&] {
    RequireNonNull(out, "out");
    *out = nullptr;
    RequireNonNull(data, "data");
    *out = new edgeattn_operator{
        edgeattn::MultiheadAttention::LoadFromMemory(data, size, ToLoadOptions(options))};
  });
}

void edgeattn_operator_destroy(edgeattn_operator* op) { delete op; }

size_t edgeattn_operator_d_model(const edgeattn_operator* op) {
  return op != nullptr ? op->mha.config().d_model : 0;
}

const char* edgeattn_operator_projection_kernel(const edgeattn_operator* op) {
  return op != nullptr ? op->mha.projection_kernel() : "";
}

const char* edgeattn_operator_attention_kernel(const edgeattn_operator* op) {
  return op != nullptr ? op->mha.attention_kernel() : "";
}

size_t edgeattn_operator_weight_bytes(const edgeattn_operator* op) {
  return op != nullptr ? op->mha.weight_bytes() : 0;
}

edgeattn_status edgeattn_context_create(size_t threads, edgeattn_context** out) {
  return Guard([&] {
    RequireNonNull(out, "out");
    *out = nullptr;
    *out = new edgeattn_context(threads);
  });
}

void edgeattn_context_destroy(edgeattn_context* context) { delete context; }

edgeattn_status edgeattn_context_create_with_pool(const edgeattn_thread_pool* pool,
                                                  edgeattn_context** out) {
  return Guard([&] {
    RequireNonNull(out, "out");
    *out = nullptr;
    RequireNonNull(pool, "pool");
    *out = new edgeattn_context(edgeattn::MakeCallerPoolExecutor(*pool));
  });
}

size_t edgeattn_context_threads(const edgeattn_context* context) {
  return context != nullptr ? context->context.threads() : 0;
}

const char* edgeattn_context_pool_kind(const edgeattn_context* context) {
  return context != nullptr ? context->context.executor().kind() : "";
}

edgeattn_status edgeattn_forward(const edgeattn_operator* op, edgeattn_context* context,
                                 const float* query, size_t batch, size_t query_length,
                                 const float* key, const float* value, size_t key_length,
                                 float* out) {
  return edgeattn_forward_ex(op, context, query, batch, query_length, key, value, key_length,
                             out, nullptr);
}

edgeattn_status edgeattn_forward_ex(const edgeattn_operator* op, edgeattn_context* context,
                                    const float* query, size_t batch, size_t query_length,
                                    const float* key, const float* value, size_t key_length,
                                    float* out, const edgeattn_forward_options* options) {
  return Guard([&] {
    RequireNonNull(op, "op");
    RequireNonNull(context, "context");
    if ((key == nullptr) != (value == nullptr)) {
      throw edgeattn::Error("key and value: expected both or neither, got only " +
                            std::string(key == nullptr ? "value" : "key"));
    }
    const std::size_t d = op->mha.config().d_model;
    const edgeattn::ConstTensor q{query, batch, query_length, d};
    const edgeattn::Tensor y{out, batch, query_length, d};
    const edgeattn::ForwardOptions o = ToOptions(options, batch);
    if (key == nullptr) {
      op->mha.Forward(context->context, q, y, o);
    } else {
      op->mha.Forward(context->context, q, {key, batch, key_length, d},
                      {value, batch, key_length, d}, y, o);
    }
  });
}

edgeattn_status edgeattn_kv_cache_create(const edgeattn_operator* op, size_t max_length,
                                         size_t batch, edgeattn_kv_cache** out) {
  return Guard([&] {
    RequireNonNull(out, "out");
    *out = nullptr;
    RequireNonNull(op, "op");
    *out = new edgeattn_kv_cache{edgeattn::KvCache(op->mha, max_length, batch)};
  });
}

edgeattn_status edgeattn_kv_cache_create_format(const edgeattn_operator* op, size_t max_length,
                                                size_t batch, int format,
                                                const char* attention_kernel,
                                                edgeattn_kv_cache** out) {
  return Guard([&] {
    RequireNonNull(out, "out");
    *out = nullptr;
    RequireNonNull(op, "op");
    edgeattn::KvCacheOptions options;
    options.format = ToKvFormat(format, "format");
    options.attention_kernel = BoundedString(attention_kernel, "attention_kernel", kMaxKernelName);
    *out = new edgeattn_kv_cache{edgeattn::KvCache(op->mha, max_length, batch, options)};
  });
}

void edgeattn_kv_cache_destroy(edgeattn_kv_cache* cache) { delete cache; }

int edgeattn_kv_cache_format(const edgeattn_kv_cache* cache) {
  if (cache == nullptr) return -1;
  switch (cache->cache.format()) {
    case edgeattn::KvFormat::kFp32:
      return EDGEATTN_KV_FP32;
    case edgeattn::KvFormat::kBf16:
      return EDGEATTN_KV_BF16;
    case edgeattn::KvFormat::kFp16:
      return EDGEATTN_KV_FP16;
    case edgeattn::KvFormat::kInt8:
      return EDGEATTN_KV_INT8;
    case edgeattn::KvFormat::kAuto:  // resolved when the cache was made: never its format
      return EDGEATTN_KV_AUTO;
  }
  return -1;  // no other KvFormat exists
}

const char* edgeattn_kv_cache_attention_kernel(const edgeattn_kv_cache* cache) {
  return cache != nullptr ? cache->cache.attention_kernel() : "";
}

size_t edgeattn_kv_cache_bytes_per_position(const edgeattn_kv_cache* cache) {
  return cache != nullptr ? cache->cache.bytes_per_position() : 0;
}

size_t edgeattn_kv_cache_length(const edgeattn_kv_cache* cache) {
  return cache != nullptr ? cache->cache.length() : 0;
}

size_t edgeattn_kv_cache_bytes(const edgeattn_kv_cache* cache) {
  return cache != nullptr ? cache->cache.bytes() : 0;
}

size_t edgeattn_kv_cache_slots(const edgeattn_kv_cache* cache) {
  return cache != nullptr ? cache->cache.slots() : 0;
}

edgeattn_status edgeattn_kv_cache_truncate(edgeattn_kv_cache* cache, size_t length) {
  return Guard([&] {
    RequireNonNull(cache, "cache");
    cache->cache.Truncate(length);
  });
}

edgeattn_status edgeattn_decode(const edgeattn_operator* op, edgeattn_context* context,
                                edgeattn_kv_cache* cache, const float* x, size_t batch,
                                size_t n, float* out) {
  return Guard([&] {
    RequireNonNull(op, "op");
    RequireNonNull(context, "context");
    RequireNonNull(cache, "cache");
    const std::size_t d = op->mha.config().d_model;
    op->mha.Decode(context->context, {x, batch, n, d}, cache->cache, {out, batch, n, d});
  });
}

edgeattn_status edgeattn_kv_cache_item_length(const edgeattn_kv_cache* cache, size_t item,
                                              size_t* length) {
  return Guard([&] {
    RequireNonNull(length, "length");
    RequireNonNull(cache, "cache");
    *length = cache->cache.length(item);
  });
}

edgeattn_status edgeattn_kv_cache_truncate_items(edgeattn_kv_cache* cache, const size_t* lengths,
                                                 size_t count) {
  return Guard([&] {
    RequireNonNull(cache, "cache");
    cache->cache.Truncate(edgeattn::Span<const std::size_t>{lengths, count});
  });
}

edgeattn_status edgeattn_kv_cache_reorder(edgeattn_kv_cache* cache, const size_t* indices,
                                          size_t count) {
  return Guard([&] {
    RequireNonNull(cache, "cache");
    cache->cache.Reorder({indices, count});
  });
}

edgeattn_status edgeattn_decode_ragged(const edgeattn_operator* op, edgeattn_context* context,
                                       edgeattn_kv_cache* cache, const float* x, size_t batch,
                                       size_t n, const size_t* step_lengths, float* out) {
  return Guard([&] {
    RequireNonNull(op, "op");
    RequireNonNull(context, "context");
    RequireNonNull(cache, "cache");
    RequireNonNull(step_lengths, "step_lengths");
    const std::size_t d = op->mha.config().d_model;
    op->mha.Decode(context->context, {x, batch, n, d}, cache->cache, {out, batch, n, d},
                   {step_lengths, batch});
  });
}

edgeattn_status edgeattn_cross_memory_create(const edgeattn_operator* op, size_t max_length,
                                             size_t batch, edgeattn_cross_memory** out) {
  return Guard([&] {
    RequireNonNull(out, "out");
    *out = nullptr;
    RequireNonNull(op, "op");
    *out = new edgeattn_cross_memory{edgeattn::CrossAttentionMemory(op->mha, max_length, batch)};
  });
}

void edgeattn_cross_memory_destroy(edgeattn_cross_memory* memory) { delete memory; }

size_t edgeattn_cross_memory_length(const edgeattn_cross_memory* memory) {
  return memory != nullptr ? memory->memory.length() : 0;
}

edgeattn_status edgeattn_cross_memory_project(const edgeattn_operator* op,
                                              edgeattn_context* context,
                                              const float* encoder_output, size_t batch,
                                              size_t length, const size_t* key_lengths,
                                              edgeattn_cross_memory* memory) {
  return Guard([&] {
    RequireNonNull(op, "op");
    RequireNonNull(context, "context");
    RequireNonNull(memory, "memory");
    const std::size_t d = op->mha.config().d_model;
    const edgeattn::Span<const std::size_t> lengths{key_lengths, key_lengths ? batch : 0};
    op->mha.ProjectMemory(context->context, {encoder_output, batch, length, d}, memory->memory,
                          lengths);
  });
}

edgeattn_status edgeattn_decode_cross(const edgeattn_operator* op, edgeattn_context* context,
                                      const edgeattn_cross_memory* memory, const float* query,
                                      size_t batch, size_t n, const size_t* memory_items,
                                      float* out) {
  return Guard([&] {
    RequireNonNull(op, "op");
    RequireNonNull(context, "context");
    RequireNonNull(memory, "memory");
    const std::size_t d = op->mha.config().d_model;
    const edgeattn::Span<const std::size_t> items{memory_items, memory_items ? batch : 0};
    op->mha.DecodeCross(context->context, {query, batch, n, d}, memory->memory,
                        {out, batch, n, d}, items);
  });
}

}  // extern "C"
