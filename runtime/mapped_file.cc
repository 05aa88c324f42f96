#include "runtime/mapped_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "edgeattn/edgeattn.hpp"

#if defined(__unix__) || defined(__APPLE__)
#define EDGEATTN_HAVE_MMAP 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace edgeattn {

#if EDGEATTN_HAVE_MMAP
namespace {

// Closes the descriptor on every path out of the constructor; a mapping outlives it.
struct Descriptor {
  int fd;
  ~Descriptor() { ::close(fd); }
};

}  // namespace

MappedFile::MappedFile(const std::string& path) {
  const auto fail = [&](const std::string& what) {
    return Error("cannot " + what + " '" + path + "': " + std::strerror(errno));
  };
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then rejects it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw fail("open");
  const Descriptor closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) throw fail("stat");
  if (!S_ISREG(st.st_mode)) {
    throw Error("cannot read '" + path + "': expected a regular file, got " +
                (S_ISDIR(st.st_mode) ? "a directory" : "a device, FIFO or socket"));
  }
  if (static_cast<std::uintmax_t>(st.st_size) > std::numeric_limits<std::size_t>::max()) {
    throw Error("cannot map '" + path + "': " + std::to_string(st.st_size) +
                " bytes exceed this platform's address space");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ == 0) return;  // mmap rejects empty mappings; there is nothing to read
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) throw fail("map");
  data_ = static_cast<const std::uint8_t*>(p);
  mapped_ = true;
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}
#else
MappedFile::MappedFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  std::uint8_t chunk[1 << 16];
  std::size_t got;
  while ((got = std::fread(chunk, 1, sizeof(chunk), f)) > 0) {
    copy_.insert(copy_.end(), chunk, chunk + got);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  data_ = copy_.data();
  size_ = copy_.size();
}

MappedFile::~MappedFile() = default;
#endif

}  // namespace edgeattn
