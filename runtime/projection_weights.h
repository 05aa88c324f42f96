// A projection (Linear layer) packed once for simd::GemmF32: W [n x k] and its bias.
#ifndef EDGEATTN_RUNTIME_PROJECTION_WEIGHTS_H_
#define EDGEATTN_RUNTIME_PROJECTION_WEIGHTS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "simd/gemm_f32.h"
#include "simd/gemm_i8.h"

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

// An int8 projection packed once for simd::GemmI8: per-channel int8 weights, their scales,
// the bias, and the per-block weight sums the VNNI kernel needs.
class PackedProjectionI8 {
 public:
  PackedProjectionI8() = default;
  // wq: n rows of k int8 values; scales: n floats; bias: n floats or null.
  PackedProjectionI8(const std::int8_t* wq, const float* scales, const float* bias, std::size_t n,
                     std::size_t k, std::size_t block);

  simd::GemmI8WeightsView view() const {
    return {panels_.get(), block_starts_.get(), scales_.get(), bias_.get(), n_, k_, block_};
  }
  std::size_t n() const { return n_; }

  // The int8 values [n x k] as given to the constructor (for saving them).
  std::vector<std::int8_t> UnpackValues() const;

 private:
  hwy::AlignedFreeUniquePtr<std::int8_t[]> panels_;
  hwy::AlignedFreeUniquePtr<std::int32_t[]> block_starts_;
  hwy::AlignedFreeUniquePtr<float[]> scales_;
  hwy::AlignedFreeUniquePtr<float[]> bias_;
  std::size_t n_ = 0;
  std::size_t k_ = 0;
  std::size_t block_ = 0;
};

// The four projections of multi-head attention, packed for the operator's precision (the
// other set stays empty).
struct MhaProjections {
  bool int8 = false;
  PackedProjection q, k, v, out;
  PackedProjectionI8 q8, k8, v8, out8;
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_PROJECTION_WEIGHTS_H_
