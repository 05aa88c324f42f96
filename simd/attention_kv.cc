#include "simd/attention_kv.h"

#include <math.h>
#include <string.h>

#include "simd/gemm_f32.h"
#include "simd/half_float.h"
#include "simd/vector_width.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/attention_kv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "simd/attention_kv-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(ListCompactKvKernels);

std::vector<const AttentionKernel*> CompactKvAttentionKernels() {
  return HWY_DYNAMIC_DISPATCH(ListCompactKvKernels)();
}

namespace {

size_t RoundUp(size_t x, size_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// The fp32 kernel's layouts with 16-bit elements: key panels of 64 positions x dk rows, value
// rows of dk and a zeroed tail, as the tile kernel reads whole vectors of the last row.
size_t HalfValuesTail(size_t dk) { return RoundUp(dk, kMaxFloatLanes) - dk; }

template <uint16_t (*kRound)(float)>
void PackHalfKeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                        size_t count, size_t stored, size_t dk, void* keys_bytes,
                        void* values_bytes) {
  uint16_t* keys = static_cast<uint16_t*>(keys_bytes);
  uint16_t* values = static_cast<uint16_t*>(values_bytes);
  for (size_t t = 0; t < count; ++t) {
    const size_t key = first + t;
    uint16_t* panel = keys + (key / kGemmPanelWidth) * dk * kGemmPanelWidth;
    const size_t lane = key % kGemmPanelWidth;
    for (size_t c = 0; c < dk; ++c) panel[c * kGemmPanelWidth + lane] = kRound(k[t * ldk + c]);
    for (size_t c = 0; c < dk; ++c) values[key * dk + c] = kRound(v[t * ldv + c]);
  }
  // Lanes past the last key and the values' tail are read (never stored): keep them zero.
  if (stored % kGemmPanelWidth != 0) {
    uint16_t* panel = keys + (stored / kGemmPanelWidth) * dk * kGemmPanelWidth;
    const size_t lanes = kGemmPanelWidth - stored % kGemmPanelWidth;
    for (size_t c = 0; c < dk; ++c) {
      memset(panel + c * kGemmPanelWidth + stored % kGemmPanelWidth, 0, lanes * sizeof(uint16_t));
    }
  }
  memset(values + stored * dk, 0, HalfValuesTail(dk) * sizeof(uint16_t));
}

// The scale of a row and the factor that quantizes it.
struct I8Scale {
  float scale;  // NaN when the row holds a non-finite value
  float inverse;
};

// max(max, |x[i]|) over n values, or NaN once one is not finite.
float MaxAbs(const float* x, size_t n, float max) {
  for (size_t i = 0; i < n && max == max; ++i) {
    max = isfinite(x[i]) ? fmaxf(max, fabsf(x[i])) : NAN;
  }
  return max;
}

I8Scale I8ScaleOfMax(float max) {
  if (max != max) return {NAN, 0.0f};
  if (max == 0.0f) return {0.0f, 0.0f};
  return {max / 127.0f, 127.0f / max};
}

I8Scale I8ScaleOf(const float* x, size_t n) { return I8ScaleOfMax(MaxAbs(x, n, 0.0f)); }

int8_t QuantizeI8(float x, const I8Scale& s) {
  // |x| * (127 / max) rounds to at most 127: the clamp only guards the last ulp.
  const float q = nearbyintf(x * s.inverse);
  return static_cast<int8_t>(fminf(fmaxf(q, -127.0f), 127.0f));
}

size_t I8KeyGroups(size_t dk) { return (dk + 3) / 4; }
size_t I8KeyPanelBytes(size_t dk) { return (I8KeyGroups(dk) + 1) * kI8KeyPanel * 4; }
size_t I8ValueRowBytes(size_t dk) { return RoundUp(dk, kI8ValueAlign) + sizeof(float); }

// Block `b` of key k, rotated, in `rotated`.
void RotatedKeyBlock(const float* k, size_t block, size_t b, float* rotated) {
  memcpy(rotated, k + b * block, block * sizeof(float));
  HadamardRotateRow(rotated, block);
}

// The scale of the rotated key, over its blocks (a non-finite channel makes it NaN).
I8Scale RotatedKeyScale(const float* k, size_t dk) {
  const size_t block = I8RotationBlock(dk);
  float rotated[kMaxI8RotationBlock];
  float max = 0.0f;
  for (size_t b = 0; b < dk / block; ++b) {
    RotatedKeyBlock(k, block, b, rotated);
    max = MaxAbs(rotated, block, max);
  }
  return I8ScaleOfMax(max);
}

// Key `lane` of a panel, rotated: channel c in group c / 4, byte c % 4 of the lane's word,
// plus 128.
void PackI8Key(const float* k, size_t dk, size_t lane, uint8_t* panel) {
  const I8Scale s = RotatedKeyScale(k, dk);
  const size_t block = I8RotationBlock(dk);
  float rotated[kMaxI8RotationBlock];
  for (size_t c = 0; c < RoundUp(dk, 4); ++c) {
    if (c < dk && c % block == 0) RotatedKeyBlock(k, block, c / block, rotated);
    const int8_t q = c < dk ? QuantizeI8(rotated[c % block], s) : 0;
    panel[(c / 4) * kI8KeyPanel * 4 + lane * 4 + c % 4] = static_cast<uint8_t>(q + 128);
  }
  memcpy(panel + I8KeyGroups(dk) * kI8KeyPanel * 4 + lane * 4, &s.scale, sizeof(float));
}

// A lane past the last key: zeros of scale zero (score 0, never stored).
void ZeroI8Key(size_t dk, size_t lane, uint8_t* panel) {
  for (size_t g = 0; g < I8KeyGroups(dk); ++g)
    memset(panel + g * kI8KeyPanel * 4 + lane * 4, 128, 4);
  memset(panel + I8KeyGroups(dk) * kI8KeyPanel * 4 + lane * 4, 0, sizeof(float));
}

void PackI8Value(const float* v, size_t dk, uint8_t* row) {
  const I8Scale s = I8ScaleOf(v, dk);
  const size_t padded = RoundUp(dk, kI8ValueAlign);
  for (size_t c = 0; c < padded; ++c) {
    row[c] = static_cast<uint8_t>(c < dk ? QuantizeI8(v[c], s) : 0);
  }
  memcpy(row + padded, &s.scale, sizeof(float));
}

}  // namespace

size_t HalfKeysBytes(size_t lk, size_t dk) {
  return PackedGemmWeightsSize(lk, dk) * sizeof(uint16_t);
}
size_t HalfValuesBytes(size_t lk, size_t dk) {
  return (lk * dk + HalfValuesTail(dk)) * sizeof(uint16_t);
}
void PackBf16KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                        size_t count, size_t stored, size_t dk, void* keys, void* values) {
  PackHalfKeysValues<&Bf16FromF32>(k, ldk, v, ldv, first, count, stored, dk, keys, values);
}
void PackF16KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                       size_t count, size_t stored, size_t dk, void* keys, void* values) {
  PackHalfKeysValues<&F16FromF32>(k, ldk, v, ldv, first, count, stored, dk, keys, values);
}

size_t I8KeysBytes(size_t lk, size_t dk) {
  return (lk + kI8KeyPanel - 1) / kI8KeyPanel * I8KeyPanelBytes(dk);
}
size_t I8ValuesBytes(size_t lk, size_t dk) { return lk * I8ValueRowBytes(dk); }
void PackI8KeysValues(const float* k, size_t ldk, const float* v, size_t ldv, size_t first,
                      size_t count, size_t stored, size_t dk, void* keys_bytes,
                      void* values_bytes) {
  uint8_t* keys = static_cast<uint8_t*>(keys_bytes);
  uint8_t* values = static_cast<uint8_t*>(values_bytes);
  const size_t panel_bytes = I8KeyPanelBytes(dk);
  for (size_t t = 0; t < count; ++t) {
    const size_t key = first + t;
    PackI8Key(k + t * ldk, dk, key % kI8KeyPanel, keys + key / kI8KeyPanel * panel_bytes);
    PackI8Value(v + t * ldv, dk, values + key * I8ValueRowBytes(dk));
  }
  for (size_t lane = stored % kI8KeyPanel; lane != 0 && lane < kI8KeyPanel; ++lane) {
    ZeroI8Key(dk, lane, keys + stored / kI8KeyPanel * panel_bytes);
  }
}

size_t CompactKvScratch(size_t dk) {
  // Per row of a block: the scaled query, its int8 copy (whole 64-byte lines), scores and
  // accumulators; every part starts on a 64-byte boundary.
  const size_t row = RoundUp(dk, kMaxFloatLanes);
  const size_t q8 = RoundUp(dk, 64) / sizeof(float);
  return kAttentionMaxBlockRows * (row + q8 + kAttentionKeyTile + row);
}

size_t I8RotationBlock(size_t n) {
  size_t block = 1;
  while (block < kMaxI8RotationBlock && n % (2 * block) == 0) block *= 2;
  return block;
}

void HadamardRotateRow(float* x, size_t n) {
  const size_t block = I8RotationBlock(n);
  for (size_t b0 = 0; b0 < n; b0 += block) {
    float* v = x + b0;
    for (size_t half = 1; half < block; half *= 2) {
      for (size_t i = 0; i < block; i += 2 * half) {
        for (size_t j = i; j < i + half; ++j) {
          const float a = v[j], c = v[j + half];
          v[j] = a + c;
          v[j + half] = a - c;
        }
      }
    }
  }
}

float QuantizeI8Row(const float* x, size_t n, int8_t* q) {
  const I8Scale s = I8ScaleOf(x, n);
  for (size_t i = 0; i < n; ++i) q[i] = QuantizeI8(x[i], s);
  return s.scale;
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
