#include "runtime/projection_weights.h"

#include <cstring>
#include <new>

namespace edgeattn {
namespace {
hwy::AlignedFreeUniquePtr<float[]> AllocateFloats(std::size_t count) {
  auto buffer = hwy::AllocateAligned<float>(count);
  if (!buffer) throw std::bad_alloc();
  return buffer;
}
}  // namespace

PackedProjection::PackedProjection(const float* w, const float* bias, std::size_t n,
                                   std::size_t k)
    : n_(n), k_(k) {
  panels_ = AllocateFloats(simd::PackedGemmWeightsSize(n, k));
  simd::PackGemmWeights(w, k, n, k, panels_.get());
  if (bias != nullptr) {
    // Padded to whole panels: the kernel loads the bias a full vector at a time.
    const std::size_t padded = simd::GemmPanelCount(n) * simd::kGemmPanelWidth;
    bias_ = AllocateFloats(padded);
    std::memset(bias_.get(), 0, padded * sizeof(float));
    std::memcpy(bias_.get(), bias, n * sizeof(float));
  }
}

}  // namespace edgeattn
