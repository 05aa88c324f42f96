// Projection kernels (C = A W^T + bias, the Linear layers of attention) as descriptors, in the
// manner of ruy's paths and XNNPACK's gemm configs: each kernel states its contract in its name
// (activation and weight types, tile, instructions), packs weights into its own layout (and
// unpacks them again), and runs on that layout. The operator chooses one per projection when it
// is built (the best this CPU runs, or one forced by name) and keeps it with the packed weights,
// so nothing later depends on which instruction set was chosen.
//
// Names: <activations>_<weights>_<instructions>_<tile>, e.g.
//   f32_6x4v             fp32 x fp32, 6 rows x 4 vectors of accumulators
//   qd8_qc8w_vnni_4x4v   int8 activations quantized per row and block at run time (qd8) x int8
//                        weights with one scale per output channel (qc8w), AVX512-VNNI, 4 x 4
//   qd8_qc8w_amx_16x64   the same types, AMX-INT8 tiles, 16 rows x 64 features
//   qd8_qc8w_i16_1x1v    the same types, portable Highway code (int16 products), 1 x 1
//   f32_bf16w_dpbf16_6x4v  fp32 activations rounded to bf16 x bf16 weights, AVX512-BF16
//   f32_f16w_widen_6x4v  fp32 x fp16 weights widened to fp32 in registers (simd/gemm_half.h)
// docs/int8.md lists the int8 kernels with their predicates and layouts, docs/precision.md the
// bf16 and fp16 ones.
#ifndef EDGEATTN_SIMD_PROJECTION_KERNEL_H_
#define EDGEATTN_SIMD_PROJECTION_KERNEL_H_

#include <stddef.h>

#include <vector>

#include "simd/quantize.h"

namespace edgeattn {
namespace simd {

enum class ActivationType {
  kF32,   // float rows
  kQd8,   // int8 rows from QuantizeRowsI8 (one scale per row and block of k), with outliers
  kQdu8,  // the same rows, each byte stored offset to unsigned (QuantizedBytes::kOffsetUnsigned)
};

inline bool IsQuantized(ActivationType type) { return type != ActivationType::kF32; }

// How a quantized kernel's activation rows are stored.
inline QuantizedBytes QuantizedBytesOf(ActivationType type) {
  return type == ActivationType::kQdu8 ? QuantizedBytes::kOffsetUnsigned : QuantizedBytes::kSigned;
}

enum class WeightType {
  kF32,  // float
  kQc8,   // int8, symmetric, one float scale per output channel (row of W)
  kBf16,  // bfloat16 bit patterns (uint16_t)
  kF16,   // IEEE binary16 bit patterns (uint16_t)
};

// The activation rows a kernel reads: float rows (kF32) or quantized rows (kQd8, kQdu8).
struct ProjectionInput {
  const float* f32 = nullptr;  // rows of k floats, ld floats apart
  size_t ld = 0;
  QuantizedRowsView qd8{};
};

// Weights packed by a kernel, with the per-channel scales (kQc8) and the bias, each padded with
// zeros to whole panels of the kernel's panel_width.
struct PackedProjectionView {
  const void* packed;
  const float* scales;  // kQc8 only
  const float* bias;    // null: no bias
  size_t n;             // output features
  size_t k;             // input features
  size_t block;         // kQd8, kQdu8: values per activation scale (a multiple of 4)
};

struct ProjectionKernel {
  const char* name;
  ActivationType activations;
  WeightType weights;
  // Whether this CPU runs the kernel. Asked only of the dispatched Highway target's kernels, so
  // it checks the features that target does not imply (e.g. NEON's optional dot product).
  bool (*cpu_runs)();
  // Output features per panel: the unit in which work is split between threads.
  size_t panel_width;
  // Bytes of packed weights for n x k (block: values per activation scale, quantized only).
  size_t (*packed_bytes)(size_t n, size_t k, size_t block);
  // w: n rows of k weights of the kernel's weight type (float, int8 or 16-bit), row-major.
  void (*pack)(const void* w, size_t n, size_t k, size_t block, void* packed);
  // The inverse of pack: w as it was given.
  void (*unpack)(const void* packed, size_t n, size_t k, size_t block, void* w);
  // C rows [row_begin, row_end), panels [panel_begin, panel_end). Every element's arithmetic is
  // the same whatever the split, so any split between threads gives bit-identical results.
  // Only the n columns of C are written.
  void (*run)(const ProjectionInput& a, size_t row_begin, size_t row_end,
              const PackedProjectionView& w, size_t panel_begin, size_t panel_end, float* c,
              size_t ldc);
};

// For cpu_runs: kernels that need nothing beyond their Highway target.
inline bool RunsWhereItsTargetRuns() { return true; }

// The kernels for weights of `type` that this CPU runs, best first: those of the Highway target
// that dynamic dispatch chose whose cpu_runs() holds.
std::vector<const ProjectionKernel*> ProjectionKernels(WeightType type);

// The kernel of that name among ProjectionKernels(type), or null.
const ProjectionKernel* FindProjectionKernel(WeightType type, const char* name);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_PROJECTION_KERNEL_H_
