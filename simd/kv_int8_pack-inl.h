// The int8 kernels' pack (attention_kv.h's layout): keys a vector of positions at a time, values
// a pair of positions at a time. A vector of keys is transposed so that each channel is one
// vector of positions: the rotation's butterflies become whole-vector adds and subtracts, each
// key's largest |x| a vertical max, its scale one division for all, and four channels' bytes one
// vector of the panel's words, stored whole. Every step is the per-key code's operation on each
// lane, so the bytes are those of PackI8Key and PackI8Value (kv_int8_rows-inl.h), which keys
// outside a whole vector and values outside a whole pair take.

#if defined(EDGEATTN_SIMD_KV_INT8_PACK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_KV_INT8_PACK_INL_H_
#undef EDGEATTN_SIMD_KV_INT8_PACK_INL_H_
#else
#define EDGEATTN_SIMD_KV_INT8_PACK_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <limits>

#include "hwy/highway.h"
#include "simd/attention_kv.h"
#include "simd/kv_int8_rows-inl.h"
#include "simd/partial_vector-inl.h"
#include "simd/quantize-inl.h"
#include "simd/transpose_words-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A float's bits without its sign, and those of infinity: |x|'s bits above kInfBits are NaN.
inline constexpr int32_t kAbsBits = 0x7FFFFFFF;
inline constexpr int32_t kInfBits = 0x7F800000;

// The 32-bit lanes of v stored as bytes from p (unaligned): the panels are byte arrays.
// HWY_SCALAR's single lane has no byte view, so it is copied.
template <class DI>
HWY_INLINE void StoreLaneBytes(DI /* tag */, hn::Vec<DI> v, uint8_t* HWY_RESTRICT p) {
#if HWY_TARGET == HWY_SCALAR
  const auto lane = hn::GetLane(v);
  memcpy(p, &lane, sizeof(lane));
#else
  const hn::Repartition<uint8_t, DI> d8;
  hn::StoreU(hn::BitCast(d8, v), d8, p);
#endif
}

// The contract's rotation (RotateI8Blocks) of n channel rows per block of `block`: level half
// maps rows (j, j + half) to (a + c, a - c), a level at a time.
template <class D>
HWY_INLINE void RotateKeyRows(D d, float* HWY_RESTRICT rows, size_t n, size_t block) {
  const size_t L = hn::Lanes(d);
  for (size_t half = 1; half < block; half *= 2) {
    for (size_t i = 0; i < n; i += 2 * half) {
      for (size_t j = i; j < i + half; ++j) {
        const auto a = hn::Load(d, rows + j * L);
        const auto c = hn::Load(d, rows + (j + half) * L);
        hn::Store(hn::Add(a, c), d, rows + j * L);
        hn::Store(hn::Sub(a, c), d, rows + (j + half) * L);
      }
    }
  }
}

// Folds channel rows [0, n) into each key's largest |x| so far, as bits: |x|'s bits order as
// its values do, past every finite value for infinity and past that for NaN, so one integer max
// (a cycle's latency) gives both the largest |x| and whether any was not finite. (Vectors pass
// by reference: SVE's are sizeless, no struct may hold them.)
template <class D>
HWY_INLINE void AddToKeyMaxBits(D d, const float* HWY_RESTRICT rows, size_t n,
                                hn::Vec<hn::RebindToSigned<D>>& max_bits) {
  const hn::RebindToSigned<D> di;
  const auto magnitude = hn::Set(di, kAbsBits);
  for (size_t c = 0; c < n; ++c) {
    const auto bits = hn::BitCast(di, hn::Load(d, rows + c * hn::Lanes(d)));
    max_bits = hn::Max(max_bits, hn::And(bits, magnitude));
  }
}

// I8RowScaleOfMax for each key: NaN and a zero factor where a value was not finite, zeros below
// kMinI8RowMax, else max / 127 and 127 / max.
template <class D>
HWY_INLINE void ScalesOfKeyMaxBits(D d, hn::Vec<hn::RebindToSigned<D>> max_bits, hn::Vec<D>& scale,
                                   hn::Vec<D>& inverse) {
  const hn::RebindToSigned<D> di;
  const auto finite = hn::RebindMask(d, hn::Lt(max_bits, hn::Set(di, kInfBits)));
  const auto max = hn::BitCast(d, max_bits);
  const auto k127 = hn::Set(d, 127.0f);
  const auto usable = hn::And(finite, hn::Ge(max, hn::Set(d, kMinI8RowMax)));
  const auto nan = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  scale = hn::IfThenElse(finite, hn::IfThenElseZero(usable, hn::Div(max, k127)), nan);
  inverse = hn::IfThenElseZero(usable, hn::Div(k127, max));
}

// Channel row x rounded with each key's factor, in int32 lanes; `zero`: the keys whose factor is
// 0, whose bytes are zeros (RoundRowToI8's zero row; their products may be NaN: 0 x inf).
template <class D>
HWY_INLINE hn::Vec<hn::RebindToSigned<D>> RoundKeyRow(D d, const float* HWY_RESTRICT x,
                                                      hn::Vec<D> inverse,
                                                      hn::Mask<hn::RebindToSigned<D>> zero) {
  return hn::IfThenZeroElse(zero, hn::NearestInt(hn::Mul(hn::Load(d, x), inverse)));
}

// Channel rows [0, n) of the keys, rounded, into the groups from `group` on of the panel's lanes
// from `lane`: channel 4g + b at byte b of a key's word, + kI8KeyOffset; channels past n zeros.
template <class D>
HWY_INLINE void StoreKeyGroups(D d, const float* HWY_RESTRICT rows, size_t n, hn::Vec<D> inverse,
                               size_t group, size_t lane, uint8_t* HWY_RESTRICT panel) {
  const hn::RebindToSigned<D> di;
  const size_t L = hn::Lanes(d);
  const auto zero = hn::RebindMask(di, hn::Eq(inverse, hn::Zero(d)));
  const auto low_byte = hn::Set(di, 0xFF);
  const auto offset = hn::Set(di, static_cast<int32_t>(kI8KeyOffset * 0x01010101u));
  for (size_t c = 0; c < n; c += 4) {
    auto word = hn::Zero(di);
    for (size_t b = 0; b < 4 && c + b < n; ++b) {
      const auto byte = hn::And(RoundKeyRow(d, rows + (c + b) * L, inverse, zero), low_byte);
      word = hn::Or(word, hn::ShiftLeftSame(byte, static_cast<int>(8 * b)));
    }
    StoreLaneBytes(di, hn::Xor(word, offset),
                   panel + (group + c / 4) * kI8KeyGroupBytes + lane * 4);
  }
}

// Keys [0, Lanes(d)) (rows ldk apart) into lanes [lane, lane + Lanes(d)) of a key panel, as
// PackI8Key packs each: rotated per block, rounded with the rotated key's scale. A key of more
// than one chunk is rotated twice (scale, then bytes), one of a single chunk keeps its rotation.
template <class D>
HWY_INLINE void PackI8KeyGroup(D d, const float* HWY_RESTRICT k, size_t ldk, size_t dk, size_t lane,
                               uint8_t* HWY_RESTRICT panel) {
  const size_t block = I8RotationBlock(dk);
  HWY_ALIGN float rows[kMaxI8RotationBlock * 16];  // TransposeTag: at most 16 lanes
  auto max_bits = hn::Zero(hn::RebindToSigned<D>());
  for (size_t c = 0; c < dk; c += kMaxI8RotationBlock) {
    const size_t n = I8KeyChunk(dk, c);
    // The chunk's channels, each a row of the Lanes(d) keys.
    TransposeColumns(d, k + c, ldk, n, rows, hn::Lanes(d));
    RotateKeyRows(d, rows, n, block);
    AddToKeyMaxBits(d, rows, n, max_bits);
  }
  auto scale = hn::Zero(d), inverse = hn::Zero(d);
  ScalesOfKeyMaxBits(d, max_bits, scale, inverse);
  for (size_t c = 0; c < dk; c += kMaxI8RotationBlock) {
    const size_t n = I8KeyChunk(dk, c);
    if (dk > kMaxI8RotationBlock) {
      TransposeColumns(d, k + c, ldk, n, rows, hn::Lanes(d));
      RotateKeyRows(d, rows, n, block);
    }
    StoreKeyGroups(d, rows, n, inverse, c / 4, lane, panel);
  }
  const hn::RebindToSigned<D> di;
  StoreLaneBytes(di, hn::BitCast(di, scale), panel + I8Groups(dk) * kI8KeyGroupBytes + lane * 4);
}

// Values of positions 2p and 2p + 1 (va, vb) into pair row p of a value panel (lane = 2p), as
// PackI8Value packs each, but both bytes of a channel's 16-bit lane at once: no read of the
// pair row, no byte buffer.
HWY_INLINE void PackI8ValuePair(const float* HWY_RESTRICT va, const float* HWY_RESTRICT vb,
                                size_t dk, size_t lane, uint8_t* HWY_RESTRICT panel) {
  const QuantTag d;
  const hn::RebindToSigned<QuantTag> di;
  const hn::Rebind<uint16_t, QuantTag> d16;
  const size_t N = hn::Lanes(d);
  const I8RowScale sa = I8RowScaleOfMax(CombineAbsMax(0.0f, va, dk));
  const I8RowScale sb = I8RowScaleOfMax(CombineAbsMax(0.0f, vb, dk));
  const auto inva = hn::Set(d, sa.inverse), invb = hn::Set(d, sb.inverse);
  // Each position's byte mask: none for a zero factor, whose row RoundRowToI8 writes as zeros
  // (its products may be NaN: 0 x inf).
  const auto bytea = hn::Set(di, sa.inverse == 0.0f ? 0 : 0xFF);
  const auto byteb = hn::Set(di, sb.inverse == 0.0f ? 0 : 0xFF);
  uint16_t* HWY_RESTRICT pair =
      reinterpret_cast<uint16_t*>(panel + lane / 2 * I8ValuePairBytes(dk));
  const size_t padded = I8ValuePairBytes(dk) / 2;  // channels, the padding's zeros included
  for (size_t c = 0; c < padded; c += N) {
    const size_t n = c < dk ? dk - c : 0;
    // Past dk nothing is read (and the pointer stays inside the row).
    const size_t from = HWY_MIN(c, dk);
    const auto qa = hn::NearestInt(hn::Mul(LoadPartial(d, va + from, HWY_MIN(n, N)), inva));
    const auto qb = hn::NearestInt(hn::Mul(LoadPartial(d, vb + from, HWY_MIN(n, N)), invb));
    const auto word = hn::Or(hn::And(qa, bytea), hn::ShiftLeft<8>(hn::And(qb, byteb)));
    hn::StoreU(hn::DemoteTo(d16, word), d16, pair + c);
  }
  memcpy(panel + I8ValueScalesOffset(dk) + lane * sizeof(float), &sa.scale, sizeof(float));
  memcpy(panel + I8ValueScalesOffset(dk) + (lane + 1) * sizeof(float), &sb.scale, sizeof(float));
}

// Keys [first, first + count) (rows ldk apart), a vector of them at a time where they fill one
// inside a panel, one by one elsewhere.
HWY_INLINE void PackI8Keys(const float* HWY_RESTRICT k, size_t ldk, size_t first, size_t count,
                           size_t dk, uint8_t* HWY_RESTRICT keys) {
  const TransposeTag<float> d;
  const size_t L = hn::Lanes(d);
  const size_t panel_bytes = I8PanelBytes(dk);
  for (size_t t = 0; t < count;) {
    const size_t key = first + t, lane = key % kI8KeyPanel;
    uint8_t* panel = keys + key / kI8KeyPanel * panel_bytes;
    if (lane + L <= kI8KeyPanel && t + L <= count) {
      PackI8KeyGroup(d, k + t * ldk, ldk, dk, lane, panel);
      t += L;
    } else {
      PackI8Key(k + t * ldk, dk, lane, panel);
      ++t;
    }
  }
}

// Values [first, first + count) (rows ldv apart), a pair of positions at a time where both are
// given, one by one elsewhere (keeping its partner's bytes).
HWY_INLINE void PackI8Values(const float* HWY_RESTRICT v, size_t ldv, size_t first, size_t count,
                             size_t dk, uint8_t* HWY_RESTRICT values) {
  const size_t panel_bytes = I8ValuePanelBytes(dk);
  for (size_t t = 0; t < count;) {
    const size_t key = first + t, lane = key % kI8ValuePanel;
    uint8_t* panel = values + key / kI8ValuePanel * panel_bytes;
    if (lane % 2 == 0 && t + 1 < count) {
      PackI8ValuePair(v + t * ldv, v + (t + 1) * ldv, dk, lane, panel);
      t += 2;
    } else {
      PackI8Value(v + t * ldv, dk, lane, panel);
      ++t;
    }
  }
}

// The int8 kernels' AttentionKernel::pack (attention.h): keys and values [first, first + count),
// then the key panel's lanes past `stored` and an odd `stored`'s value partner zeroed (both are
// read).
inline void PackI8KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                             size_t count, size_t stored, size_t dk, void* keys_bytes,
                             void* values_bytes) {
  uint8_t* keys = static_cast<uint8_t*>(keys_bytes);
  PackI8Keys(k, ldk, first, count, dk, keys);
  uint8_t* values = static_cast<uint8_t*>(values_bytes);
  PackI8Values(v, ldv, first, count, dk, values);
  if (stored % kI8KeyPanel != 0) {
    ZeroI8KeysFrom(dk, stored % kI8KeyPanel, keys + stored / kI8KeyPanel * I8PanelBytes(dk));
  }
  if (stored % 2 != 0) {
    ZeroI8ValuePartner(dk, stored % kI8ValuePanel,
                       values + stored / kI8ValuePanel * I8ValuePanelBytes(dk));
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_KV_INT8_PACK_INL_H_
