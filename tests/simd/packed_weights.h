// Weights packed by a projection kernel for the kernel tests: the packed layout in aligned
// memory, and the scales and bias padded to whole panels as the operator pads them.
#ifndef EDGEATTN_TESTS_SIMD_PACKED_WEIGHTS_H_
#define EDGEATTN_TESTS_SIMD_PACKED_WEIGHTS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "simd/projection_kernel.h"

namespace edgeattn {
namespace testing_support {

struct PackedWeights {
  hwy::AlignedFreeUniquePtr<std::uint8_t[]> packed;
  std::vector<float> scales, bias;  // empty: none
  simd::PackedProjectionView view;

  // w: n x k elements of the kernel's weight type; scales and bias: n floats each, or empty.
  PackedWeights(const simd::ProjectionKernel& kernel, const void* w, std::size_t n,
                std::size_t k, std::size_t block, const std::vector<float>& scales_in,
                const std::vector<float>& bias_in) {
    const std::size_t bytes = kernel.packed_bytes(n, k, block);
    packed = hwy::AllocateAligned<std::uint8_t>(bytes);
    // Garbage first, as the operator's allocation may hold: a pack that leaves padding bytes
    // unwritten (k past a group of 4, n past a panel) shows in the results.
    std::memset(packed.get(), 0xA5, bytes);
    kernel.pack(w, n, k, block, packed.get());
    const std::size_t padded = (n + kernel.panel_width - 1) / kernel.panel_width *
                               kernel.panel_width;
    const auto pad = [&](const std::vector<float>& v) {
      std::vector<float> out;
      if (!v.empty()) {
        out.assign(padded, 0.0f);
        std::copy(v.begin(), v.end(), out.begin());
      }
      return out;
    };
    scales = pad(scales_in);
    bias = pad(bias_in);
    view = {packed.get(), scales.empty() ? nullptr : scales.data(),
            bias.empty() ? nullptr : bias.data(), n, k, block};
  }

  std::size_t panels(const simd::ProjectionKernel& kernel) const {
    return (view.n + kernel.panel_width - 1) / kernel.panel_width;
  }
};

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_SIMD_PACKED_WEIGHTS_H_
