/* edgeattn C API (C99): multi-head attention as PyTorch's nn.MultiheadAttention computes it,
 * for apps that call in from C, JNI, Swift or any FFI. Nothing thrown crosses this boundary:
 * every call returns a status, and on failure edgeattn_last_error() describes it (which
 * argument, what was expected, what came). Tensors are row-major float32. */
#ifndef EDGEATTN_EDGEATTN_H_
#define EDGEATTN_EDGEATTN_H_

#include <stddef.h>

#if defined(__GNUC__) || defined(__clang__)
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

typedef enum edgeattn_precision { EDGEATTN_FP32 = 0, EDGEATTN_INT8 = 1 } edgeattn_precision;

typedef struct edgeattn_config {
  size_t d_model;
  size_t num_heads;
  int precision; /* an edgeattn_precision; int, so that any value a caller passes is checked */
  size_t int8_block; /* values per activation scale in int8 mode; 0: the default (64) */
} edgeattn_config;

/* Sizes are element counts, checked against d_model. A NULL bias means no bias. */
typedef struct edgeattn_weights {
  const float* in_proj_weight; /* [3 * d_model, d_model] */
  size_t in_proj_weight_size;
  const float* in_proj_bias; /* [3 * d_model] or NULL */
  size_t in_proj_bias_size;
  const float* out_proj_weight; /* [d_model, d_model] */
  size_t out_proj_weight_size;
  const float* out_proj_bias; /* [d_model] or NULL */
  size_t out_proj_bias_size;
} edgeattn_weights;

typedef struct edgeattn_operator edgeattn_operator;
typedef struct edgeattn_context edgeattn_context;

/* The message of the last failed call on this thread ("" if none). Valid until the next call
 * on this thread. */
EDGEATTN_C_API const char* edgeattn_last_error(void);

/* Builds an operator; the weights are copied (packed), so the caller may free them after. */
EDGEATTN_C_API edgeattn_status edgeattn_operator_create(const edgeattn_config* config,
                                                        const edgeattn_weights* weights,
                                                        edgeattn_operator** out);
/* Loads a safetensors file (PyTorch state_dict names, or an int8 file from edgeattn quantize,
 * for which num_heads may be 0). */
EDGEATTN_C_API edgeattn_status edgeattn_operator_load(const char* path, size_t num_heads,
                                                      int precision, edgeattn_operator** out);
EDGEATTN_C_API void edgeattn_operator_destroy(edgeattn_operator* op);
EDGEATTN_C_API size_t edgeattn_operator_d_model(const edgeattn_operator* op);

/* threads = 0: one per hardware thread. One context per calling thread. */
EDGEATTN_C_API edgeattn_status edgeattn_context_create(size_t threads, edgeattn_context** out);
EDGEATTN_C_API void edgeattn_context_destroy(edgeattn_context* context);

/* query [batch, query_length, d_model]; key and value [batch, key_length, d_model], or both
 * NULL for self-attention (key_length is then ignored); out [batch, query_length, d_model]. */
EDGEATTN_C_API edgeattn_status edgeattn_forward(const edgeattn_operator* op,
                                                edgeattn_context* context, const float* query,
                                                size_t batch, size_t query_length,
                                                const float* key, const float* value,
                                                size_t key_length, float* out);

#ifdef __cplusplus
}
#endif

#endif /* EDGEATTN_EDGEATTN_H_ */
