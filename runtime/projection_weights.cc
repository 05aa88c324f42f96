#include "runtime/projection_weights.h"

#include "simd/quantize.h"

#include <cstring>
#include <new>

namespace edgeattn {
namespace {
template <class T>
hwy::AlignedFreeUniquePtr<T[]> Allocate(std::size_t count) {
  auto buffer = hwy::AllocateAligned<T>(count);
  if (!buffer) throw std::bad_alloc();
  return buffer;
}

// n floats padded with zeros to whole panels: kernels load them a full vector at a time.
hwy::AlignedFreeUniquePtr<float[]> PaddedCopy(const float* values, std::size_t n,
                                              std::size_t padded) {
  auto out = Allocate<float>(padded);
  std::memset(out.get(), 0, padded * sizeof(float));
  std::memcpy(out.get(), values, n * sizeof(float));
  return out;
}
}  // namespace

PackedProjection::PackedProjection(const float* w, const float* bias, std::size_t n,
                                   std::size_t k)
    : n_(n), k_(k) {
  panels_ = Allocate<float>(simd::PackedGemmWeightsSize(n, k));
  simd::PackGemmWeights(w, k, n, k, panels_.get());
  if (bias != nullptr) bias_ = PaddedCopy(bias, n, simd::GemmPanelCount(n) * simd::kGemmPanelWidth);
}

PackedProjectionI8::PackedProjectionI8(const std::int8_t* wq, const float* scales,
                                       const float* bias, std::size_t n, std::size_t k,
                                       std::size_t block)
    : n_(n), k_(k), block_(block) {
  panels_ = Allocate<std::int8_t>(simd::PackedGemmI8WeightsSize(n, k));
  block_starts_ = Allocate<std::int32_t>(simd::GemmI8BlockStartsSize(n, k, block));
  simd::PackGemmI8Weights(wq, n, k, block, panels_.get(), block_starts_.get());
  const std::size_t padded = simd::GemmI8PanelCount(n) * simd::kGemmI8PanelWidth;
  scales_ = PaddedCopy(scales, n, padded);
  if (bias != nullptr) bias_ = PaddedCopy(bias, n, padded);
}

std::vector<std::int8_t> PackedProjectionI8::UnpackValues() const {
  const std::size_t groups = simd::QuantizedRowStride(k_) / 4;
  std::vector<std::int8_t> values(n_ * k_);
  for (std::size_t row = 0; row < n_; ++row) {
    const std::size_t p = row / simd::kGemmI8PanelWidth;
    const std::size_t j = row % simd::kGemmI8PanelWidth;
    for (std::size_t i = 0; i < k_; ++i) {
      values[row * k_ + i] =
          panels_[((p * groups + i / 4) * simd::kGemmI8PanelWidth + j) * 4 + i % 4];
    }
  }
  return values;
}

}  // namespace edgeattn
