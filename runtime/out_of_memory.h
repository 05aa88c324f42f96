// An allocation that failed, as std::bad_alloc (what callers catch, and what the C API reports as
// EDGEATTN_ERROR_OUT_OF_MEMORY), with a message saying what needed how many bytes: "out of
// memory: could not allocate 4294967296 bytes for the KV cache's keys" says which of a model's
// buffers to shrink, where std::bad_alloc says only "std::bad_alloc".
#ifndef EDGEATTN_RUNTIME_OUT_OF_MEMORY_H_
#define EDGEATTN_RUNTIME_OUT_OF_MEMORY_H_

#include <cstddef>
#include <limits>
#include <new>
#include <string>

#include "hwy/aligned_allocator.h"

namespace edgeattn {

class OutOfMemory : public std::bad_alloc {
 public:
  // `what_for` names the buffer; `bytes` is what it needed.
  OutOfMemory(const char* what_for, std::size_t bytes)
      : message_("out of memory: could not allocate " + std::to_string(bytes) + " bytes for " +
                 what_for) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// hwy::AllocateAligned<T>(count), or OutOfMemory naming `what_for` (a count whose bytes overflow
// says so, as SIZE_MAX).
template <class T>
hwy::AlignedFreeUniquePtr<T[]> AllocateOrThrow(std::size_t count, const char* what_for) {
  auto buffer = hwy::AllocateAligned<T>(count);
  if (!buffer) {
    const std::size_t most = std::numeric_limits<std::size_t>::max();
    throw OutOfMemory(what_for, count > most / sizeof(T) ? most : count * sizeof(T));
  }
  return buffer;
}

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_OUT_OF_MEMORY_H_
