// The bf16 dot-product projection kernel, f32_bf16w_dpbf16_6x4v (contract: simd/gemm_half.h),
// for the x86 AVX-512 targets. Highway 1.0.3 neither emits vdpbf16ps (its bf16
// ReorderWidenMulAccumulate widens and multiplies in fp32) nor names avx512bf16 in any target
// string, so this file adds the feature for its own functions; the kernel's cpu_runs is
// CpuHasAvx512Bf16().
//
// Tile: 6 rows x 64 features (4 vectors): 24 accumulators, 4 weight vectors and a broadcast
// activation pair, as the fp32 tile on AVX-512, each vdpbf16ps doing two k steps. The tile's
// activation rows are rounded to bf16 in chunks of kBf16DotChunk values into a stack buffer.

#if defined(EDGEATTN_SIMD_GEMM_BF16_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_GEMM_BF16_DOT_INL_H_
#undef EDGEATTN_SIMD_GEMM_BF16_DOT_INL_H_
#else
#define EDGEATTN_SIMD_GEMM_BF16_DOT_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <array>
#include <utility>

#include "hwy/highway.h"
#include "simd/cpu_features.h"
#include "simd/gemm_f32.h"
#include "simd/panel_layout.h"
#include "simd/projection_kernel.h"

namespace edgeattn {
namespace simd {
// The target-independent parts of the kernel's contract (gemm_half.cc).
size_t Bf16PairPanelBytes(size_t n, size_t k, size_t block);
void PackBf16PairPanels(const void* w, size_t n, size_t k, size_t block, void* packed);
void UnpackBf16PairPanels(const void* packed, size_t n, size_t k, size_t block, void* w);
}  // namespace simd
}  // namespace edgeattn

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
#include <immintrin.h>
#define EDGEATTN_BF16_DOT 1
#else
#define EDGEATTN_BF16_DOT 0
#endif

#if EDGEATTN_BF16_DOT
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512bf16")
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

inline constexpr size_t kBf16DotRows = 6;
// Activation values rounded per chunk: 6 rows x 256 x 2 bytes = 3 KiB of stack.
inline constexpr size_t kBf16DotChunk = 256;

// Rounds `count` (<= kBf16DotChunk) values of each of `rows` rows of A to bf16 (vcvtneps2bf16:
// nearest even, subnormals to zero), zero-padded to a whole vector.
HWY_INLINE void RoundRowsToBf16(const float* HWY_RESTRICT a, size_t lda, size_t rows, size_t count,
                                uint16_t (*HWY_RESTRICT out)[kBf16DotChunk]) {
  for (size_t r = 0; r < rows; ++r) {
    const float* row = a + r * lda;
    for (size_t i = 0; i < count; i += 16) {
      const size_t rest = count - i;
      const __mmask16 mask = rest >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << rest) - 1);
      const __m512 values = _mm512_maskz_loadu_ps(mask, row + i);  // reads no lane past count
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(&out[r][i]),
                          reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(values)));
    }
  }
}

// C[kRows x cols] = A[kRows x k] W^T (+ bias) over one panel of pairs; cols <= 64.
template <size_t kRows>
HWY_NOINLINE void Bf16DotTile(const float* HWY_RESTRICT a, size_t lda,
                              const uint16_t* HWY_RESTRICT panel, size_t k,
                              const float* HWY_RESTRICT bias, float* HWY_RESTRICT c, size_t ldc,
                              size_t cols) {
  __m512 acc[kRows][4];
#pragma GCC unroll 8
  for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (size_t v = 0; v < 4; ++v) {
      acc[r][v] = bias != nullptr ? _mm512_loadu_ps(bias + 16 * v) : _mm512_setzero_ps();
    }
  }
  HWY_ALIGN uint16_t pairs[kRows][kBf16DotChunk];
  for (size_t k0 = 0; k0 < k; k0 += kBf16DotChunk) {
    const size_t count = HWY_MIN(kBf16DotChunk, k - k0);
    RoundRowsToBf16(a + k0, lda, kRows, count, pairs);
    const uint16_t* HWY_RESTRICT w = panel + (k0 / 2) * kBf16PairRowElements;
    for (size_t q = 0; q < Bf16PairRows(count); ++q, w += kBf16PairRowElements) {
      const __m512bh b0 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(w));
      const __m512bh b1 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(w + 32));
      const __m512bh b2 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(w + 64));
      const __m512bh b3 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(w + 96));
#pragma GCC unroll 8
      for (size_t r = 0; r < kRows; ++r) {
        int32_t pair;
        memcpy(&pair, &pairs[r][2 * q], sizeof(pair));
        const __m512bh ar = reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair));
        acc[r][0] = _mm512_dpbf16_ps(acc[r][0], ar, b0);
        acc[r][1] = _mm512_dpbf16_ps(acc[r][1], ar, b1);
        acc[r][2] = _mm512_dpbf16_ps(acc[r][2], ar, b2);
        acc[r][3] = _mm512_dpbf16_ps(acc[r][3], ar, b3);
      }
    }
  }
#pragma GCC unroll 8
  for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (size_t v = 0; v < 4; ++v) {
      // Masked stores write nothing past cols: the next columns may be another thread's.
      const size_t rest = cols > 16 * v ? cols - 16 * v : 0;
      const __mmask16 mask = rest >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << rest) - 1);
      _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask, acc[r][v]);
    }
  }
}

using Bf16DotTileFn = void (*)(const float*, size_t, const uint16_t*, size_t, const float*, float*,
                               size_t, size_t);

template <size_t... kIdx>
constexpr std::array<Bf16DotTileFn, sizeof...(kIdx)> MakeBf16DotTiles(
    std::index_sequence<kIdx...>) {
  return {&Bf16DotTile<kIdx + 1>...};
}

HWY_NOINLINE void RunBf16DotPanels(const ProjectionInput& a, size_t row_begin, size_t row_end,
                                   const PackedProjectionView& w, size_t panel_begin,
                                   size_t panel_end, float* HWY_RESTRICT c, size_t ldc) {
  static constexpr auto kTiles = MakeBf16DotTiles(std::make_index_sequence<kBf16DotRows>());
  const uint16_t* panels = static_cast<const uint16_t*>(w.packed);
  const size_t panel_elements = Bf16PairRows(w.k) * kBf16PairRowElements;
  for (size_t p = panel_begin; p < panel_end; ++p) {
    const size_t col = p * kGemmPanelWidth;
    const size_t cols = HWY_MIN(kGemmPanelWidth, w.n - col);
    const float* bias = w.bias != nullptr ? w.bias + col : nullptr;
    for (size_t row = row_begin; row < row_end; row += kBf16DotRows) {
      const size_t rows = HWY_MIN(kBf16DotRows, row_end - row);
      kTiles[rows - 1](a.f32 + row * a.ld, a.ld, panels + p * panel_elements, w.k, bias,
                       c + row * ldc + col, ldc, cols);
    }
  }
}

// Not inlined: its callers lack the avx512bf16 attribute.
HWY_NOINLINE const ProjectionKernel& Bf16DotKernel() {
  static const ProjectionKernel kKernel = {
      "f32_bf16w_dpbf16_6x4v", ActivationType::kF32, WeightType::kBf16,   &CpuHasAvx512Bf16,
      kGemmPanelWidth,         &Bf16PairPanelBytes,  &PackBf16PairPanels, &UnpackBf16PairPanels,
      &RunBf16DotPanels};
  return kKernel;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_POP_ATTRIBUTES
#endif  // EDGEATTN_BF16_DOT

#endif  // EDGEATTN_SIMD_GEMM_BF16_DOT_INL_H_
