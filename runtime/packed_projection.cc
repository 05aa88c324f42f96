#include "runtime/packed_projection.h"

#include <cstring>

#include "runtime/out_of_memory.h"

namespace edgeattn {
namespace {

// n floats padded with zeros to `padded`: kernels load whole panels of them.
hwy::AlignedFreeUniquePtr<float[]> PaddedCopy(const float* values, std::size_t n,
                                              std::size_t padded) {
  auto out = AllocateOrThrow<float>(padded, "the packed weights");
  std::memset(out.get(), 0, padded * sizeof(float));
  std::memcpy(out.get(), values, n * sizeof(float));
  return out;
}

}  // namespace

PackedProjection::PackedProjection(const simd::ProjectionKernel& kernel, const void* w,
                                   const float* scales, const float* bias, std::size_t n,
                                   std::size_t k, std::size_t block)
    : kernel_(&kernel), n_(n), k_(k), block_(block) {
  packed_ =
      AllocateOrThrow<std::uint8_t>(kernel.packed_bytes(n, k, block), "the packed weights");
  kernel.pack(w, n, k, block, packed_.get());
  const std::size_t padded = panels() * kernel.panel_width;
  if (scales != nullptr) scales_ = PaddedCopy(scales, n, padded);
  if (bias != nullptr) bias_ = PaddedCopy(bias, n, padded);
}

std::size_t PackedProjection::bytes() const {
  const std::size_t padded_floats = panels() * kernel_->panel_width * sizeof(float);
  return kernel_->packed_bytes(n_, k_, block_) + (scales_ ? padded_floats : 0) +
         (bias_ ? padded_floats : 0);
}

}  // namespace edgeattn
