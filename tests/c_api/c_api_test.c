/* The C API from a C99 program: a hand-checked forward pass, then every failure path. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "edgeattn/edgeattn.h"

static int failures = 0;
static int passes = 0;

static void check(int ok, const char* what) {
  if (ok) {
    ++passes;
  } else {
    ++failures;
    printf("FAILED: %s (last error: '%s')\n", what, edgeattn_last_error());
  }
}

/* Expects `status` to be an invalid-argument failure whose message contains `fragment`. */
static void check_error(edgeattn_status status, const char* fragment, const char* what) {
  check(status == EDGEATTN_ERROR_INVALID_ARGUMENT && strstr(edgeattn_last_error(), fragment),
        what);
}

/* A safetensors file in memory: the layer of `op` below (identity projections, out bias
 * (0.5, -0.5), a zero in_proj_bias) under `prefix` ("layers.0.self_attn." as a model's
 * state_dict names it, or "" for the top level). Returns the size. */
static size_t layer_file(unsigned char* buf, const char* prefix, const float* eye3,
                         const float* eye, const float* out_bias) {
  char header[512];
  const float zeros[6] = {0, 0, 0, 0, 0, 0};
  size_t n = (size_t)snprintf(
      header, sizeof header,
      "{\"%sin_proj_bias\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]},"
      "\"%sin_proj_weight\":{\"dtype\":\"F32\",\"shape\":[6,2],\"data_offsets\":[24,72]},"
      "\"%sout_proj.bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[72,80]},"
      "\"%sout_proj.weight\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[80,96]}}",
      prefix, prefix, prefix, prefix);
  const size_t padded = (n + 7) / 8 * 8;
  size_t i;
  for (i = 0; i < 8; ++i) buf[i] = (unsigned char)((padded >> (8 * i)) & 0xFF);
  memcpy(buf + 8, header, n);
  memset(buf + 8 + n, ' ', padded - n);
  n = 8 + padded;
  memcpy(buf + n, zeros, 24);
  memcpy(buf + n + 24, eye3, 48);
  memcpy(buf + n + 72, out_bias, 8);
  memcpy(buf + n + 80, eye, 16);
  return n + 96;
}

int main(void) {
  /* d_model 2, one head, identity projections, out bias (0.5, -0.5): for x = I, row 0 of the
   * output is (a + 0.5, 0.5 - a) with a = 1 / (1 + exp(-1 / sqrt(2))) (see reference_test). */
  const float eye3[12] = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1};
  const float eye[4] = {1, 0, 0, 1};
  const float out_bias[2] = {0.5f, -0.5f};
  const float x[4] = {1, 0, 0, 1};
  float y[4] = {0, 0, 0, 0};
  const double a = 1.0 / (1.0 + exp(-1.0 / sqrt(2.0)));
  edgeattn_config config = {2, 1, EDGEATTN_FP32, 0};
  edgeattn_weights weights = {eye3, 12, NULL, 0, eye, 4, out_bias, 2};
  edgeattn_operator* op = NULL;
  edgeattn_context* context = NULL;

  {
    /* The library's version is the headers' and agrees with the numeric macros. */
    char numbers[64];
    snprintf(numbers, sizeof(numbers), "%d.%d.%d", EDGEATTN_VERSION_MAJOR, EDGEATTN_VERSION_MINOR,
             EDGEATTN_VERSION_PATCH);
    check(strcmp(edgeattn_version(), EDGEATTN_VERSION_STRING) == 0, "version: library = headers");
    check(strcmp(EDGEATTN_VERSION_STRING, numbers) == 0, "version: string = numbers");
  }
  check(edgeattn_operator_create(&config, &weights, &op) == EDGEATTN_OK, "create");
  check(edgeattn_context_create(2, &context) == EDGEATTN_OK, "context");
  check(edgeattn_operator_d_model(op) == 2, "d_model");
  check(edgeattn_forward(op, context, x, 1, 2, NULL, NULL, 0, y) == EDGEATTN_OK, "forward");
  check(fabs(y[0] - (a + 0.5)) < 1e-6 && fabs(y[1] - (0.5 - a)) < 1e-6, "self-attention values");
  check(edgeattn_forward(op, context, x, 1, 2, x, x, 2, y) == EDGEATTN_OK, "cross-attention");
  check(fabs(y[0] - (a + 0.5)) < 1e-6, "cross-attention values");
  check(strcmp(edgeattn_last_error(), "") == 0, "no error after success");

  /* Options: causal row 0 sees key 0 only, so its head output is v0 = (1, 0) and y0 = (1.5,
   * -0.5); masking key 1 for both rows gives that for both. */
  {
    edgeattn_forward_options options;
    memset(&options, 0, sizeof options);
    options.is_causal = 1;
    check(edgeattn_forward_ex(op, context, x, 1, 2, NULL, NULL, 0, y, &options) == EDGEATTN_OK,
          "causal forward");
    check(fabs(y[0] - 1.5) < 1e-6 && fabs(y[1] + 0.5) < 1e-6, "causal row 0");
    check(fabs(y[2] - (0.5 + 1 - a)) < 1e-6, "causal row 1 sees both keys");
    const bool padding[2] = {false, true};
    float weights[4] = {0, 0, 0, 0};
    options.is_causal = 0;
    options.key_padding_mask = padding;
    options.key_padding_mask_size = 2;
    options.need_weights = EDGEATTN_WEIGHTS_AVERAGED;
    options.attn_weights = weights;
    options.attn_weights_size = 4;
    check(edgeattn_forward_ex(op, context, x, 1, 2, NULL, NULL, 0, y, &options) == EDGEATTN_OK,
          "key padding forward");
    check(fabs(y[2] - 1.5) < 1e-6 && weights[0] == 1.0f && weights[3] == 0.0f,
          "key padding values and weights");
    options.key_padding_mask_size = 3;
    check_error(edgeattn_forward_ex(op, context, x, 1, 2, NULL, NULL, 0, y, &options),
                "key_padding_mask", "short key padding mask");
    options.key_padding_mask_size = 2;
    options.need_weights = 7;
    check_error(edgeattn_forward_ex(op, context, x, 1, 2, NULL, NULL, 0, y, &options),
                "need_weights", "bad weights mode");
  }

  /* Decoding the two positions one by one gives the causal forward's rows. */
  {
    edgeattn_kv_cache* cache = NULL;
    float step[2];
    check(edgeattn_kv_cache_create(op, 2, 1, &cache) == EDGEATTN_OK, "cache");
    check(edgeattn_decode(op, context, cache, x, 1, 1, step) == EDGEATTN_OK, "decode 0");
    check(fabs(step[0] - 1.5) < 1e-6 && fabs(step[1] + 0.5) < 1e-6, "decode 0 values");
    check(edgeattn_decode(op, context, cache, x + 2, 1, 1, step) == EDGEATTN_OK, "decode 1");
    check(fabs(step[0] - (0.5 + 1 - a)) < 1e-6, "decode 1 values");
    check(edgeattn_kv_cache_length(cache) == 2, "cache length");
    check_error(edgeattn_decode(op, context, cache, x, 1, 1, step), "x.length", "cache full");
    check(edgeattn_kv_cache_truncate(cache, 1) == EDGEATTN_OK, "truncate");
    check_error(edgeattn_kv_cache_truncate(cache, 2), "length", "truncate past the end");
    check_error(edgeattn_decode(op, context, NULL, x, 1, 1, step), "cache", "null cache");
    edgeattn_kv_cache_destroy(cache);
    check_error(edgeattn_kv_cache_create(op, 0, 1, &cache), "max_length", "empty cache");
    check(cache == NULL, "no cache on failure");
    edgeattn_kv_cache_destroy(NULL);
  }

  /* A ragged batch of two sequences, reordered as beam search does: sequence 1 appends nothing
   * in the first step, then both take sequence 0's history; out rows past a step length are
   * zeros. Sequence 0's first row is the causal row 0 above, (1.5, -0.5). */
  {
    edgeattn_kv_cache* cache = NULL;
    const float xs[4] = {1, 0, 7, 7}, second[4] = {0, 1, 0, 1};
    const size_t first_step[2] = {1, 0}, both[2] = {1, 1}, from_zero[2] = {0, 0};
    const size_t out_of_range[2] = {0, 2}, too_long[2] = {3, 0};
    float out[4] = {9, 9, 9, 9};
    size_t length = 99;
    check(edgeattn_kv_cache_create(op, 3, 2, &cache) == EDGEATTN_OK, "ragged cache");
    check(edgeattn_decode_ragged(op, context, cache, xs, 2, 1, first_step, out) == EDGEATTN_OK,
          "ragged decode");
    check(fabs(out[0] - 1.5) < 1e-6 && fabs(out[1] + 0.5) < 1e-6, "ragged row of sequence 0");
    check(out[2] == 0.0f && out[3] == 0.0f, "ragged padding row is zeros");
    check(edgeattn_kv_cache_item_length(cache, 1, &length) == EDGEATTN_OK && length == 0,
          "sequence 1 appended nothing");
    check(edgeattn_kv_cache_reorder(cache, from_zero, 2) == EDGEATTN_OK, "reorder");
    check(edgeattn_kv_cache_item_length(cache, 1, &length) == EDGEATTN_OK && length == 1,
          "sequence 1 took sequence 0's length");
    check(edgeattn_decode_ragged(op, context, cache, second, 2, 1, both, out) == EDGEATTN_OK,
          "decode after reorder");
    check(fabs(out[0] - (0.5 + 1 - a)) < 1e-6 && out[2] == out[0] && out[3] == out[1],
          "both beams continue sequence 0 (causal row 1)");
    check_error(edgeattn_kv_cache_reorder(cache, out_of_range, 2), "indices[1]",
                "reorder index out of range");
    check_error(edgeattn_kv_cache_reorder(cache, from_zero, 1), "indices: expected 2 values",
                "reorder count");
    check_error(edgeattn_kv_cache_truncate_items(cache, too_long, 2), "lengths[0]",
                "truncate a sequence past its length");
    check(edgeattn_kv_cache_truncate_items(cache, first_step, 2) == EDGEATTN_OK,
          "truncate per sequence");
    check(edgeattn_kv_cache_length(cache) == 1, "longest after truncate");
    check_error(edgeattn_kv_cache_item_length(cache, 2, &length), "item", "item out of range");
    check_error(edgeattn_decode_ragged(op, context, cache, xs, 2, 1, too_long, out),
                "step_lengths[0]", "step longer than x");
    check_error(edgeattn_decode_ragged(op, context, cache, xs, 2, 1, NULL, out), "step_lengths",
                "null step lengths");
    edgeattn_kv_cache_destroy(cache);
  }

  /* A cross-attention memory of x gives the cross-attention forward's values, for a beam of
   * two query items that read its one item. */
  {
    edgeattn_cross_memory* memory = NULL;
    edgeattn_operator* other = NULL;
    const float beams[8] = {1, 0, 0, 1, 1, 0, 0, 1};
    const size_t items[2] = {0, 0}, bad_items[2] = {0, 1};
    float out[8];
    check(edgeattn_cross_memory_create(op, 4, 1, &memory) == EDGEATTN_OK, "memory");
    check(edgeattn_cross_memory_length(memory) == 0, "empty memory");
    check_error(edgeattn_decode_cross(op, context, memory, beams, 2, 2, items, out),
                "ProjectMemory first", "memory not projected");
    check(edgeattn_cross_memory_project(op, context, x, 1, 2, NULL, memory) == EDGEATTN_OK,
          "project memory");
    check(edgeattn_cross_memory_length(memory) == 2, "memory length");
    check(edgeattn_decode_cross(op, context, memory, beams, 2, 2, items, out) == EDGEATTN_OK,
          "decode cross");
    check(fabs(out[0] - (a + 0.5)) < 1e-6 && fabs(out[1] - (0.5 - a)) < 1e-6 && out[4] == out[0],
          "decode cross values");
    check(edgeattn_decode_cross(op, context, memory, beams, 2, 2, NULL, out) == EDGEATTN_OK,
          "one-item memory serves every query item");
    check_error(edgeattn_decode_cross(op, context, memory, beams, 2, 2, bad_items, out),
                "memory_items[1]", "memory item out of range");
    check_error(edgeattn_cross_memory_project(op, context, x, 1, 5, NULL, memory),
                "encoder_output.length", "encoder output too long");
    check(edgeattn_operator_create(&config, &weights, &other) == EDGEATTN_OK, "other operator");
    check_error(edgeattn_decode_cross(other, context, memory, beams, 2, 2, items, out),
                "made for another operator", "another operator's memory");
    check_error(edgeattn_decode_cross(op, context, NULL, beams, 2, 2, items, out), "memory",
                "null memory");
    edgeattn_cross_memory_destroy(memory);
    check_error(edgeattn_cross_memory_create(op, 0, 1, &memory), "max_length", "empty memory");
    check(memory == NULL, "failed memory create leaves out NULL");
    edgeattn_operator_destroy(other);
    edgeattn_cross_memory_destroy(NULL);
  }

  /* Grouped-query weights: two query heads share one key/value head (kv_dim 1). */
  {
    edgeattn_config gqa = {2, 2, EDGEATTN_FP32, 0, 1};
    const float kv_rows[2] = {1, 0};
    edgeattn_weights separate;
    edgeattn_operator* gop = NULL;
    memset(&separate, 0, sizeof separate);
    separate.q_proj_weight = eye;
    separate.q_proj_weight_size = 4;
    separate.k_proj_weight = kv_rows;
    separate.k_proj_weight_size = 2;
    separate.v_proj_weight = kv_rows;
    separate.v_proj_weight_size = 2;
    separate.out_proj_weight = eye;
    separate.out_proj_weight_size = 4;
    check(edgeattn_operator_create(&gqa, &separate, &gop) == EDGEATTN_OK, "GQA operator");
    check(edgeattn_forward(gop, context, x, 1, 2, NULL, NULL, 0, y) == EDGEATTN_OK, "GQA forward");
    edgeattn_operator_destroy(gop);
    separate.k_proj_weight_size = 4;
    check_error(edgeattn_operator_create(&gqa, &separate, &gop), "k_proj_weight",
                "GQA key rows");
  }

  check_error(edgeattn_forward(op, context, x, 1, 0, NULL, NULL, 0, y), "query.length",
              "zero length");
  check_error(edgeattn_forward(op, context, NULL, 1, 2, NULL, NULL, 0, y), "query.data",
              "null query");
  check_error(edgeattn_forward(op, context, x, 1, 2, x, NULL, 2, y), "got only key",
              "key without value");
  /* The other way round too, naming the one given: not taken as self-attention. */
  check_error(edgeattn_forward(op, context, x, 1, 2, NULL, x, 2, y), "got only value",
              "value without key");
  check_error(edgeattn_forward(NULL, context, x, 1, 2, NULL, NULL, 0, y), "op", "null operator");
  check_error(edgeattn_forward(op, NULL, x, 1, 2, NULL, NULL, 0, y), "context", "null context");
  check_error(edgeattn_forward(op, context, x, 1, 2, NULL, NULL, 0, NULL), "out.data", "null out");

  /* The same layer loaded from a model file in memory, then from disk; the buffer is not read
   * after the load returns. */
  {
    unsigned char buf[1024];
    const size_t size = layer_file(buf, "layers.0.self_attn.", eye3, eye, out_bias);
    edgeattn_load_options options;
    edgeattn_operator* loaded = NULL;
    float z[4] = {0, 0, 0, 0};
    FILE* f;
    memset(&options, 0, sizeof options);
    options.num_heads = 1;
    options.prefix = "layers.0.self_attn";
    check(edgeattn_operator_load_memory(buf, size, &options, &loaded) == EDGEATTN_OK,
          "load from memory");
    memset(buf, 0, sizeof buf);
    check(edgeattn_forward(loaded, context, x, 1, 2, NULL, NULL, 0, z) == EDGEATTN_OK,
          "forward after the buffer is gone");
    check(fabs(z[0] - (a + 0.5)) < 1e-6 && fabs(z[1] - (0.5 - a)) < 1e-6, "memory load values");
    edgeattn_operator_destroy(loaded);
    layer_file(buf, "layers.0.self_attn.", eye3, eye, out_bias);
    f = fopen("c_api_layer.safetensors", "wb");
    check(f != NULL && fwrite(buf, 1, size, f) == size, "write layer file");
    if (f != NULL) fclose(f);
    loaded = NULL;
    check(edgeattn_operator_load_ex("c_api_layer.safetensors", &options, &loaded) == EDGEATTN_OK,
          "load_ex from a file");
    check(edgeattn_operator_d_model(loaded) == 2, "load_ex d_model");
    edgeattn_operator_destroy(loaded);
    remove("c_api_layer.safetensors");
    loaded = NULL;
    options.num_heads = 0;
    check_error(edgeattn_operator_load_memory(buf, size, &options, &loaded), "num_heads",
                "float weights need num_heads");
    options.num_heads = 1;
    check_error(edgeattn_operator_load_memory(buf, size, NULL, &loaded), "top level",
                "defaults: the top level");
    check(loaded == NULL, "no operator on a failed load");
    options.prefix = "layers.1.";
    check_error(edgeattn_operator_load_memory(buf, size, &options, &loaded),
                "'layers.0.self_attn.' (torch)", "a wrong prefix lists the layers");
    options.prefix = "layers.0.self_attn.";
    options.no_bias = 1;
    check_error(edgeattn_operator_load_memory(buf, size, &options, &loaded), "no_bias",
                "no_bias with biases in the file, strict");
    options.non_strict = 1;
    check(edgeattn_operator_load_memory(buf, size, &options, &loaded) == EDGEATTN_OK,
          "no_bias, non-strict: biases dropped");
    edgeattn_operator_destroy(loaded);
    check_error(edgeattn_operator_load_memory(buf, size - 1, &options, &loaded), "memory buffer",
                "truncated buffer");
    check_error(edgeattn_operator_load_memory(NULL, size, &options, &loaded), "data",
                "null buffer");
    check_error(edgeattn_operator_load_ex(NULL, &options, &loaded), "path", "null path (ex)");
  }

  edgeattn_operator* bad = NULL;
  config.num_heads = 3;
  check_error(edgeattn_operator_create(&config, &weights, &bad), "num_heads", "3 heads for d 2");
  check(bad == NULL, "no operator on failure");
  config.num_heads = 1;
  weights.in_proj_weight_size = 11;
  check_error(edgeattn_operator_create(&config, &weights, &bad), "in_proj_weight", "short weights");
  weights.in_proj_weight_size = 12;
  config.precision = 7;
  check_error(edgeattn_operator_create(&config, &weights, &bad), "precision", "bad precision");
  config.precision = EDGEATTN_INT8;
  config.int8_block = 6;
  check_error(edgeattn_operator_create(&config, &weights, &bad), "int8_block", "bad block");
  check_error(edgeattn_operator_create(NULL, &weights, &bad), "config", "null config");
  check_error(edgeattn_operator_create(&config, NULL, &bad), "weights", "null weights");
  check_error(edgeattn_operator_create(&config, &weights, NULL), "out", "null out");
  check_error(edgeattn_operator_load("/nonexistent/m.safetensors", 1, EDGEATTN_FP32, &bad),
              "/nonexistent/m.safetensors", "missing file");
  check_error(edgeattn_operator_load(NULL, 1, EDGEATTN_FP32, &bad), "path", "null path");
  check_error(edgeattn_context_create(1, NULL), "out", "null context out");
  {
    /* Kernels by name: the one chosen is named, an unknown name lists the available ones, and a
     * name without a NUL within 64 bytes is refused without reading past them. */
    edgeattn_config named = config;
    edgeattn_operator* forced = NULL;
    char unterminated[80];
    named.precision = EDGEATTN_FP32;
    named.int8_block = 0;
    check(edgeattn_operator_create(&named, &weights, &forced) == EDGEATTN_OK, "best kernel");
    check(strncmp(edgeattn_operator_projection_kernel(forced), "f32_", 4) == 0, "kernel name");
    check(edgeattn_operator_weight_bytes(forced) > 0, "weight bytes");
    check(edgeattn_operator_weight_bytes(NULL) == 0, "weight bytes of NULL");
    {
      edgeattn_operator* half = NULL;
      named.precision = EDGEATTN_BF16;
      check(edgeattn_operator_create(&named, &weights, &half) == EDGEATTN_OK, "bf16 weights");
      check(strncmp(edgeattn_operator_projection_kernel(half), "f32_bf16w_", 10) == 0,
            "bf16 kernel name");
      check(edgeattn_operator_weight_bytes(half) < edgeattn_operator_weight_bytes(forced),
            "bf16 weights take fewer bytes");
      edgeattn_operator_destroy(half);
      named.precision = EDGEATTN_FP32;
    }
    named.projection_kernel = edgeattn_operator_projection_kernel(forced);
    edgeattn_operator_destroy(forced);
    forced = NULL;
    check(edgeattn_operator_create(&named, &weights, &forced) == EDGEATTN_OK, "forced kernel");
    check(strncmp(edgeattn_operator_attention_kernel(forced), "f32kv_", 6) == 0,
          "attention kernel name");
    edgeattn_operator_destroy(forced);
    named.attention_kernel = "no_such_kernel";
    check_error(edgeattn_operator_create(&named, &weights, &bad), "attention kernels",
                "unknown attention kernel");
    named.attention_kernel = NULL;
    named.projection_kernel = "no_such_kernel";
    check_error(edgeattn_operator_create(&named, &weights, &bad), "kernels this CPU runs",
                "unknown kernel");
    memset(unterminated, 'x', sizeof(unterminated));
    named.projection_kernel = unterminated;
    check_error(edgeattn_operator_create(&named, &weights, &bad), "NUL-terminated",
                "unterminated kernel name");
    {
      /* A cache's kernel name is read as boundedly as the operator's. */
      const edgeattn_config plain_config = {2, 1, EDGEATTN_FP32, 0};
      edgeattn_operator* plain_op = NULL;
      edgeattn_kv_cache* named_cache = NULL;
      check(edgeattn_operator_create(&plain_config, &weights, &plain_op) == EDGEATTN_OK,
            "operator");
      check_error(edgeattn_kv_cache_create_format(plain_op, 4, 1, EDGEATTN_KV_FP32, unterminated,
                                                  &named_cache),
                  "NUL-terminated", "unterminated cache kernel name");
      check(named_cache == NULL, "no cache on error");
      {
        /* A cache names the format it stores (AUTO resolved) and the kernel its steps run,
         * whose name starts with that format's. */
        static const char* const kFormatPrefix[] = {"f32kv_", "bf16kv_", "f16kv_", "i8kv_"};
        const int asked[] = {EDGEATTN_KV_FP32, EDGEATTN_KV_BF16, EDGEATTN_KV_FP16, EDGEATTN_KV_INT8,
                             EDGEATTN_KV_AUTO};
        size_t i;
        for (i = 0; i < sizeof(asked) / sizeof(asked[0]); ++i) {
          int format;
          check(edgeattn_kv_cache_create_format(plain_op, 4, 1, asked[i], NULL, &named_cache) ==
                    EDGEATTN_OK,
                "cache of each format");
          format = edgeattn_kv_cache_format(named_cache);
          check(asked[i] == EDGEATTN_KV_AUTO
                    ? format >= EDGEATTN_KV_FP32 && format <= EDGEATTN_KV_INT8
                    : format == asked[i],
                "cache format: the one asked, or what AUTO resolved to");
          check(format >= EDGEATTN_KV_FP32 && format <= EDGEATTN_KV_INT8 &&
                    strncmp(edgeattn_kv_cache_attention_kernel(named_cache), kFormatPrefix[format],
                            strlen(kFormatPrefix[format])) == 0,
                "cache kernel of its format");
          edgeattn_kv_cache_destroy(named_cache);
          named_cache = NULL;
        }
        check(edgeattn_kv_cache_format(NULL) == -1 &&
                  strcmp(edgeattn_kv_cache_attention_kernel(NULL), "") == 0,
              "cache format and kernel of NULL");
      }
      edgeattn_operator_destroy(plain_op);
    }
    check(strcmp(edgeattn_operator_projection_kernel(NULL), "") == 0, "kernel of NULL");
    /* The portable int8 kernel runs on every CPU, so it can always be forced. */
    named.precision = EDGEATTN_INT8;
    named.projection_kernel = "qd8_qc8w_i16_1x1v";
    check(edgeattn_operator_create(&named, &weights, &forced) == EDGEATTN_OK, "forced int8");
    check(strcmp(edgeattn_operator_projection_kernel(forced), "qd8_qc8w_i16_1x1v") == 0,
          "forced int8 kernel name");
    edgeattn_operator_destroy(forced);
  }
  {
    /* The attention step's maths. Score scale 1 and a sink of logit 0: row 0 scores (1, 0, and
     * the sink 0), so its head output is (e, 1) / (e + 2). A window of 1: each row sees only
     * itself, head output v_i. */
    const double e = exp(1.0);
    const float sink[1] = {0.0f};
    const edgeattn_config plain = {2, 1, EDGEATTN_FP32, 0};
    edgeattn_config step = plain;
    edgeattn_weights with_sink = weights;
    edgeattn_operator* stepped = NULL;
    edgeattn_kv_cache* ring = NULL;
    size_t i, bytes;
    step.math.score_scale = 1.0f;
    with_sink.sinks = sink;
    with_sink.sinks_size = 1;
    check(edgeattn_operator_create(&step, &with_sink, &stepped) == EDGEATTN_OK, "create: sink");
    check(edgeattn_forward(stepped, context, x, 1, 2, NULL, NULL, 0, y) == EDGEATTN_OK,
          "forward: sink");
    check(fabs(y[0] - (e / (e + 2) + 0.5)) < 1e-6 && fabs(y[1] - (1 / (e + 2) - 0.5)) < 1e-6,
          "sink values");
    edgeattn_operator_destroy(stepped);
    stepped = NULL;
    step.math.window = 1;
    check(edgeattn_operator_create(&step, &weights, &stepped) == EDGEATTN_OK, "create: window");
    check(edgeattn_forward(stepped, context, x, 1, 2, NULL, NULL, 0, y) == EDGEATTN_OK,
          "forward: window");
    check(fabs(y[0] - 1.5) < 1e-6 && fabs(y[3] - 0.5) < 1e-6, "window values");
    /* A windowed cache is a ring of 64 slots: 100 steps keep its bytes. */
    check(edgeattn_kv_cache_create(stepped, 200, 1, &ring) == EDGEATTN_OK, "windowed cache");
    check(edgeattn_kv_cache_slots(ring) == 64, "ring slots");
    bytes = edgeattn_kv_cache_bytes(ring);
    for (i = 0; i < 100; ++i) {
      check(edgeattn_decode(stepped, context, ring, x + 2 * (i % 2), 1, 1, y) == EDGEATTN_OK,
            "windowed decode step");
    }
    check(fabs(y[0] - 0.5) < 1e-6 && fabs(y[1] - 0.5) < 1e-6, "windowed decode sees itself");
    check(edgeattn_kv_cache_length(ring) == 100 && edgeattn_kv_cache_bytes(ring) == bytes,
          "windowed cache keeps its bytes");
    /* A window of 1 sees no earlier position: its ring rolls back to any length. */
    check(
        edgeattn_kv_cache_truncate(ring, 20) == EDGEATTN_OK && edgeattn_kv_cache_length(ring) == 20,
        "window 1 rolls back past the ring");
    check(edgeattn_decode(stepped, context, ring, x, 1, 1, y) == EDGEATTN_OK &&
              fabs(y[0] - 1.5) < 1e-6,
          "the step after the rollback sees itself");
    edgeattn_kv_cache_destroy(ring);
    edgeattn_operator_destroy(stepped);
    stepped = NULL;
    step = plain;
    step.math.rotary = 5;
    check_error(edgeattn_operator_create(&step, &weights, &stepped), "math.rotary",
                "unknown rotary layout");
    step.math.rotary = EDGEATTN_ROTARY_HALVES;
    step.math.rotary_dim = 3;
    check_error(edgeattn_operator_create(&step, &weights, &stepped), "rotary_dim",
                "odd rotary dims");
    step = plain;
    step.math.softcap = NAN;
    check_error(edgeattn_operator_create(&step, &weights, &stepped), "softcap", "NaN softcap");
    with_sink.sinks_size = 2;
    check_error(edgeattn_operator_create(&plain, &with_sink, &stepped), "sinks",
                "sinks of the wrong size");
    check(stepped == NULL, "failed create leaves out NULL");
    check(edgeattn_kv_cache_bytes(NULL) == 0 && edgeattn_kv_cache_slots(NULL) == 0,
          "cache sizes of NULL");
  }
  {
    /* Each forward option reaches the call as itself. key_lengths {1} with query_lengths {2}:
     * both rows see key 0 only, head output v0 = (1, 0), so y = (1.5, -0.5) per row (taking
     * the query lengths for the keys would give the plain row (a + 0.5, 0.5 - a)). */
    edgeattn_forward_options options;
    const size_t query_lengths[1] = {2}, key_lengths[1] = {1};
    memset(&options, 0, sizeof options);
    options.query_lengths = query_lengths;
    options.key_lengths = key_lengths;
    check(edgeattn_forward_ex(op, context, x, 1, 2, x, x, 2, y, &options) == EDGEATTN_OK,
          "forward: key lengths");
    check(fabs(y[0] - 1.5) < 1e-6 && fabs(y[1] + 0.5) < 1e-6 && fabs(y[2] - 1.5) < 1e-6 &&
              fabs(y[3] + 0.5) < 1e-6,
          "key lengths, not the query lengths, limit the keys");
  }
  {
    /* Rotary positions: queries at 1 against keys at 1 rotate both alike (the plain scores);
     * against keys at 0 the queries turn by 1 radian relative to the keys, and the output
     * changes. key_positions must not be read from positions. */
    edgeattn_config rotary = {2, 1, EDGEATTN_FP32, 0};
    edgeattn_operator* rop = NULL;
    edgeattn_forward_options options;
    const size_t ones[2] = {1, 1}, zeros[2] = {0, 0};
    float same[4], turned[4];
    rotary.math.rotary = EDGEATTN_ROTARY_HALVES;
    check(edgeattn_operator_create(&rotary, &weights, &rop) == EDGEATTN_OK, "create: rotary");
    memset(&options, 0, sizeof options);
    options.positions = ones;
    options.positions_size = 2;
    options.key_positions = ones;
    options.key_positions_size = 2;
    check(edgeattn_forward_ex(rop, context, x, 1, 2, x, x, 2, same, &options) == EDGEATTN_OK,
          "forward: equal positions");
    check(fabs(same[0] - (a + 0.5)) < 1e-5, "equal positions give the plain scores");
    options.key_positions = zeros;
    check(edgeattn_forward_ex(rop, context, x, 1, 2, x, x, 2, turned, &options) == EDGEATTN_OK,
          "forward: key positions");
    check(fabs(turned[0] - same[0]) > 1e-3, "key positions are the keys' own");
    edgeattn_operator_destroy(rop);
  }
  {
    /* Q/K RMS norm's epsilon is the caller's: 1 instead of the default 1e-6 scales q and k
     * by 1 / sqrt(0.5 + 1) rather than 1 / sqrt(0.5), which changes the scores. */
    edgeattn_config normed = {2, 1, EDGEATTN_FP32, 0};
    edgeattn_weights with_norm = weights;
    edgeattn_operator* nop = NULL;
    const float unit[2] = {1, 1};
    float fine[4], coarse[4];
    with_norm.q_norm_weight = unit;
    with_norm.q_norm_weight_size = 2;
    with_norm.k_norm_weight = unit;
    with_norm.k_norm_weight_size = 2;
    normed.math.qk_norm = 1;
    check(edgeattn_operator_create(&normed, &with_norm, &nop) == EDGEATTN_OK, "create: qk norm");
    check(edgeattn_forward(nop, context, x, 1, 2, NULL, NULL, 0, fine) == EDGEATTN_OK,
          "forward: qk norm");
    edgeattn_operator_destroy(nop);
    nop = NULL;
    normed.math.qk_norm_eps = 1.0f;
    check(edgeattn_operator_create(&normed, &with_norm, &nop) == EDGEATTN_OK,
          "create: qk norm eps");
    check(edgeattn_forward(nop, context, x, 1, 2, NULL, NULL, 0, coarse) == EDGEATTN_OK,
          "forward: qk norm eps");
    check(fabs(fine[0] - coarse[0]) > 1e-3, "qk_norm_eps is used");
    edgeattn_operator_destroy(nop);
  }
  {
    /* A kernel name of exactly 64 bytes is read whole (and is unknown), not refused as
     * unterminated. */
    edgeattn_config named = {2, 1, EDGEATTN_FP32, 0};
    edgeattn_operator* none = NULL;
    char longest[65];
    memset(longest, 'x', 64);
    longest[64] = '\0';
    named.projection_kernel = longest;
    check_error(edgeattn_operator_create(&named, &weights, &none), "kernels this CPU runs",
                "64-byte kernel name");
  }
  {
    edgeattn_kv_cache* cache = NULL;
    check(edgeattn_kv_cache_create(op, 2, 1, &cache) == EDGEATTN_OK, "cache for item_length");
    check_error(edgeattn_kv_cache_item_length(cache, 0, NULL), "length: expected a pointer",
                "NULL length");
    edgeattn_kv_cache_destroy(cache);
  }
  {
    /* A load's kv_format sets the forward calls' K/V storage, as the config's does. */
    unsigned char buf[1024];
    const size_t size = layer_file(buf, "layers.0.self_attn.", eye3, eye, out_bias);
    edgeattn_load_options options;
    edgeattn_operator* loaded = NULL;
    memset(&options, 0, sizeof options);
    options.num_heads = 1;
    options.prefix = "layers.0.self_attn.";
    options.kv_format = EDGEATTN_KV_BF16;
    check(edgeattn_operator_load_memory(buf, size, &options, &loaded) == EDGEATTN_OK,
          "load: kv_format");
    check(strncmp(edgeattn_operator_attention_kernel(loaded), "bf16kv_", 7) == 0,
          "load: a bf16 K/V kernel");
    edgeattn_operator_destroy(loaded);
  }
  {
    edgeattn_context* none = NULL;
    check_error(edgeattn_context_create((size_t)-1, &none), "threads", "threads = -1");
    check_error(edgeattn_context_create(100000, &none), "got 100000", "too many threads");
    check(none == NULL, "failed context create leaves out NULL");
  }

  {
    /* A successful call clears the message of a failed one before it. */
    check_error(edgeattn_forward(op, context, x, 1, 0, NULL, NULL, 0, y), "query.length",
                "a failed call");
    check(edgeattn_forward(op, context, x, 1, 2, NULL, NULL, 0, y) == EDGEATTN_OK &&
              strcmp(edgeattn_last_error(), "") == 0,
          "a successful call clears the last error");
  }
  {
    /* A failed create or load leaves NULL in *out even where it held a live handle (here one
     * that op and context, kept in variables of their own, still hold). */
    const edgeattn_config three_heads = {2, 3, EDGEATTN_FP32, 0};
    const unsigned char junk[16] = {0};
    edgeattn_operator* held = op;
    edgeattn_context* held_context = context;
    edgeattn_load_options options;
    memset(&options, 0, sizeof options);
    options.num_heads = 1;
    check_error(edgeattn_operator_create(&three_heads, &weights, &held), "num_heads",
                "create: 3 heads for d 2");
    check(held == NULL, "failed create leaves out NULL");
    held = op;
    check_error(edgeattn_operator_load("/nonexistent/m.safetensors", 1, EDGEATTN_FP32, &held),
                "/nonexistent/m.safetensors", "load: missing file");
    check(held == NULL, "failed load leaves out NULL");
    held = op;
    check_error(edgeattn_operator_load_ex("/nonexistent/m.safetensors", &options, &held),
                "/nonexistent/m.safetensors", "load_ex: missing file");
    check(held == NULL, "failed load_ex leaves out NULL");
    held = op;
    check_error(edgeattn_operator_load_memory(junk, sizeof junk, &options, &held), "memory buffer",
                "load_memory: not a safetensors file");
    check(held == NULL, "failed load_memory leaves out NULL");
    check_error(edgeattn_context_create(100000, &held_context), "got 100000",
                "context: too many threads");
    check(held_context == NULL, "failed context create leaves out NULL");
    held_context = context;
    check_error(edgeattn_context_create_with_pool(NULL, &held_context), "pool", "NULL pool");
    check(held_context == NULL, "failed pool context create leaves out NULL");
  }
  {
    /* edgeattn_operator_load passes num_heads and precision on: the layer at the top level of
     * a file loads as fp32 or int8 as asked, and 3 heads for d_model 2 are refused. */
    unsigned char buf[1024];
    const size_t size = layer_file(buf, "", eye3, eye, out_bias);
    edgeattn_operator* loaded = NULL;
    float z[4] = {0, 0, 0, 0};
    FILE* f = fopen("c_api_top_level.safetensors", "wb");
    check(f != NULL && fwrite(buf, 1, size, f) == size, "write top-level layer file");
    if (f != NULL) fclose(f);
    check(edgeattn_operator_load("c_api_top_level.safetensors", 1, EDGEATTN_FP32, &loaded) ==
              EDGEATTN_OK,
          "load: fp32");
    check(strncmp(edgeattn_operator_projection_kernel(loaded), "f32_", 4) == 0,
          "load: an fp32 kernel");
    check(edgeattn_forward(loaded, context, x, 1, 2, NULL, NULL, 0, z) == EDGEATTN_OK &&
              fabs(z[0] - (a + 0.5)) < 1e-6 && fabs(z[1] - (0.5 - a)) < 1e-6,
          "load: values");
    edgeattn_operator_destroy(loaded);
    loaded = NULL;
    check(edgeattn_operator_load("c_api_top_level.safetensors", 1, EDGEATTN_INT8, &loaded) ==
              EDGEATTN_OK,
          "load: int8");
    check(strncmp(edgeattn_operator_projection_kernel(loaded), "qd8_", 4) == 0,
          "load: an int8 kernel");
    edgeattn_operator_destroy(loaded);
    loaded = NULL;
    check_error(edgeattn_operator_load("c_api_top_level.safetensors", 3, EDGEATTN_FP32, &loaded),
                "num_heads", "load: 3 heads for d_model 2");
    remove("c_api_top_level.safetensors");
  }

  edgeattn_operator_destroy(op);
  edgeattn_context_destroy(context);
  edgeattn_operator_destroy(NULL);
  edgeattn_context_destroy(NULL);
  printf("%d passed, %d failed\n", passes, failures);
  return failures == 0 ? 0 : 1;
}
