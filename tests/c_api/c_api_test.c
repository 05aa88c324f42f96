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

  check(edgeattn_operator_create(&config, &weights, &op) == EDGEATTN_OK, "create");
  check(edgeattn_context_create(2, &context) == EDGEATTN_OK, "context");
  check(edgeattn_operator_d_model(op) == 2, "d_model");
  check(edgeattn_forward(op, context, x, 1, 2, NULL, NULL, 0, y) == EDGEATTN_OK, "forward");
  check(fabs(y[0] - (a + 0.5)) < 1e-6 && fabs(y[1] - (0.5 - a)) < 1e-6, "self-attention values");
  check(edgeattn_forward(op, context, x, 1, 2, x, x, 2, y) == EDGEATTN_OK, "cross-attention");
  check(fabs(y[0] - (a + 0.5)) < 1e-6, "cross-attention values");
  check(strcmp(edgeattn_last_error(), "") == 0, "no error after success");

  check_error(edgeattn_forward(op, context, x, 1, 0, NULL, NULL, 0, y), "query.length",
              "zero length");
  check_error(edgeattn_forward(op, context, NULL, 1, 2, NULL, NULL, 0, y), "query.data",
              "null query");
  check_error(edgeattn_forward(op, context, x, 1, 2, x, NULL, 2, y), "key and value",
              "key without value");
  check_error(edgeattn_forward(NULL, context, x, 1, 2, NULL, NULL, 0, y), "op", "null operator");
  check_error(edgeattn_forward(op, NULL, x, 1, 2, NULL, NULL, 0, y), "context", "null context");
  check_error(edgeattn_forward(op, context, x, 1, 2, NULL, NULL, 0, NULL), "out.data", "null out");

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

  edgeattn_operator_destroy(op);
  edgeattn_context_destroy(context);
  edgeattn_operator_destroy(NULL);
  edgeattn_context_destroy(NULL);
  printf("%d passed, %d failed\n", passes, failures);
  return failures == 0 ? 0 : 1;
}
