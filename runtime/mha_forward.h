// The forward pass: projections (fp32 or int8), per-head attention core, output projection.
#ifndef EDGEATTN_RUNTIME_MHA_FORWARD_H_
#define EDGEATTN_RUNTIME_MHA_FORWARD_H_

#include <cstddef>

#include "edgeattn/executor.hpp"
#include "runtime/projection_weights.h"
#include "runtime/workspace.h"

namespace edgeattn {

struct MhaShape {
  std::size_t batch;
  std::size_t lq;
  std::size_t lk;
  std::size_t d_model;
  std::size_t heads;
};

// xq [batch, lq, d], xk and xv [batch, lk, d] -> y [batch, lq, d]. Shapes already validated.
// y may alias xq: every input is read before y is first written.
void MhaForward(const MhaProjections& weights, const MhaShape& shape, const float* xq,
                const float* xk, const float* xv, float* y, Executor& executor,
                Workspace& workspace);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_MHA_FORWARD_H_
