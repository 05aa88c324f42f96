// A whole file, read-only, without a heap copy where the platform can map it.
#ifndef EDGEATTN_RUNTIME_MAPPED_FILE_H_
#define EDGEATTN_RUNTIME_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace edgeattn {

// mmap(PROT_READ, MAP_PRIVATE) on POSIX systems; elsewhere the bytes are read into memory.
// Pages of a mapping are loaded as they are touched and count as clean file-backed memory,
// which the kernel may drop. The file must not be truncated while it is mapped (a read past
// its new end raises SIGBUS), as with every loader that maps weights.
class MappedFile {
 public:
  // Throws edgeattn::Error naming the path when it cannot be opened, read or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
  std::vector<std::uint8_t> copy_;  // the fallback's bytes
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_MAPPED_FILE_H_
