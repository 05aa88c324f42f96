/* A minimal C program against an installed edgeattn: one forward pass of a d_model 2, one-head
 * layer with identity projections, checked against its closed form. Exit code 0 on agreement. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "edgeattn/edgeattn.h"

int main(void) {
  const float in_proj[12] = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1};
  const float out_proj[4] = {1, 0, 0, 1};
  const float out_bias[2] = {0.5f, -0.5f};
  const float x[4] = {1, 0, 0, 1};
  float y[4];
  /* For x = I, row 0 is (a + 0.5, 0.5 - a) and row 1 (1.5 - a, a - 0.5), with
   * a = 1 / (1 + exp(-1 / sqrt(2))). */
  const double a = 1.0 / (1.0 + exp(-1.0 / sqrt(2.0)));
  edgeattn_config config = {2, 1, EDGEATTN_FP32, 0};
  edgeattn_weights weights = {in_proj, 12, NULL, 0, out_proj, 4, out_bias, 2};
  edgeattn_operator* op = NULL;
  edgeattn_context* context = NULL;
  int ok = strcmp(edgeattn_version(), EDGEATTN_VERSION_STRING) == 0 &&
           edgeattn_operator_create(&config, &weights, &op) == EDGEATTN_OK &&
           edgeattn_context_create(2, &context) == EDGEATTN_OK &&
           edgeattn_forward(op, context, x, 1, 2, NULL, NULL, 0, y) == EDGEATTN_OK &&
           fabs(y[0] - (a + 0.5)) < 1e-5 && fabs(y[1] - (0.5 - a)) < 1e-5 &&
           fabs(y[2] - (1.5 - a)) < 1e-5 && fabs(y[3] - (a - 0.5)) < 1e-5;
  printf("edgeattn C consumer %s: %s%s\n", edgeattn_version(), ok ? "ok" : "FAILED ",
         ok ? "" : edgeattn_last_error());
  edgeattn_context_destroy(context);
  edgeattn_operator_destroy(op);
  return ok ? 0 : 1;
}
