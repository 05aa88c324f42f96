/* edgeattn_context_create_with_pool from C: an app's own pool (here pthreads) gives results
 * bit-identical to a one-thread context, and pools that break the run() contract or come with
 * bad fields are refused with a status and a message instead of a wrong result. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "edgeattn/edgeattn.h"

enum { kD = 16, kHeads = 2, kBatch = 2, kLength = 9, kWorkers = 3 };

static int failures = 0;

static void check(int ok, const char* what) {
  if (!ok) {
    ++failures;
    printf("FAILED: %s (last error: '%s')\n", what, edgeattn_last_error());
  }
}

/* Expects an invalid-argument failure whose message contains `fragment`. */
static void check_error(edgeattn_status status, const char* fragment, const char* what) {
  check(status == EDGEATTN_ERROR_INVALID_ARGUMENT && strstr(edgeattn_last_error(), fragment), what);
}

/* ---- Pools: each a run() callback; `user` counts the run() calls. ---- */

static void run_serially(void* user, size_t items, edgeattn_pool_item item, void* ctx) {
  size_t i;
  ++*(int*)user;
  for (i = 0; i < items; ++i) item(ctx, i);
}

typedef struct {
  edgeattn_pool_item item;
  void* ctx;
  size_t index;
} thread_job;

static void* run_job(void* arg) {
  const thread_job* job = (const thread_job*)arg;
  job->item(job->ctx, job->index);
  return NULL;
}

/* One pthread per item but the first, which the calling thread runs: items run concurrently. */
static void run_on_threads(void* user, size_t items, edgeattn_pool_item item, void* ctx) {
  pthread_t threads[kWorkers];
  thread_job jobs[kWorkers];
  size_t i;
  ++*(int*)user;
  for (i = 1; i < items; ++i) {
    jobs[i].item = item;
    jobs[i].ctx = ctx;
    jobs[i].index = i;
    pthread_create(&threads[i], NULL, run_job, &jobs[i]);
  }
  item(ctx, 0);
  for (i = 1; i < items; ++i) pthread_join(threads[i], NULL);
}

static void run_all_but_last(void* user, size_t items, edgeattn_pool_item item, void* ctx) {
  run_serially(user, items - 1, item, ctx);
}

static void run_each_twice(void* user, size_t items, edgeattn_pool_item item, void* ctx) {
  run_serially(user, items, item, ctx);
  run_serially(user, items, item, ctx);
}

static void run_one_too_many(void* user, size_t items, edgeattn_pool_item item, void* ctx) {
  run_serially(user, items + 1, item, ctx);
}

typedef struct {
  size_t items;
  edgeattn_pool_item item;
  void* ctx;
} whole_job;

static void* run_whole(void* arg) {
  const whole_job* job = (const whole_job*)arg;
  size_t i;
  for (i = 0; i < job->items; ++i) job->item(job->ctx, i);
  return NULL;
}

/* Two threads each run every item at the same time: each item starts twice, concurrently. */
static void run_everything_on_two_threads(void* user, size_t items, edgeattn_pool_item item,
                                          void* ctx) {
  pthread_t other;
  whole_job job;
  job.items = items;
  job.item = item;
  job.ctx = ctx;
  ++*(int*)user;
  pthread_create(&other, NULL, run_whole, &job);
  run_whole(&job);
  pthread_join(other, NULL);
}

/* ---- The operator and its reference result ---- */

static edgeattn_operator* make_operator(void) {
  static float in_w[3 * kD * kD], in_b[3 * kD], out_w[kD * kD], out_b[kD];
  edgeattn_config config = {kD, kHeads, EDGEATTN_FP32, 0};
  edgeattn_weights weights = {in_w, 3 * kD * kD, in_b, 3 * kD, out_w, kD * kD, out_b, kD};
  edgeattn_operator* op = NULL;
  size_t i;
  for (i = 0; i < 3 * kD * kD; ++i) in_w[i] = 0.25f * (float)sin(0.37 * (double)i);
  for (i = 0; i < 3 * kD; ++i) in_b[i] = 0.01f * (float)i;
  for (i = 0; i < kD * kD; ++i) out_w[i] = 0.25f * (float)cos(0.11 * (double)i);
  for (i = 0; i < kD; ++i) out_b[i] = -0.02f * (float)i;
  check(edgeattn_operator_create(&config, &weights, &op) == EDGEATTN_OK, "operator");
  return op;
}

static edgeattn_status forward_on(const edgeattn_operator* op, edgeattn_context* context,
                                  const float* x, float* y) {
  edgeattn_forward_options options;
  memset(&options, 0, sizeof(options));
  options.is_causal = 1;
  return edgeattn_forward_ex(op, context, x, kBatch, kLength, NULL, NULL, 0, y, &options);
}

/* A pool that keeps the contract: bit-identical to one thread, and it really ran the phases. */
static void check_good_pool(const edgeattn_operator* op, const float* x, const float* expected,
                            void (*run)(void*, size_t, edgeattn_pool_item, void*),
                            const char* name) {
  int runs = 0;
  float y[kBatch * kLength * kD];
  edgeattn_thread_pool pool;
  edgeattn_context* context = NULL;
  pool.workers = kWorkers;
  pool.run = run;
  pool.user = &runs;
  check(edgeattn_context_create_with_pool(&pool, &context) == EDGEATTN_OK, name);
  check(edgeattn_context_threads(context) == kWorkers, "pool context: threads");
  check(strcmp(edgeattn_context_pool_kind(context), "caller's") == 0, "pool context: kind");
  check(forward_on(op, context, x, y) == EDGEATTN_OK, name);
  check(memcmp(y, expected, sizeof(y)) == 0, name);
  check(runs > 0, "the pool's run() was called");
  edgeattn_context_destroy(context);
}

/* A pool that breaks the contract: the call fails with a message naming run(). */
static void check_bad_pool(const edgeattn_operator* op, const float* x,
                           void (*run)(void*, size_t, edgeattn_pool_item, void*),
                           const char* fragment, const char* name) {
  int runs = 0;
  float y[kBatch * kLength * kD];
  edgeattn_thread_pool pool;
  edgeattn_context* context = NULL;
  pool.workers = kWorkers;
  pool.run = run;
  pool.user = &runs;
  check(edgeattn_context_create_with_pool(&pool, &context) == EDGEATTN_OK, name);
  check_error(forward_on(op, context, x, y), fragment, name);
  edgeattn_context_destroy(context);
}

static void check_bad_fields(void) {
  int runs = 0;
  edgeattn_thread_pool pool;
  edgeattn_context* context = NULL;
  pool.workers = kWorkers;
  pool.run = NULL;
  pool.user = &runs;
  check_error(edgeattn_context_create_with_pool(NULL, &context), "pool: expected a pointer",
              "NULL pool");
  check(context == NULL, "no context after a failure");
  check_error(edgeattn_context_create_with_pool(&pool, &context),
              "edgeattn_thread_pool.run: expected a function, got NULL", "NULL run");
  pool.run = run_serially;
  pool.workers = 0;
  check_error(edgeattn_context_create_with_pool(&pool, &context),
              "edgeattn_thread_pool.workers: expected a count in [1, 256], got 0", "0 workers");
  pool.workers = (size_t)-1;
  check_error(edgeattn_context_create_with_pool(&pool, &context), "edgeattn_thread_pool.workers",
              "huge worker count");
  /* The bound is inclusive: 256 workers are a pool, 257 are not. */
  pool.workers = 257;
  check_error(edgeattn_context_create_with_pool(&pool, &context),
              "edgeattn_thread_pool.workers: expected a count in [1, 256], got 257", "257 workers");
  pool.workers = 256;
  check(edgeattn_context_create_with_pool(&pool, &context) == EDGEATTN_OK &&
            edgeattn_context_threads(context) == 256,
        "256 workers");
  edgeattn_context_destroy(context);
  context = NULL;
  pool.workers = kWorkers;
  check_error(edgeattn_context_create_with_pool(&pool, NULL), "out: expected a pointer",
              "NULL out");
  check(edgeattn_context_threads(NULL) == 0 && strcmp(edgeattn_context_pool_kind(NULL), "") == 0,
        "NULL context queries");
}

int main(void) {
  float x[kBatch * kLength * kD], expected[kBatch * kLength * kD];
  edgeattn_operator* op = make_operator();
  edgeattn_context* one = NULL;
  size_t i;
  for (i = 0; i < kBatch * kLength * kD; ++i) x[i] = (float)sin(1.3 * (double)i);
  check(edgeattn_context_create(1, &one) == EDGEATTN_OK, "one-thread context");
  check(forward_on(op, one, x, expected) == EDGEATTN_OK, "one-thread forward");
  edgeattn_context_destroy(one);

  check_good_pool(op, x, expected, run_serially, "a pool running items one by one");
  check_good_pool(op, x, expected, run_on_threads, "a pool of pthreads");
  check_bad_pool(op, x, run_all_but_last, "2 completed, 0 repeated and 0 out of range",
                 "a pool that skips an item");
  check_bad_pool(op, x, run_each_twice, "3 completed, 3 repeated", "a pool that runs twice");
  check_bad_pool(op, x, run_one_too_many, "1 out of range", "a pool that runs one too many");
  check_bad_pool(op, x, run_everything_on_two_threads, "3 completed, 3 repeated",
                 "a pool that runs every item on two threads at once");
  check_bad_fields();

  /* After a failed call the operator and a fresh context still work. */
  check_good_pool(op, x, expected, run_on_threads, "a good pool after bad ones");
  edgeattn_operator_destroy(op);
  printf("%s\n", failures == 0 ? "thread pool test passed" : "thread pool test FAILED");
  return failures == 0 ? 0 : 1;
}
