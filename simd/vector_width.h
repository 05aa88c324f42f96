// The widest float vector any kernel uses.
#ifndef EDGEATTN_SIMD_VECTOR_WIDTH_H_
#define EDGEATTN_SIMD_VECTOR_WIDTH_H_

#include <stddef.h>

namespace edgeattn {
namespace simd {

// Kernels cap their float vectors at 16 lanes (512 bits), also on SVE machines with longer
// vectors, so that a 64-float panel holds a whole number of vectors on every target and buffers
// padded to 16 floats hold a whole vector.
inline constexpr size_t kMaxFloatLanes = 16;

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_VECTOR_WIDTH_H_
