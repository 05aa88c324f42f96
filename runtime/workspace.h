// Reusable 64-byte-aligned scratch memory: grows to the largest request seen, then the hot
// path allocates nothing.
#ifndef EDGEATTN_RUNTIME_WORKSPACE_H_
#define EDGEATTN_RUNTIME_WORKSPACE_H_

#include <cstddef>

#include "hwy/aligned_allocator.h"
#include "runtime/out_of_memory.h"

namespace edgeattn {

class Workspace {
 public:
  // A buffer of at least `floats` floats; contents are unspecified. Invalidates earlier ones.
  float* Reserve(std::size_t floats) {
    if (floats > capacity_) {
      // The old buffer goes first (a lower peak), and capacity_ with it: after a failed
      // allocation the workspace is empty, and the next call allocates again.
      buffer_.reset();
      capacity_ = 0;
      buffer_ = AllocateOrThrow<float>(floats, "the context's scratch memory");
      capacity_ = floats;
    }
    return buffer_.get();
  }
  std::size_t bytes() const { return capacity_ * sizeof(float); }

 private:
  hwy::AlignedFreeUniquePtr<float[]> buffer_;
  std::size_t capacity_ = 0;
};

// Carves consecutive 64-byte-aligned blocks out of one reservation.
class WorkspaceLayout {
 public:
  // Returns the offset (in floats) of a new block of `floats` floats.
  std::size_t Add(std::size_t floats) {
    const std::size_t offset = total_;
    total_ += (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
    return offset;
  }
  std::size_t total() const { return total_; }

 private:
  static constexpr std::size_t kAlignFloats = 16;
  std::size_t total_ = 0;
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_WORKSPACE_H_
