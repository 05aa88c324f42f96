// Per-target row operations of the int8 K/V format (attention_kv.h): the Walsh-Hadamard rotation
// of keys and queries, a row's scale and its rounding to int8, and the packing of one key or
// value into the format's layout (kv_int8_pack-inl.h packs a vector of keys, and pairs of
// values, at once). Each computes the bits the format's contract fixes, the same on every target
// (the tests compare every target with a scalar model bit for bit), in vectors: a cache appends
// a row per decoding step and a prefill packs every key and value.

#if defined(EDGEATTN_SIMD_KV_INT8_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_KV_INT8_ROWS_INL_H_
#undef EDGEATTN_SIMD_KV_INT8_ROWS_INL_H_
#else
#define EDGEATTN_SIMD_KV_INT8_ROWS_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <limits>

#include "hwy/highway.h"
#include "simd/attention_kv.h"
#include "simd/panel_tails-inl.h"
#include "simd/partial_vector-inl.h"
#include "simd/quantize-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lane i ^ half of v, for a power of two half below v's lane count: for 1 and 2 within each
// 128-bit block (one single-cycle shuffle), beyond that a lane permutation.
template <class D>
HWY_INLINE hn::Vec<D> PartnerLanes(D d, hn::Vec<D> v, size_t half) {
#if HWY_TARGET == HWY_SCALAR
  (void)d;
  (void)half;
  return v;  // one lane: no level runs in a vector
#else
  if (half == 1) return hn::Shuffle2301(v);
  if (half == 2) return hn::Shuffle1032(v);
  const hn::RebindToSigned<D> di;
  const auto partner = hn::Xor(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(half)));
  return hn::TableLookupLanes(v, hn::IndicesFromVec(d, partner));
#endif
}

// x[0, n) rotated per block of `block` channels (a power of two dividing n) by the contract's
// butterflies: level half = 1, 2, 4 ... maps (a, c) at channels j, j + half to (a + c, a - c).
// Levels below the vector's width pair lanes of one vector (lane i with lane i ^ half), the others
// whole vectors. Each level reads only the one before it, so running one vector's in-vector levels
// before the next vector's gives the bits of the level-by-level order.
HWY_INLINE void RotateI8Blocks(float* HWY_RESTRICT x, size_t n, size_t block) {
  const QuantTag d;
  const hn::RebindToSigned<QuantTag> di;
  const size_t N = hn::Lanes(d);  // a power of two, as SVE's vector lengths are
  const size_t in_vector = HWY_MIN(N, block);
  const auto lanes = hn::Iota(di, 0);
  // v's lane times +1 where it is the lower of its pair (a) and -1 where the upper (c), plus its
  // partner's: a + c and -c + a, one rounding each, the bits of Add and Sub.
  const auto butterfly = [&](hn::Vec<QuantTag> v, size_t half) HWY_ATTR {
    const auto upper =
        hn::RebindMask(d, hn::TestBit(lanes, hn::Set(di, static_cast<int32_t>(half))));
    const auto sign = hn::IfThenElse(upper, hn::Set(d, -1.0f), hn::Set(d, 1.0f));
    return hn::MulAdd(v, sign, PartnerLanes(d, v, half));
  };
  // Two vectors at a time: each level waits on the one before, so two chains keep the pipes fed.
  for (size_t i = 0; in_vector > 1 && i < n; i += 2 * N) {
    float* HWY_RESTRICT x1 = x + HWY_MIN(n, i + N);  // the second vector, empty past n
    auto v0 = LoadPartial(d, x + i, n - i);
    auto v1 = LoadPartial(d, x1, n - HWY_MIN(n, i + N));
    for (size_t half = 1; half < in_vector; half *= 2) {
      v0 = butterfly(v0, half);
      v1 = butterfly(v1, half);
    }
    StorePartial(d, v0, x + i, n - i);
    StorePartial(d, v1, x1, n - HWY_MIN(n, i + N));
  }
  for (size_t half = HWY_MAX(N, size_t{1}); half < block; half *= 2) {
    for (size_t i = 0; i < n; i += 2 * half) {
      for (size_t j = i; j < i + half; j += N) {
        const auto a = hn::LoadU(d, x + j);
        const auto c = hn::LoadU(d, x + j + half);
        hn::StoreU(hn::Add(a, c), d, x + j);
        hn::StoreU(hn::Sub(a, c), d, x + j + half);
      }
    }
  }
}

// The contract's scale of a row whose largest |x| is max (NaN: a value was not finite), and the
// factor that rounds the row to int8 (zero for a NaN row and a row below kMinI8RowMax, whose
// bytes are zeros).
struct I8RowScale {
  float scale;
  float inverse;
};
HWY_INLINE I8RowScale I8RowScaleOfMax(float max) {
  if (max != max) return {max, 0.0f};
  if (max < kMinI8RowMax) return {0.0f, 0.0f};
  return {max / 127.0f, 127.0f / max};
}

// max(max, the largest |x| of x[0, n)), NaN if either is NaN.
HWY_INLINE float CombineAbsMax(float max, const float* HWY_RESTRICT x, size_t n) {
  const float block_max = BlockAbsMax(x, n, nullptr);
  return max != max || block_max != block_max ? std::numeric_limits<float>::quiet_NaN()
                                              : HWY_MAX(max, block_max);
}

// q[0, n) = x * s.inverse rounded to nearest even (zeros for a zero factor), each byte xor-ed
// with `to_stored`.
HWY_INLINE void RoundRowToI8(const float* HWY_RESTRICT x, size_t n, const I8RowScale& s,
                             int8_t to_stored, int8_t* HWY_RESTRICT q) {
  if (s.inverse == 0.0f) {
    memset(q, to_stored, n);
    return;
  }
  QuantizeBlock(x, n, s.inverse, to_stored, q);
}

// The contract's rounding of x[0, n) into q[0, n); returns the row's scale.
HWY_INLINE float QuantizeI8Row(const float* HWY_RESTRICT x, size_t n, int8_t* HWY_RESTRICT q) {
  const I8RowScale s = I8RowScaleOfMax(CombineAbsMax(0.0f, x, n));
  RoundRowToI8(x, n, s, 0, q);
  return s.scale;
}

// The contract's rotation of a row of n channels, in place.
HWY_INLINE void RotateI8Row(float* HWY_RESTRICT x, size_t n) {
  RotateI8Blocks(x, n, I8RotationBlock(n));
}

// A query row for the int8 kernels, in place: rotated as the keys are, then rounded into
// q8[0, n) with the row's scale, which it returns.
HWY_INLINE float RotateAndQuantizeRow(float* HWY_RESTRICT x, size_t n, int8_t* HWY_RESTRICT q8) {
  RotateI8Row(x, n);
  return QuantizeI8Row(x, n, q8);
}

// The int8 key layout (attention_kv.h): groups of 4 channels, each group kI8KeyGroupBytes of the
// panel's 64 keys, then the keys' scales.
inline constexpr size_t kI8KeyGroupBytes = kI8KeyPanel * 4;
HWY_INLINE size_t I8Groups(size_t dk) { return (dk + 3) / 4; }
HWY_INLINE size_t I8PanelBytes(size_t dk) { return (I8Groups(dk) + 1) * kI8KeyGroupBytes; }

// Keys go through the rotation in chunks of whole blocks that fit a stack buffer.
HWY_INLINE size_t I8KeyChunk(size_t dk, size_t c) { return HWY_MIN(kMaxI8RotationBlock, dk - c); }

// Key `lane` of a panel: the key rotated per block and rounded with the rotated row's scale;
// channel c at byte c % 4 of the lane's word in group c / 4, + kI8KeyOffset; the scale after the
// groups. A key of more than one chunk is rotated twice (scale, then bytes) rather than kept in a
// dk-long copy; one of a single chunk (dk <= 128) keeps its rotation.
HWY_INLINE void PackI8Key(const float* HWY_RESTRICT k, size_t dk, size_t lane,
                          uint8_t* HWY_RESTRICT panel) {
  const size_t block = I8RotationBlock(dk);
  HWY_ALIGN float rotated[kMaxI8RotationBlock];
  float max = 0.0f;
  for (size_t c = 0; c < dk; c += kMaxI8RotationBlock) {
    const size_t n = I8KeyChunk(dk, c);
    memcpy(rotated, k + c, n * sizeof(float));
    RotateI8Blocks(rotated, n, block);
    max = CombineAbsMax(max, rotated, n);
  }
  const I8RowScale s = I8RowScaleOfMax(max);
  for (size_t c = 0; c < dk; c += kMaxI8RotationBlock) {
    const size_t n = I8KeyChunk(dk, c);
    if (dk > kMaxI8RotationBlock) {
      memcpy(rotated, k + c, n * sizeof(float));
      RotateI8Blocks(rotated, n, block);
    }
    int8_t bytes[kMaxI8RotationBlock + 3];
    RoundRowToI8(rotated, n, s, static_cast<int8_t>(kI8KeyOffset), bytes);
    memset(bytes + n, kI8KeyOffset, 3);  // channels past dk in the last group: zeros
    for (size_t g = 0; g < n; g += 4) {
      memcpy(panel + (c + g) / 4 * kI8KeyGroupBytes + lane * 4, bytes + g, 4);
    }
  }
  memcpy(panel + I8Groups(dk) * kI8KeyGroupBytes + lane * 4, &s.scale, sizeof(float));
}

// Value `lane` of a panel (attention_kv.h): its dk int8, rounded with its scale, at byte
// 2c + lane % 2 of pair row lane / 2 (zeros past dk), and its scale; the pair's other position
// keeps its bytes.
HWY_INLINE void PackI8Value(const float* HWY_RESTRICT v, size_t dk, size_t lane,
                            uint8_t* HWY_RESTRICT panel) {
  // A channel's two bytes as one little-endian 16-bit lane: this position's byte goes into the
  // half `lane % 2`, the partner's half is kept, 8 channels a vector.
  const hn::CappedTag<uint8_t, 8> d8;
  const hn::Rebind<uint16_t, decltype(d8)> d16;
  const size_t padded = I8ValuePairBytes(dk) / 2;
  uint16_t* HWY_RESTRICT pair =
      reinterpret_cast<uint16_t*>(panel + lane / 2 * I8ValuePairBytes(dk));
  const auto keep = hn::Set(d16, lane % 2 == 0 ? 0xFF00 : 0x00FF);
  const I8RowScale s = I8RowScaleOfMax(CombineAbsMax(0.0f, v, dk));
  for (size_t c0 = 0; c0 < padded; c0 += kMaxI8RotationBlock) {
    const size_t n = HWY_MIN(kMaxI8RotationBlock, padded - c0);
    const size_t channels = HWY_MIN(n, dk - HWY_MIN(dk, c0));  // past dk: the padding's zeros
    HWY_ALIGN uint8_t bytes[kMaxI8RotationBlock] = {};
    if (channels != 0) RoundRowToI8(v + c0, channels, s, 0, reinterpret_cast<int8_t*>(bytes));
    for (size_t c = 0; c < n; c += hn::Lanes(d16)) {
      auto mine = hn::PromoteTo(d16, hn::LoadU(d8, bytes + c));
      if (lane % 2 == 1) mine = hn::ShiftLeft<8>(mine);
      hn::StoreU(hn::Or(hn::And(hn::LoadU(d16, pair + c0 + c), keep), mine), d16, pair + c0 + c);
    }
  }
  memcpy(panel + I8ValueScalesOffset(dk) + lane * sizeof(float), &s.scale, sizeof(float));
}

// Lanes [lane, kI8KeyPanel) of a panel, past the last key: zeros (stored + kI8KeyOffset) of
// scale zero, score 0, never stored.
HWY_INLINE void ZeroI8KeysFrom(size_t dk, size_t lane, uint8_t* HWY_RESTRICT panel) {
  FillRowTails(panel, I8Groups(dk), kI8KeyGroupBytes, lane * 4, kI8KeyGroupBytes,
               kI8KeyOffset * 0x0101);
  FillRowTails(panel + I8Groups(dk) * kI8KeyGroupBytes, 1, kI8KeyGroupBytes, lane * 4,
               kI8KeyGroupBytes, 0);
}

// Value `lane` (odd) of a panel, past the last stored position: zero bytes of scale zero, as
// the pair's even position is multiplied with them.
HWY_INLINE void ZeroI8ValuePartner(size_t dk, size_t lane, uint8_t* HWY_RESTRICT panel) {
  uint8_t* HWY_RESTRICT pair = panel + lane / 2 * I8ValuePairBytes(dk);
  for (size_t c = 0; c < I8ValuePairBytes(dk) / 2; ++c) pair[2 * c + 1] = 0;
  memset(panel + I8ValueScalesOffset(dk) + lane * sizeof(float), 0, sizeof(float));
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_KV_INT8_ROWS_INL_H_
