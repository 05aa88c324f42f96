// Attention-core kernels on compact keys and values (a KV cache's bf16, fp16 or int8 storage),
// registered beside the fp32 kernel (attention.h) and chosen by the cache's format:
//
//   bf16kv_f32_<tile>, f16kv_f32_<tile>   every target. The fp32 kernel's layout with 16-bit
//       elements (64-key panels of dk rows; value rows of dk and a zeroed vector tail); keys and
//       values widen to fp32 in registers, exactly, inside the fp32 tile kernel: the fp32
//       arithmetic on the rounded keys and values.
//   i8kv_i8dot_vnni (AVX512-VNNI targets), i8kv_i8dot_neondot (NEON targets built with g++,
//       where the CPU has the Armv8.2 dot product), i8kv_i8dot_i32 (every target). Keys and
//       values are int8 with one fp32 scale per position and head (max |x| / 127, rounded to
//       nearest even). Keys are rotated before they are quantized: q.k = (H q).(H k) / b for the
//       Walsh-Hadamard matrix H of blocks of b channels (the rotation below), which spreads an
//       outlier channel over its block, so that it no longer sets every channel's step
//       (QuaRot's incoherence; docs/precision.md has the measurements). Each query row is scaled,
//       rotated and quantized the same way on every call, 1 / b folded into its scale; Q K^T is an
//       exact integer dot product (vpdpbusd, sdot, or int32 multiply-adds), times the two scales.
//       P V is an integer dot product too: each value's scale is folded into its probability,
//       a row's products in a key tile are rounded to int16 with the tile's own step (largest /
//       kI8ProbabilityMax), and the int16 products meet the int8 values in int32 sums over pairs
//       of positions (vpdpwssd, vpmaddwd, smlal; sdot on two pairs zipped), then one fp32
//       multiply-add per channel and tile (kv_int8_values-inl.h). Softmax statistics and
//       accumulation are fp32 throughout, as in the fp32 kernel. The int8 kernels of one target
//       give bit-identical results.
//
// Layouts (a position's bytes lie where they lie whatever the buffer's size, as a KV cache's
// Truncate and Reorder need):
//   int8 keys: panels of 64 positions: ceil(dk / 4) groups of [64 positions x 4 channels] bytes
//       holding k + kI8KeyOffset (the operand of the target's dot product), then the 64
//       positions' fp32 scales.
//   int8 values: panels of 64 positions: 32 pair rows of RoundUp(dk, 16) channels x 2 bytes
//       (channel c of positions 2u and 2u + 1 side by side: the int16 pairs of P V's
//       multiply-adds; zero past dk), then the 64 positions' fp32 scales.
//
// need_weights: every kernel writes the softmax probabilities when args.weights is set, with the
// fp32 kernel's rules (a second pass over the key tiles; zeros for masked keys, NaN rows).
#ifndef EDGEATTN_SIMD_ATTENTION_KV_H_
#define EDGEATTN_SIMD_ATTENTION_KV_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "hwy/base.h"  // HWY_ARCH_ARM_A64, HWY_COMPILER_GCC_ACTUAL
#include "simd/attention.h"
#include "simd/vector_width.h"

namespace edgeattn {
namespace simd {

// The compact-KV kernels of the dispatched target, best first per KvType (attention.cc lists
// them with the fp32 ones).
std::vector<const AttentionKernel*> CompactKvAttentionKernels();

// The bf16kv / f16kv values' zeroed tail past the last row: the tile kernel reads whole vectors.
inline size_t HalfValuesTail(size_t dk) {
  return (dk + kMaxFloatLanes - 1) / kMaxFloatLanes * kMaxFloatLanes - dk;
}

// Positions per int8 key panel and value elements per int8 row's multiple.
inline constexpr size_t kI8KeyPanel = 64;
inline constexpr size_t kI8ValueAlign = 16;

// Positions per int8 value panel, and its bytes: pair rows, then the scales.
inline constexpr size_t kI8ValuePanel = 64;
inline size_t I8ValuePairBytes(size_t dk) {
  return 2 * ((dk + kI8ValueAlign - 1) / kI8ValueAlign * kI8ValueAlign);
}
inline size_t I8ValueScalesOffset(size_t dk) { return kI8ValuePanel / 2 * I8ValuePairBytes(dk); }
inline size_t I8ValuePanelBytes(size_t dk) {
  return I8ValueScalesOffset(dk) + kI8ValuePanel * sizeof(float);
}

// The int8 key bytes are k + this, modulo 256: on x86 k + 128, vpdpbusd's unsigned operand (the
// row's 128 sum(q) is taken off after); elsewhere k, as sdot and smmla multiply signed bytes, with
// nothing to flip before each product. Every target of a build stores and reads the same bytes.
inline constexpr uint8_t kI8KeyOffset = HWY_ARCH_X86 ? 128 : 0;

// Whether the build has the Arm dot-product kernels' P V (kv_int8_values_sdot-inl.h): g++ for
// AArch64 on Linux (Android included, which checks the CPU), or a build for the dot product.
#if HWY_ARCH_ARM_A64 && HWY_COMPILER_GCC_ACTUAL && \
    (defined(__linux__) || defined(__ARM_FEATURE_DOTPROD))
#define EDGEATTN_KV_SDOT_BUILD 1
#else
#define EDGEATTN_KV_SDOT_BUILD 0
#endif

// The int8 P V's int16 probabilities run from 0 to this (kv_int8_values-inl.h): 2^14 - 1 in
// builds with the sdot P V, which multiplies each as two 7-bit halves in sdot's signed bytes
// (every kernel of a target rounds alike, for the same bits); 2^15 - 1 elsewhere.
inline constexpr float kI8ProbabilityMax = EDGEATTN_KV_SDOT_BUILD ? 16383.0f : 32767.0f;

// Bytes of lk positions' bf16 / fp16 keys and values in the layouts above (one head).
size_t HalfKeysBytes(size_t lk, size_t dk);
size_t HalfValuesBytes(size_t lk, size_t dk);

// Bytes of lk positions' int8 keys and values in the layouts above (one head).
size_t I8KeysBytes(size_t lk, size_t dk);
size_t I8ValuesBytes(size_t lk, size_t dk);

// The int8 rounding every kernel and pack share (kv_int8_rows-inl.h computes it on each target):
// scale = max |x| / 127 over the row's n values, and q[i] = x[i] * (127 / max |x|) rounded to
// nearest even. A row whose max |x| is below kMinI8RowMax (all zeros, or so small that 127 / max
// would overflow) is zeros of scale 0. A non-finite value makes the scale NaN and every q zero,
// so that whatever reads the row gives NaN, as float keys would.
inline constexpr float kMinI8RowMax = 0x1p-120f;
//
// The int8 keys' rotation: the Walsh-Hadamard transform (Sylvester's +-1 matrix, unnormalised)
// on each block of I8RotationBlock(n) channels, by the fast butterflies level by level (level
// half = 1, 2, 4 ... maps (a, c) at channels j, j + half to (a + c, a - c); one rounding per
// add, the same on every target). The block is the largest power of two dividing n, at most
// kMaxI8RotationBlock; 1 (no rotation) for odd n. A power of two, so that folding 1 / block into
// a scale is exact.
inline constexpr size_t kMaxI8RotationBlock = 128;
size_t I8RotationBlock(size_t n);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_KV_H_
