#include "runtime/mha_forward.h"

#include "runtime/forward_phases.h"
#include "runtime/forward_plan.h"
#include "runtime/kv_range_check.h"
#include "runtime/thread_count.h"

namespace edgeattn {

namespace {

// The plan's buffers, with red zones between them under AddressSanitizer.
float* ReserveWorkspace(const ForwardPlan& plan, Workspace& workspace) {
  float* base = workspace.Reserve(plan.workspace.total());
  plan.workspace.PoisonRedZones(base);
  return base;
}

}  // namespace

// A plan of named phases over one workspace reservation.
void MhaForward(const MhaProjections& weights, const simd::AttentionKernel& attention,
                const StepMath& math, const MhaShape& shape, const MhaOptions& options,
                const float* xq, const float* xk, const float* xv, float* y, const KvStore* cache,
                Executor& executor, Workspace& workspace) {
  const ForwardCall call{weights, attention, math, shape, options, xq, xk, xv, y, cache};
  const ForwardPlan plan = PlanForward(call, CheckedWorkers("the context's executor", executor));
  const ForwardBuffers buffers = PlaceBuffers(plan, call, ReserveWorkspace(plan, workspace));
  const ForwardPass pass{call, plan, buffers, executor};
  if (plan.quantize) QuantizeInputs(pass);
  ProjectInputs(pass);
  if (math.transforms_heads()) NormAndRotateHeads(pass);
  // The caller's names of the rows keys and values come from: Forward's, or Decode's x.
  CheckKeysValuesFitFp16(pass, cache != nullptr ? "x" : "key", cache != nullptr ? "x" : "value");
  if (cache != nullptr && cache->before_writing != nullptr) {
    cache->before_writing(cache->before_writing_context);
  }
  PackKeysValues(pass);
  Attend(pass);
  if (options.weights_mode == AttentionWeights::kAveraged) AverageWeights(pass);
  ProjectOutput(pass);
}

void MhaProjectKeysValues(const MhaProjections& weights, const simd::AttentionKernel& attention,
                          const StepMath& math, const MhaShape& shape, const MhaOptions& options, const float* x,
                          const KvStore& cache, Executor& executor, Workspace& workspace) {
  MhaShape keys_only = shape;
  keys_only.lq = 0;
  const ForwardCall call{weights, attention, math, keys_only, options, nullptr, x, x, nullptr,
                         &cache};
  const ForwardPlan plan = PlanForward(call, CheckedWorkers("the context's executor", executor));
  const ForwardBuffers buffers = PlaceBuffers(plan, call, ReserveWorkspace(plan, workspace));
  const ForwardPass pass{call, plan, buffers, executor};
  if (plan.quantize) QuantizeInputs(pass);
  ProjectInputs(pass);
  if (math.transforms_heads()) NormAndRotateHeads(pass);
  CheckKeysValuesFitFp16(pass, "encoder_output", "encoder_output");
  PackKeysValues(pass);
}

void MhaAttendMemory(const MhaProjections& weights, const simd::AttentionKernel& attention,
                     const StepMath& math, const MhaShape& shape, const MhaOptions& options, const float* xq, float* y,
                     const KvMemory& memory, Executor& executor, Workspace& workspace) {
  const ForwardCall call{weights, attention, math,    shape,   options, xq,
                         nullptr, nullptr,   y,       nullptr, &memory};
  const ForwardPlan plan = PlanForward(call, CheckedWorkers("the context's executor", executor));
  const ForwardBuffers buffers = PlaceBuffers(plan, call, ReserveWorkspace(plan, workspace));
  const ForwardPass pass{call, plan, buffers, executor};
  if (plan.quantize) QuantizeInputs(pass);
  ProjectInputs(pass);
  if (math.transforms_heads()) NormAndRotateHeads(pass);
  Attend(pass);
  ProjectOutput(pass);
}

}  // namespace edgeattn
