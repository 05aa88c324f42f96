// Per-target rounding of float rows to bf16 and fp16 and the packing of keys and values into the
// two 16-bit layouts: the fp32 kernel's (attention_kv.h: bf16kv_*, f16kv_*) and the bf16 pair
// layout of the vdpbf16ps / AMX kernels (attention_bf16dot.h). The rounding is half_float.h's,
// bit for bit, in vectors: to nearest even, NaN kept quiet with its sign, fp16 overflow to
// infinity and its subnormals exact. Unlike the scalar code, the vectors compute every case on
// every lane: a signaling NaN or an inexact addition raises its floating-point exception flag
// (never a trap unless the app enables them).

#if defined(EDGEATTN_SIMD_KV_HALF_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_SIMD_KV_HALF_ROWS_INL_H_
#undef EDGEATTN_SIMD_KV_HALF_ROWS_INL_H_
#else
#define EDGEATTN_SIMD_KV_HALF_ROWS_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "hwy/highway.h"
#include "simd/attention_bf16dot.h"
#include "simd/attention_kv.h"
#include "simd/gemm_f32.h"
#include "simd/panel_tails-inl.h"
#include "simd/partial_vector-inl.h"
#include "simd/transpose_words-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using HalfRowTag = hn::ScalableTag<float>;
using HalfBitsTag = hn::RebindToUnsigned<HalfRowTag>;
using HalfBits = hn::Vec<HalfBitsTag>;

// Each lane's bf16 in its upper 16 bits (Bf16FromF32): x + 0x7FFF + the kept bit's parity,
// or for NaN the quiet bit set.
HWY_INLINE HalfBits Bf16InUpperBits(hn::Vec<HalfRowTag> x) {
  const HalfBitsTag du;
  const HalfBits bits = hn::BitCast(du, x);
  const HalfBits round =
      hn::Add(hn::Set(du, 0x7FFFu), hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u)));
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(x)), hn::Or(bits, hn::Set(du, 0x400000u)),
                        hn::Add(bits, round));
}

// Each lane's fp16 bits, below 2^16 (F16FromF32): the four cases of the scalar code, selected.
HWY_INLINE HalfBits F16Bits(hn::Vec<HalfRowTag> x) {
  const HalfRowTag df;
  const HalfBitsTag du;
  const hn::RebindToSigned<HalfBitsTag> di;  // |x|'s bits compare as non-negative int32
  const HalfBits bits = hn::BitCast(du, x);
  const HalfBits sign = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 0x8000u));
  const HalfBits abs = hn::And(bits, hn::Set(du, 0x7FFFFFFFu));
  const auto abs_i = hn::BitCast(di, abs);
  const HalfBits mantissa_top = hn::ShiftRight<13>(abs);
  const HalfBits normal = hn::ShiftRight<13>(
      hn::Add(hn::Sub(abs, hn::Set(du, 0x38000000u)),
              hn::Add(hn::Set(du, 0xFFFu), hn::And(mantissa_top, hn::Set(du, 1u)))));
  // Below 2^-14: a multiple of 2^-24, rounded by the float addition of 0.5.
  const HalfBits subnormal = hn::Sub(
      hn::BitCast(du, hn::Add(hn::BitCast(df, abs), hn::Set(df, 0.5f))), hn::Set(du, 0x3F000000u));
  const HalfBits nan = hn::Or(hn::Set(du, 0x7E00u), hn::And(mantissa_top, hn::Set(du, 0x3FFu)));
  HalfBits magnitude = normal;
  magnitude = hn::IfThenElse(hn::RebindMask(du, hn::Lt(abs_i, hn::Set(di, 0x38800000))), subnormal,
                             magnitude);
  magnitude = hn::IfThenElse(hn::RebindMask(du, hn::Gt(abs_i, hn::Set(di, 0x477FEFFF))),
                             hn::Set(du, 0x7C00u), magnitude);
  magnitude =
      hn::IfThenElse(hn::RebindMask(du, hn::Gt(abs_i, hn::Set(di, 0x7F800000))), nan, magnitude);
  return hn::Or(sign, magnitude);
}

// out[0, n) = the 16-bit rounding of x[0, n) by Format (Bf16Rows or F16Rows).
template <class Format>
HWY_INLINE void RoundRowToHalf(const float* HWY_RESTRICT x, size_t n, uint16_t* HWY_RESTRICT out) {
  const HalfRowTag df;
  const hn::Rebind<uint16_t, HalfRowTag> d16;
  const hn::RebindToSigned<HalfBitsTag> di;
  const size_t N = hn::Lanes(df);
  for (size_t i = 0; i < n; i += N) {
    const HalfBits bits = Format::Bits(LoadPartial(df, x + i, n - i));
    StorePartial(d16, hn::DemoteTo(d16, hn::BitCast(di, bits)), out + i, n - i);
  }
}

struct Bf16Rows {
  static HalfBits Bits(hn::Vec<HalfRowTag> x) { return hn::ShiftRight<16>(Bf16InUpperBits(x)); }
};
struct F16Rows {
  static HalfBits Bits(hn::Vec<HalfRowTag> x) { return F16Bits(x); }
};

// Rows scattered in the layouts go through a stack buffer of this many channels at a time.
inline constexpr size_t kHalfKeyChunk = 256;

// out[c * stride] = the 16-bit rounding of x[c] by Format, for c in [0, n).
template <class Format>
HWY_INLINE void RoundRowToHalfStrided(const float* HWY_RESTRICT x, size_t n, size_t stride,
                                      uint16_t* HWY_RESTRICT out) {
  HWY_ALIGN uint16_t rounded[kHalfKeyChunk];
  for (size_t c0 = 0; c0 < n; c0 += kHalfKeyChunk) {
    const size_t chunk = HWY_MIN(kHalfKeyChunk, n - c0);
    RoundRowToHalf<Format>(x + c0, chunk, rounded);
    for (size_t c = 0; c < chunk; ++c) out[(c0 + c) * stride] = rounded[c];
  }
}

// Lanes(d) keys (rows ldk apart) into as many adjacent lanes of a 16-bit key panel from
// panel_lane on: four channels at a time transposed in fp32 (a vector of keys per channel), each
// channel's vector rounded and stored whole; the last dk % 4 channels key by key.
template <class Format, class D>
HWY_INLINE void PackHalfKeyGroup(D d, const float* HWY_RESTRICT k, size_t ldk, size_t dk,
                                 uint16_t* HWY_RESTRICT panel_lane) {
  // Format::Bits takes a row vector: a TransposeTag vector is one on every target (capped at
  // the full width on x86, one block elsewhere, SVE's vectors all one type).
  static_assert(std::is_same<hn::Vec<D>, hn::Vec<HalfRowTag>>::value, "a HalfRowTag vector");
  const hn::Rebind<uint16_t, D> d16;
  const hn::RebindToSigned<D> di;
  const size_t L = hn::Lanes(d);
  HWY_ALIGN float channels[4 * 16];  // TransposeTag: at most 16 lanes
  size_t c = 0;
  for (; c + 4 <= dk; c += 4) {
    TransposeFourColumns(d, k + c, ldk, channels, L);
    for (size_t j = 0; j < 4; ++j) {
      const HalfBits bits = Format::Bits(hn::Load(d, channels + j * L));
      hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, bits)), d16,
                 panel_lane + (c + j) * kGemmPanelWidth);
    }
  }
  if (c == dk) return;
  for (size_t r = 0; r < L; ++r) {
    RoundRowToHalfStrided<Format>(k + r * ldk + c, dk - c, kGemmPanelWidth,
                                  panel_lane + c * kGemmPanelWidth + r);
  }
}

// The fp32 kernel's layout in 16 bits: key panels of 64 positions x dk rows (a vector of keys at
// a time where they fill one inside a panel), value rows of dk and a zeroed tail (the tile
// kernel reads whole vectors of the last row).
template <class Format>
HWY_INLINE void PackHalfKeysValues(const float* k, size_t ldk, const float* v, size_t ldv,
                                   size_t first, size_t count, size_t stored, size_t dk,
                                   void* keys_bytes, void* values_bytes) {
  uint16_t* keys = static_cast<uint16_t*>(keys_bytes);
  uint16_t* values = static_cast<uint16_t*>(values_bytes);
  const TransposeTag<float> d;
  const size_t L = hn::Lanes(d);
  for (size_t t = 0; t < count;) {
    const size_t key = first + t, lane = key % kGemmPanelWidth;
    uint16_t* panel = keys + (key / kGemmPanelWidth) * dk * kGemmPanelWidth + lane;
    if (lane + L <= kGemmPanelWidth && t + L <= count) {
      PackHalfKeyGroup<Format>(d, k + t * ldk, ldk, dk, panel);
      t += L;
    } else {
      RoundRowToHalfStrided<Format>(k + t * ldk, dk, kGemmPanelWidth, panel);
      ++t;
    }
  }
  for (size_t t = 0; t < count; ++t) {
    RoundRowToHalf<Format>(v + t * ldv, dk, values + (first + t) * dk);
  }
  // Lanes past the last key and the values' tail are read (never stored): keep them zero.
  if (stored % kGemmPanelWidth != 0) {
    const size_t row_bytes = kGemmPanelWidth * sizeof(uint16_t);
    uint16_t* panel = keys + (stored / kGemmPanelWidth) * dk * kGemmPanelWidth;
    FillRowTails(reinterpret_cast<uint8_t*>(panel), dk, row_bytes,
                 stored % kGemmPanelWidth * sizeof(uint16_t), row_bytes, 0);
  }
  memset(values + stored * dk, 0, HalfValuesTail(dk) * sizeof(uint16_t));
}

// A key in the bf16 pair layout: channels 2p and 2p + 1 as one 32-bit word of pair row p, at
// the key's lane; an odd dk's last partner zero.
HWY_INLINE void PackBf16PairKey(const float* HWY_RESTRICT k, size_t dk, size_t lane,
                                uint16_t* HWY_RESTRICT panel) {
  HWY_ALIGN uint16_t rounded[kHalfKeyChunk + 1];
  for (size_t c0 = 0; c0 < dk; c0 += kHalfKeyChunk) {
    const size_t n = HWY_MIN(kHalfKeyChunk, dk - c0);
    RoundRowToHalf<Bf16Rows>(k + c0, n, rounded);
    rounded[n] = 0;
    for (size_t c = 0; c < n; c += 2) {
      memcpy(panel + (c0 + c) / 2 * kBf16DotKeyPanel * 2 + lane * 2, rounded + c, 4);
    }
  }
}

// Lanes(d) keys (rows ldk apart, at most 16) into as many adjacent lanes of the bf16 pair layout
// from `lane` on: each rounded to its pair words in a buffer (an odd dk's last partner zero),
// then the words transposed 4 pairs x Lanes(d) keys at a time, the last pairs % 4 one by one.
template <class D>
HWY_INLINE void PackBf16PairKeys(D d, const float* HWY_RESTRICT k, size_t ldk, size_t dk,
                                 size_t lane, uint16_t* HWY_RESTRICT panel) {
  static_assert(hn::MaxLanes(D()) <= 16, "at most 16 keys");
  constexpr size_t kRow = kHalfKeyChunk + 2;  // a whole number of words per key
  const size_t keys = hn::Lanes(d);
  HWY_ALIGN uint16_t rounded[hn::MaxLanes(D()) * kRow];
  uint32_t* panel_words = reinterpret_cast<uint32_t*>(panel) + lane;
  for (size_t c0 = 0; c0 < dk; c0 += kHalfKeyChunk) {
    const size_t n = HWY_MIN(kHalfKeyChunk, dk - c0);
    for (size_t r = 0; r < keys; ++r) {
      RoundRowToHalf<Bf16Rows>(k + r * ldk + c0, n, rounded + r * kRow);
      rounded[r * kRow + n] = 0;
    }
    const uint32_t* words = reinterpret_cast<const uint32_t*>(rounded);
    uint32_t* out = panel_words + c0 / 2 * kBf16DotKeyPanel;
    const size_t pairs = (n + 1) / 2;
    size_t p = 0;
    for (; p + 4 <= pairs; p += 4) {
      TransposeFourColumns(d, words + p, kRow / 2, out + p * kBf16DotKeyPanel, kBf16DotKeyPanel);
    }
    for (; p < pairs; ++p) {  // memcpy: the words are uint16_t halves (transpose_words-inl.h)
      for (size_t r = 0; r < keys; ++r)
        memcpy(out + p * kBf16DotKeyPanel + r, words + r * kRow / 2 + p, 4);
    }
  }
}

// Value row `pair` of the bf16 pair layout from positions 2 pair (even) and 2 pair + 1 (odd),
// each nullptr to leave its half as it is: channel c of the two side by side, zeros past dk.
HWY_INLINE void PackBf16ValuePair(const float* HWY_RESTRICT even, const float* HWY_RESTRICT odd,
                                  size_t dk, uint16_t* HWY_RESTRICT pair_row) {
  const HalfRowTag df;
  const HalfBitsTag du;
  const size_t N = hn::Lanes(df);
  const size_t channels = Bf16DotValueChannels(dk);
  if (even != nullptr && odd != nullptr) {
    // Both halves at once: the even bf16 in the low 16 bits of each word, the odd in the high.
    uint32_t* words = reinterpret_cast<uint32_t*>(pair_row);
    for (size_t c = 0; c < dk; c += N) {
      const HalfBits low = hn::ShiftRight<16>(Bf16InUpperBits(LoadPartial(df, even + c, dk - c)));
      const HalfBits high =
          hn::And(Bf16InUpperBits(LoadPartial(df, odd + c, dk - c)), hn::Set(du, 0xFFFF0000u));
      StorePartial(du, hn::Or(low, high), words + c, dk - c);
    }
    memset(words + dk, 0, (channels - dk) * sizeof(uint32_t));
    return;
  }
  const size_t half = even != nullptr ? 0 : 1;
  RoundRowToHalfStrided<Bf16Rows>(even != nullptr ? even : odd, dk, 2, pair_row + half);
  for (size_t c = dk; c < channels; ++c) pair_row[2 * c + half] = 0;
}

// The bf16 pair layout's AttentionKernel::pack (attention_bf16dot.h).
HWY_INLINE void PackBf16PairKeysValues(const float* k, size_t ldk, const float* v, size_t ldv,
                                       size_t first, size_t count, size_t stored, size_t dk,
                                       void* keys_bytes, void* values_bytes) {
  uint16_t* keys = static_cast<uint16_t*>(keys_bytes);
  uint16_t* values = static_cast<uint16_t*>(values_bytes);
  const TransposeTag<uint32_t> d_wide;
  const hn::CappedTag<uint32_t, 4> d4;
  for (size_t t = 0; t < count;) {
    const size_t key = first + t;
    const size_t lane = key % kBf16DotKeyPanel;
    uint16_t* panel = keys + key / kBf16DotKeyPanel * Bf16DotKeyPanelElements(dk);
    // A vector of keys at a time while they fit in the panel, then four, then one by one.
    if (lane + hn::Lanes(d_wide) <= kBf16DotKeyPanel && t + hn::Lanes(d_wide) <= count) {
      PackBf16PairKeys(d_wide, k + t * ldk, ldk, dk, lane, panel);
      t += hn::Lanes(d_wide);
    } else if (lane + hn::Lanes(d4) <= kBf16DotKeyPanel && t + hn::Lanes(d4) <= count) {
      PackBf16PairKeys(d4, k + t * ldk, ldk, dk, lane, panel);
      t += hn::Lanes(d4);
    } else {
      PackBf16PairKey(k + t * ldk, dk, lane, panel);
      t += 1;
    }
  }
  for (size_t t = 0; t < count;) {
    const size_t key = first + t;
    const bool both = key % 2 == 0 && t + 1 < count;
    const float* row = v + t * ldv;
    PackBf16ValuePair(key % 2 == 0 ? row : nullptr,
                      both           ? row + ldv
                      : key % 2 == 1 ? row
                                     : nullptr,
                      dk, values + key / 2 * Bf16DotValuePairRowElements(dk));
    t += both ? 2 : 1;
  }
  // Key lanes past the last position are scored (never stored), and an odd last position's
  // partner in its value row is read: keep both zero.
  if (stored % kBf16DotKeyPanel != 0) {
    const size_t row_bytes = kBf16DotKeyPanel * 2 * sizeof(uint16_t);
    FillRowTails(
        reinterpret_cast<uint8_t*>(keys + stored / kBf16DotKeyPanel * Bf16DotKeyPanelElements(dk)),
        Bf16DotKeyPairs(dk), row_bytes, stored % kBf16DotKeyPanel * 4, row_bytes, 0);
  }
  if (stored % 2 != 0) {
    uint16_t* pair_row = values + stored / 2 * Bf16DotValuePairRowElements(dk);
    for (size_t c = 0; c < Bf16DotValueChannels(dk); ++c) pair_row[2 * c + 1] = 0;
  }
}

// The kernels' AttentionKernel::pack functions (plain inline: a one-target build takes their
// addresses from code without this target's attributes, as attention-inl.h explains).
inline void PackBf16KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                               size_t count, size_t stored, size_t dk, void* keys, void* values) {
  PackHalfKeysValues<Bf16Rows>(k, ldk, v, ldv, first, count, stored, dk, keys, values);
}
inline void PackF16KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                              size_t count, size_t stored, size_t dk, void* keys, void* values) {
  PackHalfKeysValues<F16Rows>(k, ldk, v, ldv, first, count, stored, dk, keys, values);
}
inline void PackBf16DotKeysValues(const float* k, size_t ldk, const float* v, size_t ldv,
                                  size_t first, size_t count, size_t stored, size_t dk, void* keys,
                                  void* values) {
  PackBf16PairKeysValues(k, ldk, v, ldv, first, count, stored, dk, keys, values);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_SIMD_KV_HALF_ROWS_INL_H_
