// Per-target attention core (flash-style online softmax over key tiles).
//
// For a block of R query rows (R = the tile kernel's row count) and each tile of up to 256 keys:
//   S = (Q * scale) K_tile^T        tile kernel, B = key panels (GEMM weight layout)
//   m' = max(m, rowmax S); P = exp(S - m'); l = l exp(m - m') + rowsum P; O = O exp(m - m')
//   O += P V_tile                   tile kernel, B = values
// and finally out = O / l, stored straight into the head's columns of the concat buffer.

#if defined(EDGEATTN_SIMD_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_ATTENTION_INL_H_
#undef EDGEATTN_SIMD_ATTENTION_INL_H_
#else
#define EDGEATTN_SIMD_ATTENTION_INL_H_
#endif

#include <math.h>
#include <stddef.h>

#include <limits>

#include "simd/attention.h"
#include "simd/gemm_f32.h"
#include "simd/concat-inl.h"
#include "simd/softmax-inl.h"
#include "simd/tile_f32-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

HWY_INLINE void AttentionHeadF32Impl(const AttentionHeadArgs& args, size_t q_begin,
                                     size_t q_end, float* HWY_RESTRICT scratch) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr size_t kMaxRows = kAttentionMaxBlockRows;
  const size_t dk = args.dk;
  const size_t ldv = AttentionValuesStride(dk);
  const size_t rows_per_block = HWY_MIN(MaxTileShape().rows, kMaxRows);

  // Scratch layout; every part starts on a 64-byte boundary (AttentionScratchSize).
  const size_t ldq_block = hwy::RoundUpTo(dk, 16);
  float* HWY_RESTRICT q_block = scratch;                            // kMaxRows x ldq_block
  float* HWY_RESTRICT scores = q_block + kMaxRows * ldq_block;       // kMaxRows x key tile
  float* HWY_RESTRICT acc = scores + kMaxRows * kAttentionKeyTile;   // kMaxRows x ldv
  float row_max[kMaxRows];
  float row_sum[kMaxRows];
  bool row_bad[kMaxRows];

  for (size_t i0 = q_begin; i0 < q_end; i0 += rows_per_block) {
    const size_t rows = HWY_MIN(rows_per_block, q_end - i0);
    for (size_t r = 0; r < rows; ++r) {
      // Folding the scale into Q costs dk multiplies per row instead of lk.
      StoreRowScaledF32(args.q + (i0 + r) * args.ldq, dk, args.scale, q_block + r * ldq_block);
      FillRowF32(acc + r * ldv, ldv, 0.0f);
      row_max[r] = -kInf;
      row_sum[r] = 0.0f;
      row_bad[r] = false;
    }
    for (size_t t0 = 0; t0 < args.lk; t0 += kAttentionKeyTile) {
      const size_t keys = HWY_MIN(kAttentionKeyTile, args.lk - t0);
      for (size_t p0 = 0; p0 < keys; p0 += kGemmPanelWidth) {
        const float* panel = args.keys + (t0 + p0) * dk;  // panel (t0 + p0) / 64 of 64 x dk
        MatMulTiles(q_block, ldq_block, rows, panel, kGemmPanelWidth, dk,
                    HWY_MIN(kGemmPanelWidth, keys - p0), TileInit::kZero, nullptr, scores + p0,
                    kAttentionKeyTile);
      }
      for (size_t r = 0; r < rows; ++r) {
        float* HWY_RESTRICT p = scores + r * kAttentionKeyTile;
        bool has_nan = false;
        const float new_max = HWY_MAX(row_max[r], RowMaxF32(p, keys, &has_nan));
        row_bad[r] = row_bad[r] || has_nan || new_max == kInf;
        if (new_max == -kInf || row_bad[r]) {
          // Nothing but -inf so far (all masked), or already poisoned: contribute nothing.
          FillRowF32(p, keys, 0.0f);
          continue;
        }
        const float correction = expf(row_max[r] - new_max);
        row_sum[r] = row_sum[r] * correction + ExpShiftSumF32(p, keys, 1.0f, new_max);
        if (correction != 1.0f) ScaleRowF32(acc + r * ldv, dk, correction);
        row_max[r] = new_max;
      }
      MatMulTiles(scores, kAttentionKeyTile, rows, args.values + t0 * ldv, ldv, keys, dk,
                  TileInit::kAccumulate, nullptr, acc, ldv);
    }
    for (size_t r = 0; r < rows; ++r) {
      float* out = args.out + (i0 + r) * args.ldo;
      if (row_bad[r]) {
        FillRowF32(out, dk, std::numeric_limits<float>::quiet_NaN());
      } else if (row_sum[r] == 0.0f) {
        FillRowF32(out, dk, 0.0f);  // every key masked: defined as zeros
      } else {
        StoreRowScaledF32(acc + r * ldv, dk, 1.0f / row_sum[r], out);
      }
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_ATTENTION_INL_H_
