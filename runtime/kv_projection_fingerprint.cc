#include "runtime/kv_projection_fingerprint.h"

namespace edgeattn {
namespace {

// FNV-1a over the bytes, its 64-bit state mixed once at the end (splitmix64's finaliser) so
// that inputs differing in one byte land far apart.
class Fingerprint {
 public:
  void Add(const void* data, std::size_t bytes) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ull;
  }
  template <class T>
  void AddValue(const T& value) {
    Add(&value, sizeof(value));
  }
  // Up to kSamples elements of `count`, each `size` bytes, evenly spaced; all if fewer.
  void AddSamples(const void* data, std::size_t count, std::size_t size) {
    constexpr std::size_t kSamples = 4096;
    const unsigned char* p = static_cast<const unsigned char*>(data);
    const std::size_t step = count > kSamples ? count / kSamples : 1;
    for (std::size_t i = 0; i < count; i += step) Add(p + i * size, size);
  }
  void AddFloats(const float* values, std::size_t count) {
    AddValue(values != nullptr);
    if (values != nullptr) Add(values, count * sizeof(float));
  }
  std::uint64_t Value() const {
    std::uint64_t z = h_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

std::size_t WeightBytes(simd::WeightType type) {
  switch (type) {
    case simd::WeightType::kF32:
      return 4;
    case simd::WeightType::kQc8:
      return 1;
    case simd::WeightType::kBf16:
    case simd::WeightType::kF16:
      return 2;
  }
  return 4;
}

}  // namespace

std::uint64_t KvProjectionFingerprint(const KvProjectionWeights& w, const StepMath& math) {
  Fingerprint f;
  f.AddValue(w.type);
  f.AddValue(w.kvd);
  f.AddValue(w.d);
  f.AddSamples(w.k, w.kvd * w.d, WeightBytes(w.type));
  f.AddSamples(w.v, w.kvd * w.d, WeightBytes(w.type));
  f.AddFloats(w.k_scale, w.kvd);
  f.AddFloats(w.v_scale, w.kvd);
  f.AddFloats(w.k_bias, w.kvd);
  f.AddFloats(w.v_bias, w.kvd);
  f.AddFloats(math.k_norm_weight.empty() ? nullptr : math.k_norm_weight.data(),
              math.k_norm_weight.size());
  f.AddValue(math.norm_eps);
  f.AddValue(math.rotary_dim);
  f.AddValue(math.interleaved);
  f.AddValue(math.rotary_scaling);
  f.AddFloats(math.inv_freq.empty() ? nullptr : math.inv_freq.data(), math.inv_freq.size());
  return f.Value();
}

}  // namespace edgeattn
