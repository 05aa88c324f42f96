// Register-blocked fp32 tile: C[rows x cols] (+)= A[rows x k] * B[k x cols].
//
// The one inner loop behind the projection GEMM (B = packed weight panels) and the attention core
// (B = transposed keys for the scores, B = values for P V). A is read one scalar at a time and
// broadcast; B is read as kVecs full vectors per k step; C lives in kRows * kVecs registers.
// B holds floats, or bf16 / fp16 values (half-precision weights and K/V) or int8 values (int8
// K/V) that each load widens to float exactly, so the arithmetic is the same fp32 arithmetic on
// the widened values.
//
// Every C element is its init value followed by one fused multiply-add per k, in increasing k
// order. No tiling choice changes that order, so results do not depend on how rows and columns
// are split between threads, and a tail tile computes exactly what a full tile would.

#if defined(EDGEATTN_SIMD_TILE_F32_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_TILE_F32_INL_H_
#undef EDGEATTN_SIMD_TILE_F32_INL_H_
#else
#define EDGEATTN_SIMD_TILE_F32_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <array>
#include <string>
#include <utility>

#include "hwy/highway.h"
#include "simd/highway_compat.h"
#include "simd/partial_vector-inl.h"
#include "simd/prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Vector tag of all tile code: at most 16 floats, so that a 64-float weight panel always holds a
// whole number of tile widths, whatever the target's vector length (SVE may be longer).
using TileTag = hn::CappedTag<float, 16>;

enum class TileInit {
  kZero,        // C = A B
  kRowVector,   // C = A B + init[col] (bias)
  kAccumulate,  // C += A B (C is read first)
};

// Largest tile this target's register file holds: kRows * kVecs accumulators, plus kVecs
// B vectors and one broadcast A value, must fit without spills. x86 before AVX-512 has 16 vector
// registers; AVX-512, NEON and SVE have 32. FMA latency is 4 cycles at up to 2 per cycle, so at
// least 8 independent accumulators keep the FMA units busy; every choice below has 12 or 24.
// Tile widths (kVecs x lanes: 4 on SCALAR, 8 on SSE4, 16 on AVX2 and NEON, up to 64 on AVX-512
// and SVE) divide the 64-float weight panel.
struct TileShape {
  size_t rows;
  size_t vecs;
};

HWY_INLINE constexpr TileShape MaxTileShape() {
#if HWY_TARGET == HWY_SCALAR
  return {4, 4};
#elif HWY_ARCH_X86 && !EDGEATTN_TARGET_HAS_AVX512
  // 16 registers: 6 x 2 = 12 accumulators + 2 B vectors + 1 broadcast.
  return {6, 2};
#else
  // 32 registers: 6 x 4 = 24 accumulators + 4 B vectors + 1 broadcast = 29. Measured on Zen 4
  // (AVX-512): 94% of the FMA peak on the bert projection, against 77-91% for 8 x 2, whose
  // loop spends one broadcast per 2 FMAs instead of per 4.
  return {6, 4};
#endif
}

// NEON (aarch64) orders the tile's k-step row by row; see TileF32. The barrier is an empty
// volatile asm, which g++'s instruction scheduler moves nothing across.
#if EDGEATTN_TARGET_IS_NEON && HWY_COMPILER_GCC  // GCC-style asm
#define EDGEATTN_TILE_ROW_PIPELINE 1
#define EDGEATTN_TILE_ORDER() asm volatile("")
#else
#define EDGEATTN_TILE_ROW_PIPELINE 0
#define EDGEATTN_TILE_ORDER() (void)0
#endif

namespace detail {

template <size_t kVecs, class V>
HWY_INLINE void StoreTileRow(TileTag d, V v0, V v1, V v2, V v3, float* HWY_RESTRICT out,
                             size_t cols) {
  // Never touch memory past `cols`: it may belong to another thread's tile.
  const size_t N = hn::Lanes(d);
  const auto rest = [&](size_t v) { return cols > v * N ? cols - v * N : 0; };
  StorePartial(d, v0, out, rest(0));
  if constexpr (kVecs > 1) StorePartial(d, v1, out + N, rest(1));
  if constexpr (kVecs > 2) StorePartial(d, v2, out + 2 * N, rest(2));
  if constexpr (kVecs > 3) StorePartial(d, v3, out + 3 * N, rest(3));
}

// Initial value of accumulator (r, v): zero outside the kRows x kVecs tile, else per `mode`.
// A template, so that each of the 32 declarations folds to one load or a zero.
template <size_t r, size_t v, size_t kRows, size_t kVecs>
HWY_INLINE hn::Vec<TileTag> StartAccumulator(TileTag d, TileInit mode,
                                             const float* HWY_RESTRICT init,
                                             const float* HWY_RESTRICT c, size_t ldc,
                                             size_t cols) {
  if constexpr (r >= kRows || v >= kVecs) {
    return hn::Zero(d);
  } else {
    const size_t N = hn::Lanes(d);
    if (mode == TileInit::kRowVector) return hn::LoadU(d, init + v * N);
    if (mode == TileInit::kZero) return hn::Zero(d);
    return LoadPartial(d, c + r * ldc + v * N, cols > v * N ? cols - v * N : 0);
  }
}

// The A value the row-ordered NEON loop reads `kAhead` values after row 0 of step k (A is read
// row by row within a step). Past the last step it reads one value past a row that is not the
// tile's last, which is the next row's memory, or else re-reads the last step: valid, unused.
template <size_t kRows, size_t kAhead>
HWY_INLINE float TileA(const float* HWY_RESTRICT a, size_t lda, size_t k, size_t k_count) {
  constexpr size_t kRow = kAhead % kRows;
  constexpr size_t kStep = kAhead / kRows;
  if constexpr (kStep == 0 || (kStep == 1 && kRow + 1 < kRows)) {
    return a[kRow * lda + k + kStep];
  } else {
    return a[kRow * lda + (k + kStep < k_count ? k + kStep : k_count - 1)];
  }
}

// Lanes(d) elements of B as floats: half-precision values widen exactly.
HWY_INLINE hn::Vec<TileTag> LoadB(TileTag d, const float* HWY_RESTRICT p) {
  return hn::LoadU(d, p);
}
HWY_INLINE hn::Vec<TileTag> LoadB(TileTag d, const hwy::bfloat16_t* HWY_RESTRICT p) {
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::bfloat16_t, TileTag>(), p));
}
HWY_INLINE hn::Vec<TileTag> LoadB(TileTag d, const int8_t* HWY_RESTRICT p) {
  const hn::Rebind<int32_t, TileTag> di;
  return hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(hn::Rebind<int8_t, TileTag>(), p)));
}
HWY_INLINE hn::Vec<TileTag> LoadB(TileTag d, const hwy::float16_t* HWY_RESTRICT p) {
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2) || HWY_ARCH_ARM_A64
  // F16C's vcvtph2ps, NEON's and SVE's fcvt: exact for every value.
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::float16_t, TileTag>(), p));
#else
  // Highway 1.0.3 emulates the conversion elsewhere and reads infinity and NaN as finite
  // values; in integers: exponent and mantissa moved to float's places and scaled by 2^112
  // (exact for normal and subnormal halves), the top exponent mapped to float's.
  const hn::Rebind<int32_t, TileTag> di;
  const auto bits = hn::PromoteTo(di, hn::LoadU(hn::Rebind<uint16_t, TileTag>(),
                                                reinterpret_cast<const uint16_t*>(p)));
  const auto magnitude = hn::And(bits, hn::Set(di, 0x7FFF));
  const auto shifted = hn::ShiftLeft<13>(magnitude);
  const auto finite = hn::Mul(hn::BitCast(d, shifted), hn::Set(d, 0x1p112f));
  const auto special = hn::BitCast(d, hn::Or(shifted, hn::Set(di, 0x70000000)));
  const auto sign = hn::BitCast(d, hn::ShiftLeft<16>(hn::And(bits, hn::Set(di, 0x8000))));
  const auto is_special = hn::RebindMask(d, hn::Gt(magnitude, hn::Set(di, 0x7BFF)));
  return hn::Or(hn::IfThenElse(is_special, special, finite), sign);
#endif
}

}  // namespace detail

// TileF32's phases over its accumulators c<r><v> (row r < 8, vector v < 4): named variables,
// as SVE's sizeless vectors cannot form arrays; those outside the kRows x kVecs tile fold away.
//
// EDGEATTN_TILE_START_ALL: each accumulator's initial value, per `mode`.
#define EDGEATTN_TILE_START(r, v) \
  detail::StartAccumulator<r, v, kRows, kVecs>(d, mode, init, c, ldc, cols)
#define EDGEATTN_TILE_DECLARE(r)                                                            \
  [[maybe_unused]] V c##r##0 = EDGEATTN_TILE_START(r, 0), c##r##1 = EDGEATTN_TILE_START(r, 1), \
                     c##r##2 = EDGEATTN_TILE_START(r, 2), c##r##3 = EDGEATTN_TILE_START(r, 3)
#define EDGEATTN_TILE_START_ALL() \
  EDGEATTN_TILE_DECLARE(0);       \
  EDGEATTN_TILE_DECLARE(1);       \
  EDGEATTN_TILE_DECLARE(2);       \
  EDGEATTN_TILE_DECLARE(3);       \
  EDGEATTN_TILE_DECLARE(4);       \
  EDGEATTN_TILE_DECLARE(5);       \
  EDGEATTN_TILE_DECLARE(6);       \
  EDGEATTN_TILE_DECLARE(7)

// EDGEATTN_TILE_ROW_A(r, ar): row r's A value of step k, broadcast into ar.
#if EDGEATTN_TILE_ROW_PIPELINE
// Row by row, each row's A value loaded two rows ahead of its use, and a compiler barrier
// between rows: kRows * kVecs accumulators, kVecs B vectors and three A registers stay live
// (31 of 32 at 6 x 4). Left to itself, g++ hoists all six A loads to the top of the step,
// needs 34 registers and spills two accumulators through the stack on every step, a
// store-to-load chain that halves X1-class cores. Loading two rows (8 FMAs) ahead keeps the
// load latency off in-order cores (A55, A510), which stall on an operand that is not ready.
// Separate B loads (no ldp) issue one per cycle on the A55. A stays scalar until its row, so
// that g++ multiplies by the lane (fmla v.s[0]) instead of spending a dup.
// EDGEATTN_TILE_A_AHEAD: the first two A values, before the first step.
#define EDGEATTN_TILE_A_AHEAD()                                                          \
  float a_ahead1 = k_count != 0 ? detail::TileA<kRows, 0>(a, lda, 0, k_count) : 0.0f; \
  float a_ahead2 = k_count != 0 ? detail::TileA<kRows, 1>(a, lda, 0, k_count) : 0.0f
#define EDGEATTN_TILE_ROW_A(r, ar)                              \
  const float a_row = a_ahead1;                                 \
  a_ahead1 = a_ahead2;                                          \
  a_ahead2 = detail::TileA<kRows, r + 2>(a, lda, k, k_count);   \
  EDGEATTN_TILE_ORDER();                                        \
  const V ar = hn::Set(d, a_row);
#else
#define EDGEATTN_TILE_A_AHEAD() (void)0
#define EDGEATTN_TILE_ROW_A(r, ar) const V ar = hn::Set(d, a[r * lda + k]);
#endif

// EDGEATTN_TILE_FMA_ROWS: step k's multiply-adds, row by row.
#define EDGEATTN_TILE_ROW(r)                                            \
  if constexpr (kRows > r) {                                            \
    EDGEATTN_TILE_ROW_A(r, ar)                                          \
    c##r##0 = hn::MulAdd(ar, b0, c##r##0);                              \
    if constexpr (kVecs > 1) c##r##1 = hn::MulAdd(ar, b1, c##r##1);   \
    if constexpr (kVecs > 2) c##r##2 = hn::MulAdd(ar, b2, c##r##2);   \
    if constexpr (kVecs > 3) c##r##3 = hn::MulAdd(ar, b3, c##r##3);   \
    EDGEATTN_TILE_ORDER();                                              \
  }
#define EDGEATTN_TILE_FMA_ROWS() \
  EDGEATTN_TILE_ROW(0)           \
  EDGEATTN_TILE_ROW(1)           \
  EDGEATTN_TILE_ROW(2)           \
  EDGEATTN_TILE_ROW(3)           \
  EDGEATTN_TILE_ROW(4)           \
  EDGEATTN_TILE_ROW(5)           \
  EDGEATTN_TILE_ROW(6)           \
  EDGEATTN_TILE_ROW(7)

// EDGEATTN_TILE_STORE_ALL: the tile's rows into C.
#define EDGEATTN_TILE_STORE(r) \
  if constexpr (kRows > r)     \
    detail::StoreTileRow<kVecs>(d, c##r##0, c##r##1, c##r##2, c##r##3, c + r * ldc, cols);
#define EDGEATTN_TILE_STORE_ALL() \
  EDGEATTN_TILE_STORE(0)          \
  EDGEATTN_TILE_STORE(1)          \
  EDGEATTN_TILE_STORE(2)          \
  EDGEATTN_TILE_STORE(3)          \
  EDGEATTN_TILE_STORE(4)          \
  EDGEATTN_TILE_STORE(5)          \
  EDGEATTN_TILE_STORE(6)          \
  EDGEATTN_TILE_STORE(7)

// kRows <= 8, kVecs <= 4. `b` rows are ldb elements (float, bf16, fp16 or int8) apart and hold
// kVecs * Lanes readable values each; `cols` (<= kVecs * Lanes) of each C row are stored.
// `init` is the bias for kRowVector.
// kPrefetch (the projections' tiles on AVX-512): also prefetch `prefetch_lines` cache lines (one
// per k step) from `prefetch` into L2 (else unused), and the tile's rows of C for writing.
template <size_t kRows, size_t kVecs, class TB = float, bool kPrefetch = false>
HWY_NOINLINE void TileF32(const float* HWY_RESTRICT a, size_t lda, const TB* HWY_RESTRICT b,
                          size_t ldb, size_t k_count, TileInit mode,
                          const float* HWY_RESTRICT init, float* HWY_RESTRICT c, size_t ldc,
                          size_t cols, const uint8_t* prefetch, size_t prefetch_lines) {
  static_assert(kRows >= 1 && kRows <= 8 && kVecs >= 1 && kVecs <= 4, "tile shape");
  const TileTag d;
  using V = hn::Vec<TileTag>;
  const size_t N = hn::Lanes(d);
  if constexpr (kPrefetch) PrefetchF32RowsForWriting(c, ldc, kRows, cols);
  EDGEATTN_TILE_START_ALL();
  EDGEATTN_TILE_A_AHEAD();
  for (size_t k = 0; k < k_count; ++k) {
    if constexpr (kPrefetch) {
      // Locality 2: L2 (prefetcht1), where the next panel is read from.
      if (k < prefetch_lines) __builtin_prefetch(prefetch + k * kCacheLineBytes, 0, 2);
    }
    const TB* HWY_RESTRICT brow = b + k * ldb;
    const V b0 = detail::LoadB(d, brow);
    EDGEATTN_TILE_ORDER();
    const V b1 = kVecs > 1 ? detail::LoadB(d, brow + N) : b0;
    EDGEATTN_TILE_ORDER();
    const V b2 = kVecs > 2 ? detail::LoadB(d, brow + 2 * N) : b0;
    EDGEATTN_TILE_ORDER();
    const V b3 = kVecs > 3 ? detail::LoadB(d, brow + 3 * N) : b0;
    EDGEATTN_TILE_FMA_ROWS();
  }
  if constexpr (kPrefetch) {
    for (size_t line = k_count; line < prefetch_lines; ++line) {
      __builtin_prefetch(prefetch + line * kCacheLineBytes, 0, 2);
    }
  }
  EDGEATTN_TILE_STORE_ALL();
}

#undef EDGEATTN_TILE_START
#undef EDGEATTN_TILE_DECLARE
#undef EDGEATTN_TILE_START_ALL
#undef EDGEATTN_TILE_A_AHEAD
#undef EDGEATTN_TILE_ROW_A
#undef EDGEATTN_TILE_ROW
#undef EDGEATTN_TILE_FMA_ROWS
#undef EDGEATTN_TILE_STORE
#undef EDGEATTN_TILE_STORE_ALL

template <class TB = float>
using TileFn = void (*)(const float*, size_t, const TB*, size_t, size_t, TileInit, const float*,
                        float*, size_t, size_t, const uint8_t*, size_t);

namespace detail {
// Only the shapes MatMulTiles asks for, up to the target's largest: every instance is compiled
// for every target and B type, and they are most of the kernels' compile time.
inline constexpr size_t kTileVecs = MaxTileShape().vecs;
template <class TB, bool kPrefetch, size_t... kIdx>
constexpr auto MakeTileTable(std::index_sequence<kIdx...>) {
  // Index = (rows - 1) * kTileVecs + (vecs - 1).
  return std::array<TileFn<TB>, sizeof...(kIdx)>{
      &TileF32<kIdx / kTileVecs + 1, kIdx % kTileVecs + 1, TB, kPrefetch>...};
}
}  // namespace detail

// The tile kernel for rows in [1, MaxTileShape().rows] and vecs in [1, MaxTileShape().vecs].
template <class TB = float, bool kPrefetch = false>
HWY_INLINE TileFn<TB> GetTileFn(size_t rows, size_t vecs) {
  static constexpr auto kTable = detail::MakeTileTable<TB, kPrefetch>(
      std::make_index_sequence<MaxTileShape().rows * detail::kTileVecs>());
  return kTable[(rows - 1) * detail::kTileVecs + (vecs - 1)];
}

namespace detail {
// MatMulTiles with the tiles of one prefetch variant: each variant is a table of every tile
// shape, so a caller that never prefetches compiles only the plain one.
template <class TB, bool kPrefetch>
HWY_INLINE void MatMulTilesOf(const float* HWY_RESTRICT a, size_t lda, size_t rows,
                              const TB* HWY_RESTRICT b, size_t ldb, size_t k_count, size_t cols,
                              TileInit mode, const float* HWY_RESTRICT init, float* HWY_RESTRICT c,
                              size_t ldc, const uint8_t* prefetch, size_t prefetch_bytes) {
  const TileTag d;
  const size_t N = hn::Lanes(d);
  const TileShape shape = MaxTileShape();
  const auto tile_fn = [](size_t tile_rows, size_t vecs) {
    return GetTileFn<TB, kPrefetch>(tile_rows, vecs);
  };
  const size_t lines = prefetch_bytes / kCacheLineBytes;
  const size_t tiles =
      hwy::DivCeil(cols, shape.vecs * N) * hwy::DivCeil(rows, shape.rows);
  size_t tile = 0;
  // Lines [tile * lines / tiles, (tile + 1) * lines / tiles) go with each tile.
  const auto slice = [&](size_t t) { return t * lines / HWY_MAX(tiles, size_t{1}); };
  for (size_t col = 0; col < cols; col += shape.vecs * N) {
    const size_t tile_cols = HWY_MIN(shape.vecs * N, cols - col);
    const size_t vecs = hwy::DivCeil(tile_cols, N);
    const float* row_init = mode == TileInit::kRowVector ? init + col : init;
    const TileFn<TB> full = tile_fn(shape.rows, vecs);
    size_t row = 0;
    for (; row + shape.rows <= rows; row += shape.rows, ++tile) {
      full(a + row * lda, lda, b + col, ldb, k_count, mode, row_init, c + row * ldc + col, ldc,
           tile_cols, prefetch + slice(tile) * kCacheLineBytes, slice(tile + 1) - slice(tile));
    }
    if (row < rows) {
      tile_fn(rows - row, vecs)(
          a + row * lda, lda, b + col, ldb, k_count, mode, row_init, c + row * ldc + col, ldc,
          tile_cols, prefetch + slice(tile) * kCacheLineBytes, slice(tile + 1) - slice(tile));
      ++tile;
    }
  }
}
}  // namespace detail

// C[rows x cols] (+)= A[rows x k] * B[k x cols] for any rows and cols: full tiles of the
// target's shape, then narrower and shorter tiles for the tails. B rows must be readable up to
// cols rounded up to a whole vector.
template <class TB = float>
HWY_INLINE void MatMulTiles(const float* HWY_RESTRICT a, size_t lda, size_t rows,
                            const TB* HWY_RESTRICT b, size_t ldb, size_t k_count, size_t cols,
                            TileInit mode, const float* HWY_RESTRICT init, float* HWY_RESTRICT c,
                            size_t ldc) {
  detail::MatMulTilesOf<TB, false>(a, lda, rows, b, ldb, k_count, cols, mode, init, c, ldc, nullptr,
                                   0);
}

// MatMulTiles that also asks prefetch_bytes from `prefetch` (the projection's next weight panel;
// none: null and 0) into L2, a slice per tile, one line per k step, so that its reads from L3
// or memory spread over this call's tiles instead of stalling the next call's first tile; and
// each tile's rows of C into L1 before its products, for its stores.
template <class TB = float>
HWY_INLINE void MatMulTilesPrefetching(const float* HWY_RESTRICT a, size_t lda, size_t rows,
                                       const TB* HWY_RESTRICT b, size_t ldb, size_t k_count,
                                       size_t cols, TileInit mode, const float* HWY_RESTRICT init,
                                       float* HWY_RESTRICT c, size_t ldc, const uint8_t* prefetch,
                                       size_t prefetch_bytes) {
  detail::MatMulTilesOf<TB, true>(a, lda, rows, b, ldb, k_count, cols, mode, init, c, ldc, prefetch,
                                  prefetch_bytes);
}

// "<prefix><rows>x<vectors>v": kernels name themselves after the tile they run.
HWY_INLINE std::string TileKernelName(const char* prefix) {
  return prefix + std::to_string(MaxTileShape().rows) + "x" +
         std::to_string(MaxTileShape().vecs) + "v";
}

HWY_INLINE const char* F32KernelName() {
  static const std::string name = TileKernelName("f32_");
  return name.c_str();
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#undef EDGEATTN_TILE_ROW_PIPELINE
#undef EDGEATTN_TILE_ORDER

#endif  // EDGEATTN_SIMD_TILE_F32_INL_H_
