// The float reference: a plain scalar multi-head attention with double accumulation, written
// to be obviously correct rather than fast. Tests, benchmarks and the CLI measure the fast
// paths' error against it.
#ifndef EDGEATTN_REFERENCE_HPP_
#define EDGEATTN_REFERENCE_HPP_

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/export.hpp"

namespace edgeattn {

// Same contract, options and checks as MultiheadAttention::Forward (a decode step is the
// matching rows of a causal forward call over the whole sequence).
EDGEATTN_API void ReferenceForward(const Config& config, const WeightsView& weights,
                                   ConstTensor query, ConstTensor key, ConstTensor value,
                                   Tensor out, const ForwardOptions& options = {});

}  // namespace edgeattn

#endif  // EDGEATTN_REFERENCE_HPP_
