// Loads and stores of the first `count` lanes of a vector, touching no memory past them.
// Highway 1.1+ has LoadNOr/StoreN for this. 1.0.3 has neither, and its MaskedLoad/BlendedStore
// may access whole vectors: past the end of a buffer, or over columns another thread is writing;
// there the tails (short and rare) go through a small aligned buffer. The buffer holds the
// target's widest vector: 1.0.3's MaxLanes scales a fractional SVE descriptor's cap a second
// time (a quarter vector of 4 int8 lanes: 1), below the lanes that Store writes.

#if defined(EDGEATTN_SIMD_PARTIAL_VECTOR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_PARTIAL_VECTOR_INL_H_
#undef EDGEATTN_SIMD_PARTIAL_VECTOR_INL_H_
#else
#define EDGEATTN_SIMD_PARTIAL_VECTOR_INL_H_
#endif

#include <stddef.h>
#include <string.h>

#include "hwy/highway.h"
#include "simd/highway_compat.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// p[0, count) in the first lanes, `fill` after; count <= Lanes(d).
template <class D>
HWY_INLINE hn::VFromD<D> LoadPartial(D d, const hn::TFromD<D>* HWY_RESTRICT p, size_t count,
                                     hn::TFromD<D> fill = hn::TFromD<D>()) {
  if (count >= hn::Lanes(d)) return hn::LoadU(d, p);
#if EDGEATTN_HWY_HAS_LOAD_STORE_N
  return hn::LoadNOr(hn::Set(d, fill), d, p, count);
#else
  HWY_ALIGN hn::TFromD<D> buf[HWY_MAX_BYTES / sizeof(hn::TFromD<D>)];
  hn::Store(hn::Set(d, fill), d, buf);
  if (count > 0) memcpy(buf, p, count * sizeof(hn::TFromD<D>));
  return hn::Load(d, buf);
#endif
}

// Writes the first min(count, Lanes(d)) lanes of v to p.
template <class D>
HWY_INLINE void StorePartial(D d, hn::VFromD<D> v, hn::TFromD<D>* HWY_RESTRICT p, size_t count) {
  if (count >= hn::Lanes(d)) {
    hn::StoreU(v, d, p);
    return;
  }
#if EDGEATTN_HWY_HAS_LOAD_STORE_N
  hn::StoreN(v, d, p, count);
#else
  HWY_ALIGN hn::TFromD<D> buf[HWY_MAX_BYTES / sizeof(hn::TFromD<D>)];
  hn::Store(v, d, buf);
  if (count > 0) memcpy(p, buf, count * sizeof(hn::TFromD<D>));
#endif
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_PARTIAL_VECTOR_INL_H_
