// The attention core that computes in bf16 dot products, bf16kv_bf16dot_6x4v: keys and values
// stored as bf16 (KvType::kBf16, as a bf16 KV cache's), Q K^T and P V on AVX512-BF16 vdpbf16ps,
// listed where the Highway target has AVX-512 and CPUID reports AVX512-BF16.
//
// Arithmetic (what the tests model):
//   - each query row is scaled in fp32 by scale * log2(e) (the base-2 units of the fp32 core)
//     and rounded to bf16 (vcvtneps2bf16: nearest even, subnormals to zero);
//   - keys and values are rounded to bf16 when packed (nearest even, half_float.h);
//   - a score is the fp32 sum of exact bf16 x bf16 products, two per vdpbf16ps step, in
//     channel order (subnormal inputs read as zero);
//   - softcap, masks, sink and the online softmax statistics (row maxima, sums of
//     exponentials) are the fp32 core's (softmax-inl.h), on those scores;
//   - the probabilities of a key tile, 2^(s - running max) in fp32, are rounded to bf16 for
//     P V, accumulated in fp32 by vdpbf16ps two keys at a time; the row's sum of exponentials
//     is taken from the fp32 probabilities, and rescaling and the final division are fp32;
//   - attention weights (need_weights) are the fp32 probabilities 2^(s - max) / sum of the
//     bf16 scores, as the fp32 core computes them from its scores.
//
// Layouts (a position's bytes lie where they lie whatever the buffer's size, as a KV cache's
// Truncate and Reorder need):
//   keys: panels of 64 positions, each ceil(dk / 2) rows of [64 positions x 2 channels] bf16
//       (channels 2i and 2i + 1 of one key side by side: one vdpbf16ps lane); an odd dk's last
//       pair and the lanes past the last position are zero.
//   values: rows of position pairs (2t, 2t + 1), each RoundUp(dk, 16) channels x 2 bf16
//       (channel c of the two positions side by side); channels past dk, and the odd half of the
//       last row when the positions are odd in number, are zero.
#ifndef EDGEATTN_SIMD_ATTENTION_BF16DOT_H_
#define EDGEATTN_SIMD_ATTENTION_BF16DOT_H_

#include <stddef.h>

#include <vector>

#include "simd/attention.h"

namespace edgeattn {
namespace simd {

// The bf16 dot-product kernels of the dispatched target this CPU runs (attention.cc lists them
// after the widening bf16 kernel, to be forced by name where they are not the faster).
std::vector<const AttentionKernel*> Bf16DotAttentionKernels();

// Positions per key panel and value channels per whole vector.
inline constexpr size_t kBf16DotKeyPanel = 64;
inline constexpr size_t kBf16DotValueAlign = 16;

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_BF16DOT_H_
