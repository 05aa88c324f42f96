/* edgeattn C API (C99): multi-head attention as PyTorch's nn.MultiheadAttention computes it,
 * for apps that call in from C, JNI, Swift or any FFI. Nothing thrown crosses this boundary:
 * every call returns a status, and on failure edgeattn_last_error() describes it (which
 * argument, what was expected, what came). Tensors are row-major float32. A call that creates
 * an object into `*out` first sets `*out` to NULL, so on failure it holds NULL, not what it
 * held before: keep live handles in variables of their own.
 *
 * Compatibility: the structs a caller fills in grow only by fields appended at their end, whose
 * zero keeps the earlier behaviour (e.g. edgeattn_config.kv_format, 0: fp32); zero-initialise
 * them (= {0}) so that a rebuild against a newer header changes nothing. The struct sizes are
 * part of the ABI: a program built against older headers is rebuilt for a new 0.x minor version
 * (the shared library's SONAME changes with it; docs/packaging.md). */
#ifndef EDGEATTN_EDGEATTN_H_
#define EDGEATTN_EDGEATTN_H_

#include <stdbool.h>
#include <stddef.h>

#include "edgeattn/build_config.h"
#include "edgeattn/version.h"

/* Exported from a shared libedgeattn only (see edgeattn/export.hpp). */
#if EDGEATTN_SHARED_LIBRARY && (defined(__GNUC__) || defined(__clang__))
#define EDGEATTN_C_API __attribute__((visibility("default")))
#else
#define EDGEATTN_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum edgeattn_status {
  EDGEATTN_OK = 0,
  EDGEATTN_ERROR_INVALID_ARGUMENT = 1, /* bad shape, size, pointer, file or configuration */
  EDGEATTN_ERROR_OUT_OF_MEMORY = 2,
  EDGEATTN_ERROR_INTERNAL = 3
} edgeattn_status;

typedef enum edgeattn_precision {
  EDGEATTN_FP32 = 0,
  EDGEATTN_INT8 = 1,
  EDGEATTN_BF16 = 2, /* bf16 projection weights (Precision::kBf16) */
  EDGEATTN_FP16 = 3, /* fp16 projection weights (Precision::kFp16) */
  EDGEATTN_AUTO = 4  /* this CPU's choice (Precision::kAuto; docs/precision.md, "auto") */
} edgeattn_precision;

/* How keys and values are stored for the attention core, per forward call and in a KV cache
 * (edgeattn::KvFormat; docs/precision.md, docs/decoding.md). */
typedef enum edgeattn_kv_format {
  EDGEATTN_KV_FP32 = 0,
  EDGEATTN_KV_BF16 = 1,
  EDGEATTN_KV_FP16 = 2,
  EDGEATTN_KV_INT8 = 3,
  EDGEATTN_KV_AUTO = 4 /* this CPU's choice for forward calls, or for a cache (KvFormat::kAuto) */
} edgeattn_kv_format;

typedef enum edgeattn_rotary_layout {
  EDGEATTN_ROTARY_NONE = 0,
  EDGEATTN_ROTARY_HALVES = 1,     /* dims i and i + rotary_dim / 2 pair up (Llama, NeoX) */
  EDGEATTN_ROTARY_INTERLEAVED = 2 /* dims 2i and 2i + 1 pair up (GPT-J) */
} edgeattn_rotary_layout;

/* The attention step's maths, as edgeattn::AttentionMath (edgeattn.hpp, docs/decoding.md); a
 * zero-initialised struct is plain attention. Zeros of the fields marked so take defaults. */
typedef struct edgeattn_attention_math {
  float score_scale; /* multiplies Q K^T; 0: 1 / sqrt(head_dim) */
  float softcap;     /* > 0: scores become softcap * tanh(score / softcap); 0: off */
  size_t window;     /* > 0: sliding window, |i - j| < window; 0: off */
  int qk_norm;       /* 1: RMS norm of Q and K per head (weights' q/k_norm_weight) */
  float qk_norm_eps; /* 0: 1e-6 */
  int rotary;        /* an edgeattn_rotary_layout */
  size_t rotary_dim; /* 0: head_dim */
  float rotary_base; /* 0: 10000 */
  float rotary_scaling; /* linear position scaling; 0: 1 */
} edgeattn_attention_math;

typedef struct edgeattn_config {
  size_t d_model;
  size_t num_heads;
  int precision; /* an edgeattn_precision; int, so that any value a caller passes is checked */
  size_t int8_block; /* values per activation scale in int8 mode; 0: the default (256) */
  size_t num_kv_heads; /* grouped-query attention: a divisor of num_heads; 0: num_heads */
  /* The projection and attention kernels by name (`edgeattn info` lists this CPU's); NULL or
   * "": the best. */
  const char* projection_kernel;
  const char* attention_kernel; /* one of the kv_format's kernels */
  edgeattn_attention_math math;
  int kv_format; /* an edgeattn_kv_format: how forward calls store keys and values, and the
                    format of edgeattn_kv_cache_create's caches; 0: fp32 */
} edgeattn_config;

/* Sizes are element counts, checked against d_model. A NULL bias means no bias. The input
 * projections come packed (in_proj_weight) or separately (q/k/v_proj_weight, with
 * in_proj_weight NULL; k and v have kv_dim = num_kv_heads * d_model / num_heads rows). */
typedef struct edgeattn_weights {
  const float* in_proj_weight; /* [3 * d_model, d_model] */
  size_t in_proj_weight_size;
  const float* in_proj_bias; /* [3 * d_model] (grouped-query: [d_model + 2 * kv_dim]) or NULL */
  size_t in_proj_bias_size;
  const float* out_proj_weight; /* [d_model, d_model] */
  size_t out_proj_weight_size;
  const float* out_proj_bias; /* [d_model] or NULL */
  size_t out_proj_bias_size;
  const float* q_proj_weight; /* [d_model, d_model] */
  size_t q_proj_weight_size;
  const float* k_proj_weight; /* [kv_dim, d_model] */
  size_t k_proj_weight_size;
  const float* v_proj_weight; /* [kv_dim, d_model] */
  size_t v_proj_weight_size;
  const float* q_proj_bias; /* [d_model] or NULL (with separate weights) */
  size_t q_proj_bias_size;
  const float* k_proj_bias; /* [kv_dim] or NULL */
  size_t k_proj_bias_size;
  const float* v_proj_bias; /* [kv_dim] or NULL */
  size_t v_proj_bias_size;
  const float* sinks; /* [num_heads] attention sink logits, or NULL */
  size_t sinks_size;
  const float* q_norm_weight; /* [head_dim] with math.qk_norm, else NULL */
  size_t q_norm_weight_size;
  const float* k_norm_weight; /* [head_dim] with math.qk_norm, else NULL */
  size_t k_norm_weight_size;
} edgeattn_weights;

/* How a layer is found and checked in a safetensors file (edgeattn::LoadOptions in
 * edgeattn.hpp has the rules in full); a zero-initialised struct loads a top-level layer in
 * fp32 with strict checks. */
typedef struct edgeattn_load_options {
  size_t num_heads;   /* required for float files; int8 files record it (0: take it) */
  int precision;      /* an edgeattn_precision; int8 files always run int8 */
  size_t int8_block;  /* 0: the default (256) */
  const char* prefix; /* NULL or "": top level; e.g. "model.encoder.layers.3.self_attn." */
  int non_strict;     /* 0: strict, as PyTorch's load_state_dict(strict=True): missing,
                         misspelled or foreign tensors and half-present bias sets are errors.
                         1: unknown tensors are ignored, missing biases are zeros. */
  int no_bias;        /* 1: bias=False, the layer has no biases (strict: none may be present) */
  const char* projection_kernel; /* as in edgeattn_config */
  const char* attention_kernel;
  edgeattn_attention_math math; /* as LoadOptions::math: sinks and Q/K norm weights of a
                                   Llama-family layer are read from the file */
  int kv_format;                 /* as in edgeattn_config */
} edgeattn_load_options;

typedef enum edgeattn_attention_weights {
  EDGEATTN_WEIGHTS_NONE = 0,
  EDGEATTN_WEIGHTS_PER_HEAD = 1, /* attn_weights [batch, num_heads, Lq, Lk] */
  EDGEATTN_WEIGHTS_AVERAGED = 2  /* attn_weights [batch, Lq, Lk], the mean over heads */
} edgeattn_attention_weights;

/* Masks and extras of a forward call, as edgeattn::ForwardOptions (see edgeattn.hpp); a
 * zero-initialised struct turns everything off. Array sizes are element counts. */
typedef struct edgeattn_forward_options {
  int is_causal;                 /* query i attends keys j <= i */
  const bool* key_padding_mask;  /* [batch, Lk], true = ignore the key, or NULL */
  size_t key_padding_mask_size;
  const float* attn_mask; /* additive [Lq, Lk] or [batch * num_heads, Lq, Lk], or NULL */
  size_t attn_mask_size;
  const size_t* query_lengths; /* [batch] valid lengths of a padded batch, or NULL */
  const size_t* key_lengths;   /* [batch], or NULL (self-attention: query_lengths) */
  int need_weights;            /* an edgeattn_attention_weights */
  float* attn_weights;
  size_t attn_weights_size;
  const size_t* positions; /* [Lq] rotary positions of the queries, or NULL: 0, 1, ... */
  size_t positions_size;
  const size_t* key_positions; /* [Lk] of the keys, or NULL */
  size_t key_positions_size;
} edgeattn_forward_options;

typedef struct edgeattn_operator edgeattn_operator;
typedef struct edgeattn_context edgeattn_context;
typedef struct edgeattn_kv_cache edgeattn_kv_cache;
typedef struct edgeattn_cross_memory edgeattn_cross_memory;

/* The version of the library linked, "MAJOR.MINOR.PATCH" (static storage);
 * EDGEATTN_VERSION_STRING is the version of the headers compiled against. */
EDGEATTN_C_API const char* edgeattn_version(void);

/* The message of the last failed call on this thread ("" if none). Valid until the next call
 * on this thread. It names the argument as the C++ API (edgeattn.hpp) does: a tensor as its
 * call's parameter (query, key, value, out; x for a decode step's input) with .batch or
 * .length (a step's n is x.length), the config's fields as Config.* and Config.math.*, the
 * load options' as LoadOptions.* (num_heads bare). */
EDGEATTN_C_API const char* edgeattn_last_error(void);

/* Builds an operator; the weights are copied (packed), so the caller may free them after. */
EDGEATTN_C_API edgeattn_status edgeattn_operator_create(const edgeattn_config* config,
                                                        const edgeattn_weights* weights,
                                                        edgeattn_operator** out);
/* Loads a safetensors file (PyTorch state_dict names, or an int8 file from edgeattn quantize,
 * for which num_heads may be 0). */
EDGEATTN_C_API edgeattn_status edgeattn_operator_load(const char* path, size_t num_heads,
                                                      int precision, edgeattn_operator** out);
/* Loads one layer from a safetensors file (memory-mapped, not copied): a state_dict of one
 * layer or, with options->prefix, of a whole model. options NULL: all defaults (then only
 * int8 files load, as num_heads is 0). */
EDGEATTN_C_API edgeattn_status edgeattn_operator_load_ex(const char* path,
                                                         const edgeattn_load_options* options,
                                                         edgeattn_operator** out);
/* The same from a safetensors file in memory (an AAssetManager buffer, iOS bundle data): the
 * size bytes at data are read during the call only; the weights are packed into the operator,
 * so the caller may free the buffer as soon as the call returns. */
EDGEATTN_C_API edgeattn_status edgeattn_operator_load_memory(const void* data, size_t size,
                                                             const edgeattn_load_options* options,
                                                             edgeattn_operator** out);
EDGEATTN_C_API void edgeattn_operator_destroy(edgeattn_operator* op);
EDGEATTN_C_API size_t edgeattn_operator_d_model(const edgeattn_operator* op);
/* The kernels the operator runs, e.g. "qd8_qc8w_vnni_4x4v" ("" for NULL): static strings that
 * stay valid after the operator is destroyed. */
EDGEATTN_C_API const char* edgeattn_operator_projection_kernel(const edgeattn_operator* op);
EDGEATTN_C_API const char* edgeattn_operator_attention_kernel(const edgeattn_operator* op);
/* Bytes of the operator's packed projections (weights, scales, biases); 0 for NULL. */
EDGEATTN_C_API size_t edgeattn_operator_weight_bytes(const edgeattn_operator* op);

/* threads = 0: one per hardware thread, else 1 to 256 (EDGEATTN_ERROR_INVALID_ARGUMENT past it).
 * A context serves one call at a time: a call on a context already in use by another thread
 * fails with "context: already in use" instead of racing. Use one context per calling thread. */
EDGEATTN_C_API edgeattn_status edgeattn_context_create(size_t threads, edgeattn_context** out);
EDGEATTN_C_API void edgeattn_context_destroy(edgeattn_context* context);

/* ---- The caller's thread pool ----
 * A context can run its calls on a pool the app already has (a JNI or Swift app's own
 * threads), as XNNPACK's pthreadpool does. Each phase of a call with more than one work item
 * makes one run() (none with workers = 1: the calling thread runs the items):
 *   run(user, items, item, item_context) must call item(item_context, i) exactly once for
 *   every i in [0, items) and return only after all those calls have returned. The calls may
 *   run concurrently on any threads (the calling thread included), in any order; items never
 *   block on each other, so a pool of any size, even one that runs them one by one on the
 *   calling thread, completes. items is the pool's workers.
 * What the library checks, at no cost to a correct pool: an item index out of range, an item
 * run a second time (neither is run again) or an item not run by the time run() returns makes
 * the call fail with EDGEATTN_ERROR_INVALID_ARGUMENT naming edgeattn_thread_pool.run and the
 * counts (its outputs, and a KV cache it appended to, are then unspecified); so does a C++
 * exception out of run(), once the items it began have returned. An item run after run() has
 * returned cannot be detected: that is undefined behaviour. */
typedef void (*edgeattn_pool_item)(void* item_context, size_t item);
typedef struct edgeattn_thread_pool {
  size_t workers; /* items per phase the pool runs in parallel, in [1, 256] */
  void (*run)(void* user, size_t items, edgeattn_pool_item item, void* item_context);
  void* user; /* passed to run; must stay valid while the context exists */
} edgeattn_thread_pool;

/* A context whose calls run on the caller's pool; *pool is copied. */
EDGEATTN_C_API edgeattn_status edgeattn_context_create_with_pool(const edgeattn_thread_pool* pool,
                                                                 edgeattn_context** out);
/* The context's worker count, and what runs them: "oneTBB", "std::thread" or "caller's";
 * 0 and "" for NULL. */
EDGEATTN_C_API size_t edgeattn_context_threads(const edgeattn_context* context);
EDGEATTN_C_API const char* edgeattn_context_pool_kind(const edgeattn_context* context);

/* query [batch, query_length, d_model]; key and value [batch, key_length, d_model], or both
 * NULL for self-attention (key_length is then ignored); out [batch, query_length, d_model].
 * Buffers may alias: query, key and value may be the same memory or overlapping views of one
 * buffer, and out may lie over any of them; the result is bit for bit that of separate copies. */
EDGEATTN_C_API edgeattn_status edgeattn_forward(const edgeattn_operator* op,
                                                edgeattn_context* context, const float* query,
                                                size_t batch, size_t query_length,
                                                const float* key, const float* value,
                                                size_t key_length, float* out);

/* edgeattn_forward with options (NULL: none). */
EDGEATTN_C_API edgeattn_status edgeattn_forward_ex(const edgeattn_operator* op,
                                                   edgeattn_context* context, const float* query,
                                                   size_t batch, size_t query_length,
                                                   const float* key, const float* value,
                                                   size_t key_length, float* out,
                                                   const edgeattn_forward_options* options);

/* A KV cache for incremental decoding with op: room for max_length positions of batch
 * sequences. It holds op's layer's keys and values: edgeattn_decode with an operator of other
 * key/value projections (another layer, or another precision) fails. */
EDGEATTN_C_API edgeattn_status edgeattn_kv_cache_create(const edgeattn_operator* op,
                                                        size_t max_length, size_t batch,
                                                        edgeattn_kv_cache** out);
/* The same with its keys and values stored as `format` (an edgeattn_kv_format), decoded by the
 * attention kernel named `attention_kernel` (NULL or "": the format's default). */
EDGEATTN_C_API edgeattn_status edgeattn_kv_cache_create_format(const edgeattn_operator* op,
                                                               size_t max_length, size_t batch,
                                                               int format,
                                                               const char* attention_kernel,
                                                               edgeattn_kv_cache** out);
EDGEATTN_C_API void edgeattn_kv_cache_destroy(edgeattn_kv_cache* cache);
/* What the cache stores and runs: its edgeattn_kv_format, never EDGEATTN_KV_AUTO (what AUTO
 * resolved to on this CPU), and the attention kernel its decode steps run (a static string,
 * valid after the cache is destroyed); -1 and "" for NULL. */
EDGEATTN_C_API int edgeattn_kv_cache_format(const edgeattn_kv_cache* cache);
EDGEATTN_C_API const char* edgeattn_kv_cache_attention_kernel(const edgeattn_kv_cache* cache);
/* Bytes per position of one sequence (every key/value head, keys and values; 0 for NULL),
 * rounded up from the bytes held over batch x slots: a kernel's layout pads its panels of
 * positions, so a short cache may report more than a long one. */
EDGEATTN_C_API size_t edgeattn_kv_cache_bytes_per_position(const edgeattn_kv_cache* cache);
/* Positions cached: the longest sequence's (edgeattn_kv_cache_item_length: each one's), as the
   last decode, truncate, reorder or clear left them (any thread may read them during a decode). */
EDGEATTN_C_API size_t edgeattn_kv_cache_length(const edgeattn_kv_cache* cache);
/* Bytes held, and positions stored: max_length, or a windowed operator's ring (0 for NULL). */
EDGEATTN_C_API size_t edgeattn_kv_cache_bytes(const edgeattn_kv_cache* cache);
EDGEATTN_C_API size_t edgeattn_kv_cache_slots(const edgeattn_kv_cache* cache);
/* Keeps the first `length` positions (at most the cached length); 0 clears the cache. */
EDGEATTN_C_API edgeattn_status edgeattn_kv_cache_truncate(edgeattn_kv_cache* cache,
                                                          size_t length);

/* One decode step: x [batch, n, d_model] are the next n positions of each sequence; their keys
 * and values are appended to the cache and out [batch, n, d_model] receives their causal
 * attention over every cached position. */
EDGEATTN_C_API edgeattn_status edgeattn_decode(const edgeattn_operator* op,
                                               edgeattn_context* context,
                                               edgeattn_kv_cache* cache, const float* x,
                                               size_t batch, size_t n, float* out);

/* Beams and ragged batches (docs/decoding.md). Sequence `item`'s cached length into *length. */
EDGEATTN_C_API edgeattn_status edgeattn_kv_cache_item_length(const edgeattn_kv_cache* cache,
                                                             size_t item, size_t* length);
/* Keeps the first lengths[b] positions of sequence b: count = the cache's batch values, each at
 * most that sequence's length. */
EDGEATTN_C_API edgeattn_status edgeattn_kv_cache_truncate_items(edgeattn_kv_cache* cache,
                                                                const size_t* lengths,
                                                                size_t count);
/* Sequence b becomes what sequence indices[b] was (beam search): count = the cache's batch
 * indices, each below it; repeats allowed. */
EDGEATTN_C_API edgeattn_status edgeattn_kv_cache_reorder(edgeattn_kv_cache* cache,
                                                         const size_t* indices, size_t count);
/* edgeattn_decode for a ragged batch: sequence b appends its first step_lengths[b] rows of x
 * ([batch] values, each at most n) at its own length; out's rows past them are zeros. */
EDGEATTN_C_API edgeattn_status edgeattn_decode_ragged(const edgeattn_operator* op,
                                                      edgeattn_context* context,
                                                      edgeattn_kv_cache* cache, const float* x,
                                                      size_t batch, size_t n,
                                                      const size_t* step_lengths, float* out);

/* A cross-attention memory for op: an encoder output's keys and values, projected once and
 * read by every decoder step and beam; room for max_length frames of batch items. Only op may
 * use it. edgeattn_decode_cross calls may share one memory from several threads at once;
 * edgeattn_cross_memory_project needs it to itself. */
EDGEATTN_C_API edgeattn_status edgeattn_cross_memory_create(const edgeattn_operator* op,
                                                            size_t max_length, size_t batch,
                                                            edgeattn_cross_memory** out);
EDGEATTN_C_API void edgeattn_cross_memory_destroy(edgeattn_cross_memory* memory);
/* Frames of the encoder output projected last (0: none yet, or memory NULL). */
EDGEATTN_C_API size_t edgeattn_cross_memory_length(const edgeattn_cross_memory* memory);
/* Projects encoder_output [batch, length, d_model] (batch = the memory's) into memory, replacing
 * what it held. key_lengths: [batch] valid frames per item, or NULL (all). */
EDGEATTN_C_API edgeattn_status edgeattn_cross_memory_project(const edgeattn_operator* op,
                                                             edgeattn_context* context,
                                                             const float* encoder_output,
                                                             size_t batch, size_t length,
                                                             const size_t* key_lengths,
                                                             edgeattn_cross_memory* memory);
/* Cross-attention of query [batch, n, d_model] against memory into out [batch, n, d_model].
 * memory_items: [batch] memory item read by each query item (beams of one utterance), or NULL
 * (item b, or item 0 of a one-item memory). out may be query. */
EDGEATTN_C_API edgeattn_status edgeattn_decode_cross(const edgeattn_operator* op,
                                                     edgeattn_context* context,
                                                     const edgeattn_cross_memory* memory,
                                                     const float* query, size_t batch, size_t n,
                                                     const size_t* memory_items, float* out);

#ifdef __cplusplus
}
#endif

#endif /* EDGEATTN_EDGEATTN_H_ */
