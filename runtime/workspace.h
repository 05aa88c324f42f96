// Reusable 64-byte-aligned scratch memory: grows to the largest request seen, then the hot
// path allocates nothing.
#ifndef EDGEATTN_RUNTIME_WORKSPACE_H_
#define EDGEATTN_RUNTIME_WORKSPACE_H_

#include <cstddef>

#include "hwy/aligned_allocator.h"
#include "runtime/out_of_memory.h"

#if defined(__SANITIZE_ADDRESS__)
#define EDGEATTN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EDGEATTN_ASAN 1
#endif
#endif
#ifdef EDGEATTN_ASAN
#include <sanitizer/asan_interface.h>
#endif

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
#ifdef EDGEATTN_ASAN
    // The last layout's red zones (WorkspaceLayout) go: this reservation has its own.
    ASAN_UNPOISON_MEMORY_REGION(buffer_.get(), capacity_ * sizeof(float));
#endif
    return buffer_.get();
  }
  std::size_t bytes() const { return capacity_ * sizeof(float); }

 private:
  hwy::AlignedFreeUniquePtr<float[]> buffer_;
  std::size_t capacity_ = 0;
};

// Carves consecutive 64-byte-aligned blocks out of one reservation. Under AddressSanitizer each
// block is followed by a red zone, poisoned once the reservation is made (PoisonRedZones), so
// that an access past a block's end, which would land in its neighbour inside the one
// allocation, is reported.
class WorkspaceLayout {
 public:
  // Returns the offset (in floats) of a new block of `floats` floats.
  std::size_t Add(std::size_t floats) {
    const std::size_t offset = total_;
    total_ += (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
#ifdef EDGEATTN_ASAN
    if (red_zones_ < kMaxRedZones) red_zone_[red_zones_++] = {offset + floats, total_};
    total_ += kAlignFloats;
#endif
    return offset;
  }
  std::size_t total() const { return total_; }

  // base: the reservation of total() floats the blocks are placed in.
  void PoisonRedZones(float* base) const {
#ifdef EDGEATTN_ASAN
    for (std::size_t i = 0; i < red_zones_; ++i) {
      ASAN_POISON_MEMORY_REGION(
          base + red_zone_[i].begin,
          (red_zone_[i].end + kAlignFloats - red_zone_[i].begin) * sizeof(float));
    }
#else
    (void)base;
#endif
  }

 private:
  static constexpr std::size_t kAlignFloats = 16;
  std::size_t total_ = 0;
#ifdef EDGEATTN_ASAN
  // [begin, end + kAlignFloats): from just past a block's last float to the next block.
  struct RedZone {
    std::size_t begin, end;
  };
  static constexpr std::size_t kMaxRedZones = 64;  // a forward plan has 31 blocks
  RedZone red_zone_[kMaxRedZones];
  std::size_t red_zones_ = 0;
#endif
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_WORKSPACE_H_
