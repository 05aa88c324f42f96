// Software prefetches for the kernels' accesses that the hardware prefetchers miss: rows far
// apart (one head's row of a long sequence) and output tiles written once, at a tile's end, into
// memory beyond the caches.
#ifndef EDGEATTN_SIMD_PREFETCH_H_
#define EDGEATTN_SIMD_PREFETCH_H_

#include <stddef.h>
#include <stdint.h>

#include "hwy/base.h"

namespace edgeattn {
namespace simd {

inline constexpr size_t kCacheLineBytes = 64;

// HWY_INLINE (always inlined) throughout: GCC takes a function whose only statements are
// prefetches for one without side effects and deletes its calls.

// Asks for every cache line of row[0, n), to be read: into L1 (kLocality 3) or L2 (2).
template <int kLocality>
HWY_INLINE void PrefetchF32Row(const float* row, size_t n) {
  for (size_t c = 0; c < n; c += kCacheLineBytes / sizeof(float)) {
    __builtin_prefetch(row + c, 0, kLocality);
  }
}

// Asks for the lines of rows [0, rows) x columns [0, n) of c (rows ldc apart) into L1, to be
// written. A tile calls it before its products: its stores at the end then find their
// lines instead of each waiting on memory for one (a long sequence's projections write
// megabytes of rows beyond L2, a tile's rows a row stride apart, which the hardware prefetchers
// do not follow). On x86 this is `prefetcht0` (Highway's targets leave out PRFCHW's
// `prefetchw`, which measured the same); aarch64 has a store hint (`prfm pstl1keep`).
HWY_INLINE void PrefetchF32RowsForWriting(float* c, size_t ldc, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; ++r) {
    // Every line the row's n floats touch, also where the row starts inside a line.
    const uintptr_t begin = reinterpret_cast<uintptr_t>(c + r * ldc);
    const uintptr_t end = reinterpret_cast<uintptr_t>(c + r * ldc + n);
    for (uintptr_t line = begin / kCacheLineBytes * kCacheLineBytes; line < end;
         line += kCacheLineBytes) {
      __builtin_prefetch(reinterpret_cast<const void*>(line), 1, 3);
    }
  }
}

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_PREFETCH_H_
