// Argument checks for the public API. Each throws edgeattn::Error naming the argument, what
// was expected and what came.
#ifndef EDGEATTN_RUNTIME_MHA_VALIDATION_H_
#define EDGEATTN_RUNTIME_MHA_VALIDATION_H_

#include "edgeattn/edgeattn.hpp"
#include "runtime/mha_forward.h"

namespace edgeattn {

void ValidateConfig(const Config& config);
void ValidateWeights(const Config& config, const WeightsView& weights);
// Checks the forward call's tensors against the configuration and returns the shape.
MhaShape ValidateForward(const Config& config, const ConstTensor& query, const ConstTensor& key,
                         const ConstTensor& value, const Tensor& out);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_MHA_VALIDATION_H_
