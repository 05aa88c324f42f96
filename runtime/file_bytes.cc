#include "runtime/file_bytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace {
std::string ErrnoText() { return std::strerror(errno); }
}  // namespace

std::vector<std::uint8_t> ReadFileBytes(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw Error("cannot open '" + path + "' for reading: " + ErrnoText());
  std::vector<std::uint8_t> bytes;
  std::uint8_t chunk[1 << 16];
  std::size_t got;
  while ((got = std::fread(chunk, 1, sizeof(chunk), f)) > 0) {
    bytes.insert(bytes.end(), chunk, chunk + got);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw Error("cannot read '" + path + "': " + ErrnoText());
  return bytes;
}

void WriteFileAtomically(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  const std::string temp = path + ".tmp";
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (f == nullptr) throw Error("cannot open '" + temp + "' for writing: " + ErrnoText());
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    const std::string why = ErrnoText();
    std::remove(temp.c_str());
    throw Error("cannot write '" + path + "': " + why);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = ErrnoText();
    std::remove(temp.c_str());
    throw Error("cannot rename '" + temp + "' to '" + path + "': " + why);
  }
}

}  // namespace edgeattn
