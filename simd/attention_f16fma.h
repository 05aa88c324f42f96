// The attention core that computes in fp16 arithmetic, on keys and values stored as fp16
// (KvType::kF16, a fp16 KV cache's), on x86 CPUs with AVX512-FP16 (vfmadd231ph: 32 lanes a step,
// where the widening f16kv_f32 kernel runs 16 fp32 lanes):
//   f16kv_f16fma_8x64   8 query rows x 64 keys (Q K^T) or 64 channels (P V) per step.
// It reads the f16kv_f32 kernels' packed layout (attention_kv.h; the same pack and sizes), so that
// it runs on the same packed keys and values and KV cache storage.
//
// Arithmetic (what the tests model; u16 = 2^-11, the fp16 unit roundoff):
//   - each query row is scaled in fp32 by scale * log2(e) (the fp32 core's base-2 units) and
//     rounded to fp16 (nearest even); keys and values are fp16 as packed;
//   - a score is a sum over chunks of kF16ScoreChunk channels: within a chunk, fp16 fused
//     multiply-adds in channel order from zero (one fp16 rounding per channel), the chunk's sum
//     widened and added to the score in fp32. A score that is not finite then (a chunk overflowed
//     fp16's 65504, or inf / NaN data) is replaced by the fp32 sum of its exact products (fp32
//     FMAs in channel order), a query channel whose fp16 rounding overflowed taking its fp32
//     value there, so that no score overflows where the fp32 kernel's does not;
//   - softcap, masks, sink and the online softmax statistics are the fp32 core's (softmax-inl.h);
//   - the probabilities of a key tile, 2^(s - running max) in fp32, are rounded to fp16 for P V;
//     P V sums chunks of kF16ValueChunk keys in fp16 fused multiply-adds (key order, from zero),
//     each chunk's sum widened and added to the fp32 accumulator. A row whose accumulators are
//     not all finite after a key tile takes that tile's P V as fp32 sums instead (fp32 FMAs in key
//     order, added to the accumulators of before the tile). The row's sum of exponentials is
//     taken from the fp32 probabilities; rescaling and the final division are fp32;
//   - attention weights (need_weights) are the fp32 probabilities 2^(s - max) / sum of these
//     scores, as the fp32 core computes them from its scores.
// Error bound per chunk of n terms: |fp16 sum - exact| <= gamma_n sum |terms|, gamma_n = n u16 /
// (1 - n u16): 1.6 % for a score chunk of 32 channels, 3.2 % for P V's 64 keys (errors of random
// sign give about sqrt(n) u16 / 2: 0.14 %, 0.2 %). Scores carry the larger magnitudes (outlier
// channels make base-2 scores in the hundreds), so their chunks are the shorter: measured against
// float attention (docs/fp16_core.md), cosine 0.999999 (N(0, 1)) and 0.99990 (outlier channels
// x20) with 32-channel chunks; whole 64-channel fp16 sums gave 0.99954 with outliers.
#ifndef EDGEATTN_SIMD_ATTENTION_F16FMA_H_
#define EDGEATTN_SIMD_ATTENTION_F16FMA_H_

#include <stddef.h>

#include <vector>

#include "simd/attention.h"

namespace edgeattn {
namespace simd {

// The fp16-arithmetic kernels of the dispatched target this CPU runs (attention.cc lists them
// before the widening f16kv_f32 kernel: measured faster, docs/fp16_core.md).
std::vector<const AttentionKernel*> F16FmaAttentionKernels();

// Channels per fp16 chunk of a score and keys per fp16 chunk of P V (the bound above).
inline constexpr size_t kF16ScoreChunk = 32;
inline constexpr size_t kF16ValueChunk = 64;

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_F16FMA_H_
