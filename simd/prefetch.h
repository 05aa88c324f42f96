// Software prefetches of float rows, for the kernels' accesses the hardware prefetchers miss:
// rows far apart (one head's row of a long sequence) and output tiles written once, at a tile's
// end, into memory beyond the caches.
#ifndef EDGEATTN_SIMD_PREFETCH_H_
#define EDGEATTN_SIMD_PREFETCH_H_

#include <stddef.h>

#include "hwy/base.h"

namespace edgeattn {
namespace simd {

inline constexpr size_t kCacheLineFloats = 64 / sizeof(float);

// HWY_INLINE (always inlined) throughout: GCC takes a function whose only statements are
// prefetches for one without side effects and deletes its calls.

// Asks for every cache line of row[0, n), to be read: into L1 (kLocality 3) or L2 (2).
template <int kLocality>
HWY_INLINE void PrefetchF32Row(const float* row, size_t n) {
  for (size_t c = 0; c < n; c += kCacheLineFloats) __builtin_prefetch(row + c, 0, kLocality);
}

// Asks for the lines of rows [0, rows) x columns [0, n) of c (rows ldc apart) into L1, to be
// written. A tile calls it before its products: its stores at the end then find their lines
// instead of each waiting on memory for one (a long sequence's projections write megabytes of
// rows beyond L2, a tile's rows a row stride apart, which the hardware prefetchers do not follow).
HWY_INLINE void PrefetchRowsForWriting(const float* c, size_t ldc, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < n; j += kCacheLineFloats) __builtin_prefetch(c + r * ldc + j, 1, 3);
  }
}

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_PREFETCH_H_
