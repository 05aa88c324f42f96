// A projection (Linear layer) packed once for simd::GemmF32: W [n x k] and its bias.
#ifndef EDGEATTN_RUNTIME_PROJECTION_WEIGHTS_H_
#define EDGEATTN_RUNTIME_PROJECTION_WEIGHTS_H_

#include <cstddef>

#include "hwy/aligned_allocator.h"
#include "simd/gemm_f32.h"

namespace edgeattn {

class PackedProjection {
 public:
  PackedProjection() = default;
  // w: n rows of k floats; bias: n floats or null.
  PackedProjection(const float* w, const float* bias, std::size_t n, std::size_t k);

  simd::GemmWeightsView view() const { return {panels_.get(), bias_.get(), n_, k_}; }
  std::size_t n() const { return n_; }

 private:
  hwy::AlignedFreeUniquePtr<float[]> panels_;
  hwy::AlignedFreeUniquePtr<float[]> bias_;
  std::size_t n_ = 0;
  std::size_t k_ = 0;
};

// The four projections of multi-head attention.
struct MhaProjections {
  PackedProjection q, k, v, out;
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_PROJECTION_WEIGHTS_H_
