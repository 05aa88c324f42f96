// A projection (Linear layer) packed once for the kernel chosen for it: W [n x k] in that
// kernel's layout, its per-channel scales (int8 weights) and its bias. One type whatever the
// precision: the kernel says what the weights and the activations are.
#ifndef EDGEATTN_RUNTIME_PACKED_PROJECTION_H_
#define EDGEATTN_RUNTIME_PACKED_PROJECTION_H_

#include <cstddef>
#include <cstdint>

#include "hwy/aligned_allocator.h"
#include "simd/projection_kernel.h"

namespace edgeattn {

class PackedProjection {
 public:
  PackedProjection() = default;
  // w: n rows of k weights of the kernel's weight type (float, or int8 with `scales`, one float
  // per row); bias: n floats or null; block: values per activation scale (int8 activations).
  PackedProjection(const simd::ProjectionKernel& kernel, const void* w, const float* scales,
                   const float* bias, std::size_t n, std::size_t k, std::size_t block);

  const simd::ProjectionKernel& kernel() const { return *kernel_; }
  simd::PackedProjectionView view() const {
    return {packed_.get(), scales_.get(), bias_.get(), n_, k_, block_};
  }
  std::size_t n() const { return n_; }
  std::size_t k() const { return k_; }
  std::size_t panels() const { return (n_ + kernel_->panel_width - 1) / kernel_->panel_width; }
  // Bytes held: the packed weights, and the scales and bias padded to whole panels.
  std::size_t bytes() const;
  // Writes the weights as given to the constructor: n x k elements of the weight type.
  void Unpack(void* w) const { kernel_->unpack(packed_.get(), n_, k_, block_, w); }

 private:
  const simd::ProjectionKernel* kernel_ = nullptr;
  hwy::AlignedFreeUniquePtr<std::uint8_t[]> packed_;
  hwy::AlignedFreeUniquePtr<float[]> scales_;
  hwy::AlignedFreeUniquePtr<float[]> bias_;
  std::size_t n_ = 0;
  std::size_t k_ = 0;
  std::size_t block_ = 0;
};

// The four projections of multi-head attention.
struct MhaProjections {
  PackedProjection q, k, v, out;
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_PACKED_PROJECTION_H_
