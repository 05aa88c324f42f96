// The int8 K/V format's rotation, rounding and layout (simd/attention_kv.h) in plain scalar code:
// the model whose bits every target's vector code (simd/kv_int8_rows-inl.h) must reproduce.
#ifndef EDGEATTN_TESTS_SIMD_KV_INT8_MODEL_H_
#define EDGEATTN_TESTS_SIMD_KV_INT8_MODEL_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "simd/attention_kv.h"

namespace edgeattn {
namespace testing_support {

// The butterflies level by level over each block of I8RotationBlock(n) channels.
inline void ModelRotateI8(float* x, std::size_t n) {
  const std::size_t block = simd::I8RotationBlock(n);
  for (std::size_t half = 1; half < block; half *= 2) {
    for (std::size_t i = 0; i < n; i += 2 * half) {
      for (std::size_t j = i; j < i + half; ++j) {
        const float a = x[j], c = x[j + half];
        x[j] = a + c;
        x[j + half] = a - c;
      }
    }
  }
}

// scale = max |x| / 127 (NaN, with every q zero, once a value is not finite; 0 and zeros below
// kMinI8RowMax) and q = x * (127 / max) rounded to nearest even.
inline float ModelQuantizeI8(const float* x, std::size_t n, int8_t* q) {
  float max = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) {
      std::memset(q, 0, n);
      return NAN;
    }
    max = std::fmax(max, std::fabs(x[i]));
  }
  if (max < simd::kMinI8RowMax) max = 0.0f;
  const float inverse = max == 0.0f ? 0.0f : 127.0f / max;
  for (std::size_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(std::nearbyint(x[i] * inverse));
  return max / 127.0f;
}

// The stored key byte of k: k + 128 on x86 (vpdpbusd's unsigned operand), k elsewhere (sdot's and
// smmla's signed one).
constexpr int kModelKeyOffset = HWY_ARCH_X86 ? 128 : 0;
static_assert(simd::kI8KeyOffset == kModelKeyOffset, "attention_kv.h's key bytes");

// The bytes a pack of keys and values [0, lk) (rows of dk, strides ldk and ldv) leaves in the
// int8 layouts: 64-key panels of 4-channel words holding the rotated key's bytes + the offset,
// then the scales (lanes past lk: zeros, scale 0); 64-value panels of pair rows (channel c of
// positions 2u, 2u + 1 at bytes 2c, 2c + 1 of row u; zeros past dk, and for an odd lk's last
// partner), then the scales. values_written: the value bytes a pack defines (the rest of a
// panel past lk is left as it was).
struct ModelI8Pack {
  std::vector<uint8_t> keys, values;
  std::vector<bool> values_written;
};
inline ModelI8Pack ModelPackI8(const float* k, std::size_t ldk, const float* v, std::size_t ldv,
                               std::size_t lk, std::size_t dk) {
  const std::size_t groups = (dk + 3) / 4, panel = (groups + 1) * simd::kI8KeyPanel * 4;
  const std::size_t padded = (dk + simd::kI8ValueAlign - 1) / simd::kI8ValueAlign *
                             simd::kI8ValueAlign;
  const std::size_t pair = 2 * padded, value_panel = 32 * pair + 64 * 4;
  ModelI8Pack out;
  out.keys.assign((lk + simd::kI8KeyPanel - 1) / simd::kI8KeyPanel * panel, kModelKeyOffset);
  out.values.assign((lk + 63) / 64 * value_panel, 0);
  out.values_written.assign(out.values.size(), false);
  std::vector<float> rotated(dk);
  std::vector<int8_t> q(dk);
  for (std::size_t t = 0; t < out.keys.size() / panel * simd::kI8KeyPanel; ++t) {
    uint8_t* base = out.keys.data() + t / simd::kI8KeyPanel * panel;
    const std::size_t lane = t % simd::kI8KeyPanel;
    float scale = 0.0f;
    if (t < lk) {
      std::memcpy(rotated.data(), k + t * ldk, dk * sizeof(float));
      ModelRotateI8(rotated.data(), dk);
      scale = ModelQuantizeI8(rotated.data(), dk, q.data());
      for (std::size_t c = 0; c < dk; ++c) {
        base[c / 4 * simd::kI8KeyPanel * 4 + lane * 4 + c % 4] =
            static_cast<uint8_t>(q[c] + kModelKeyOffset);
      }
    }
    std::memcpy(base + groups * simd::kI8KeyPanel * 4 + lane * 4, &scale, sizeof(float));
  }
  for (std::size_t t = 0; t < lk + lk % 2; ++t) {
    const std::size_t base = t / 64 * value_panel, row = base + t % 64 / 2 * pair;
    const float scale = t < lk ? ModelQuantizeI8(v + t * ldv, dk, q.data()) : 0.0f;
    for (std::size_t c = 0; c < padded; ++c) {
      out.values[row + 2 * c + t % 2] = t < lk && c < dk ? static_cast<uint8_t>(q[c]) : 0;
      out.values_written[row + 2 * c + t % 2] = true;
    }
    if (t == lk) break;  // the partner has no scale
    const std::size_t scale_at = base + 32 * pair + t % 64 * 4;
    std::memcpy(&out.values[scale_at], &scale, sizeof(float));
    for (std::size_t b = 0; b < 4; ++b) out.values_written[scale_at + b] = true;
  }
  return out;
}
}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_SIMD_KV_INT8_MODEL_H_
