#include "tools/cli/bench/process_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <fstream>
#include <string>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if !defined(_WIN32)
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace edgeattn {
namespace cli {
namespace {

#if defined(__linux__)
// A "Name:   1234 kB" line of /proc/self/status.
std::optional<std::size_t> StatusKilobytes(const char* name) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::size_t n = std::strlen(name);
  while (std::getline(status, line)) {
    if (line.compare(0, n, name) == 0 && line.size() > n && line[n] == ':') {
      return static_cast<std::size_t>(std::strtoull(line.c_str() + n + 1, nullptr, 10)) * 1024;
    }
  }
  return std::nullopt;
}
#endif

}  // namespace

bool ResetPeakRss() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
#if defined(__linux__)
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool written = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && written;
#else
  return false;
#endif
}

std::optional<std::size_t> PeakRssBytes() {
#if defined(__linux__)
  return StatusKilobytes("VmHWM");
#elif !defined(_WIN32)
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return std::nullopt;
#if defined(__APPLE__)
  return static_cast<std::size_t>(usage.ru_maxrss);  // bytes on macOS and iOS
#else
  return static_cast<std::size_t>(usage.ru_maxrss) * 1024;
#endif
#else
  return std::nullopt;
#endif
}

std::optional<std::size_t> CurrentRssBytes() {
#if defined(__linux__)
  return StatusKilobytes("VmRSS");
#else
  return std::nullopt;
#endif
}

std::optional<std::size_t> PhysicalMemoryBytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) {
    return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size);
  }
#endif
  return std::nullopt;
}

RssPeak RssWatch::Read() const {
  RssPeak r;
  r.peak_bytes = PeakRssBytes();
  if (reset_ && before_ && r.peak_bytes) {
    r.added_bytes = *r.peak_bytes - std::min(*r.peak_bytes, *before_);
  }
  return r;
}

}  // namespace cli
}  // namespace edgeattn
