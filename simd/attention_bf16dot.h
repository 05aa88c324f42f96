// The attention cores that compute in bf16 dot products, on keys and values stored as bf16
// (KvType::kBf16, as a bf16 KV cache's), on the x86 AVX-512 targets:
//   bf16kv_bf16amx_16x64   Q K^T and P V on AMX tiles (tdpbf16ps), where the CPU runs AMX-BF16;
//                          dk not a multiple of 32 takes the vdpbf16ps products.
//   bf16kv_bf16dot_6x4v    Q K^T and P V on AVX512-BF16 vdpbf16ps, where CPUID reports it.
// Both share the layout and the rounding below; their sums differ in order only.
//
// Arithmetic (what the tests model):
//   - each query row is scaled in fp32 by scale * log2(e) (the base-2 units of the fp32 core)
//     and rounded to bf16 (vcvtneps2bf16: nearest even, subnormals to zero);
//   - keys and values are rounded to bf16 when packed (nearest even, half_float.h);
//   - a score is the fp32 sum of exact bf16 x bf16 products (subnormal inputs read as zero);
//   - softcap, masks, sink and the online softmax statistics (row maxima, sums of
//     exponentials) are the fp32 core's (softmax-inl.h), on those scores;
//   - the probabilities of a key tile, 2^(s - running max) in fp32, are rounded to bf16 for
//     P V, accumulated in fp32; the row's sum of exponentials
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

// The AMX and the vdpbf16ps kernels of the dispatched target this CPU runs (attention.cc lists
// the AMX kernel before the widening bf16 kernel, the vdpbf16ps kernel after it).
std::vector<const AttentionKernel*> Bf16AmxAttentionKernels();
std::vector<const AttentionKernel*> Bf16DotAttentionKernels();

// Positions per key panel and value channels per whole vector.
inline constexpr size_t kBf16DotKeyPanel = 64;
inline constexpr size_t kBf16DotValueAlign = 16;

// The layout's arithmetic: key pairs (rows of a key panel), bf16 elements per key panel, value
// channels per pair row (a multiple of kBf16DotValueAlign) and bf16 elements per pair row.
inline size_t Bf16DotKeyPairs(size_t dk) { return (dk + 1) / 2; }
inline size_t Bf16DotKeyPanelElements(size_t dk) {
  return Bf16DotKeyPairs(dk) * kBf16DotKeyPanel * 2;
}
inline size_t Bf16DotValueChannels(size_t dk) {
  return (dk + kBf16DotValueAlign - 1) / kBf16DotValueAlign * kBf16DotValueAlign;
}
inline size_t Bf16DotValuePairRowElements(size_t dk) { return 2 * Bf16DotValueChannels(dk); }

// Bytes of lk positions' keys and values in the layouts above (one head).
size_t Bf16DotKeysBytes(size_t lk, size_t dk);
size_t Bf16DotValuesBytes(size_t lk, size_t dk);

// Query rows per block of the AMX kernel (a tile's rows).
inline constexpr size_t kBf16AmxRows = 16;

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_BF16DOT_H_
