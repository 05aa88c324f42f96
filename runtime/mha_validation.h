// Argument checks for the public API. Each throws edgeattn::Error naming the argument, what
// was expected and what came.
#ifndef EDGEATTN_RUNTIME_MHA_VALIDATION_H_
#define EDGEATTN_RUNTIME_MHA_VALIDATION_H_

#include "edgeattn/edgeattn.hpp"
#include "runtime/mha_forward.h"

namespace edgeattn {

void ValidateConfig(const Config& config);
void ValidateWeights(const Config& config, const WeightsView& weights);
// The 1-D weights alone (biases, sinks, Q/K norm weights): for a layer whose projection
// matrices are held in 16 bits, checked where the file was read.
void ValidateVectorWeights(const Config& config, const WeightsView& weights);

// Every value of span finite, else an error naming the first that is not (name[i]).
void CheckFinite(const char* name, const FloatSpan& span);

// num_kv_heads resolved (0 = num_heads), and the width of the key/value projections.
std::size_t KvHeads(const Config& config);
std::size_t KvDim(const Config& config);

// The three input projections and the output projection of validated weights, whichever
// layout they came in (biases null when absent).
struct ProjectionWeights {
  const float *q, *k, *v, *out;
  const float *q_bias, *k_bias, *v_bias, *out_bias;
};
ProjectionWeights SplitProjections(const Config& config, const WeightsView& weights);

// An optional lengths array (null data: absent, returns null) of `batch` values in [0, length].
const std::size_t* CheckLengths(const char* name, const Span<const std::size_t>& lengths,
                                std::size_t batch, std::size_t length);

// True when the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool Overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes);

// Checks a [batch, length, d_model] tensor argument named `name`.
void ValidateTensor(const char* name, const ConstTensor& t, std::size_t d_model);
void ValidateTensor(const char* name, const Tensor& t, std::size_t d_model);

// Checks the forward call's tensors and options against the configuration; returns the shape
// and the options resolved for MhaForward.
MhaShape ValidateForward(const Config& config, const ConstTensor& query, const ConstTensor& key,
                         const ConstTensor& value, const Tensor& out,
                         const ForwardOptions& options, MhaOptions* resolved);
MhaOptions ResolveOptions(const MhaShape& shape, const ForwardOptions& options);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_MHA_VALIDATION_H_
