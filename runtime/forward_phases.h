// The phases of a forward call, in order; each is one parallel pass over its work items (see
// MhaForward). Every phase reads what the earlier ones wrote into the plan's buffers.
#ifndef EDGEATTN_RUNTIME_FORWARD_PHASES_H_
#define EDGEATTN_RUNTIME_FORWARD_PHASES_H_

#include "edgeattn/executor.hpp"
#include "runtime/forward_plan.h"

namespace edgeattn {

struct ForwardPass {
  const ForwardCall& call;
  const ForwardPlan& plan;
  const ForwardBuffers& buffers;
  Executor& executor;
};

// int8: quantizes the query, key and value rows (inputs that are the same rows, once).
void QuantizeInputs(const ForwardPass& pass);
// Q, K and V projections into the plan's q, k and v rows.
void ProjectInputs(const ForwardPass& pass);
// The query and key rows' per-head RMS norm and rotary embedding (StepMath), in place.
void NormAndRotateHeads(const ForwardPass& pass);
// Each (batch item, key/value head)'s keys and values into the attention core's packed layout,
// in the workspace or appended to the cache; the key padding mask as an additive bias.
void PackKeysValues(const ForwardPass& pass);
// The attention core per (batch item, head, block of query rows), into the concat rows (a
// decode step's query heads that share a key/value head as one call's rows); the per-head
// attention weights if asked for. int8: each block of query rows is quantized for the
// output projection by the item that finishes its last head.
void Attend(const ForwardPass& pass);
// need_weights = kAveraged: the mean of the per-head weights into the caller's buffer.
void AverageWeights(const ForwardPass& pass);
// The output projection of the concat rows into y (int8: the rows Attend quantized); the rows
// past a padded item's length are zeros.
void ProjectOutput(const ForwardPass& pass);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_FORWARD_PHASES_H_
