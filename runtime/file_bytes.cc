#include "runtime/file_bytes.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

// "dir/name" -> "dir/", "name" -> "".
std::string DirectoryPart(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string RandomHex() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(rng()));
  return text;
}

// Creates a new file beside `path` that nobody else can have opened or linked: O_EXCL fails on
// any existing name, symlinks included.
int CreateExclusive(const std::string& path, std::string* temp) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    *temp = DirectoryPart(path) + ".edgeattn-" + RandomHex() + ".tmp";
    const int fd =
        ::open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno is EEXIST: 64 clashes with random names
}

bool WriteAll(int fd, const std::vector<std::uint8_t>& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// An existing regular file's permission bits carry over to its replacement.
bool KeepMode(int fd, const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return true;
  return ::fchmod(fd, st.st_mode & 07777) == 0;
}

}  // namespace

StagedFile::StagedFile(const std::string& path, const std::vector<std::uint8_t>& bytes)
    : path_(path) {
  const int fd = CreateExclusive(path, &temp_);
  if (fd < 0) {
    const std::string why = ErrnoText();
    temp_.clear();
    throw Error("cannot create a temporary file beside '" + path + "': " + why);
  }
  const bool ok = WriteAll(fd, bytes) && KeepMode(fd, path) && ::fsync(fd) == 0;
  const std::string why = ErrnoText();
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed) {
    ::unlink(temp_.c_str());
    temp_.clear();
    throw Error("cannot write '" + path + "': " + why);
  }
}

StagedFile::StagedFile(StagedFile&& other) noexcept
    : path_(std::move(other.path_)), temp_(std::move(other.temp_)) {
  other.temp_.clear();
}

StagedFile::~StagedFile() {
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void StagedFile::Commit() {
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    throw Error("cannot replace '" + path_ + "' with the new file: " + ErrnoText());
  }
  temp_.clear();
}

void WriteFileAtomically(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  StagedFile(path, bytes).Commit();
}

std::string CheckOutputPath(const std::string& path, const std::string& what) {
  const std::string where = what + " '" + path + "': ";
  if (path.empty() || path.back() == '/') throw Error(where + "expected a file name");
  std::string dir = DirectoryPart(path);
  const std::string name = path.substr(dir.size());
  if (name == "." || name == "..") throw Error(where + "expected a file name, got a directory");
  if (dir.empty()) dir = ".";
  char resolved[PATH_MAX];
  struct stat st;
  if (::realpath(dir.c_str(), resolved) == nullptr) {
    throw Error(where + "the directory '" + dir + "' " +
                (errno == ENOENT || errno == ENOTDIR ? std::string("does not exist")
                                                     : "cannot be resolved: " + ErrnoText()));
  }
  if (::access(resolved, W_OK | X_OK) != 0) {
    throw Error(where + "the directory '" + dir + "' is not writable");
  }
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(where + "expected a file, got a directory");
    // The new file is renamed over the path: a device, pipe or socket there would be replaced,
    // not written (as root, /dev/full itself).
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
      throw Error(where + "expected a regular file or a new name, got " +
                  (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                   : S_ISFIFO(st.st_mode)                     ? "a named pipe"
                                                              : "a socket"));
    }
  }
  return std::string(resolved) + (resolved[1] == '\0' ? "" : "/") + name;
}

bool SameOutput(const std::string& resolved_a, const std::string& resolved_b) {
  if (resolved_a == resolved_b) return true;
  struct stat a, b;
  return ::lstat(resolved_a.c_str(), &a) == 0 && ::lstat(resolved_b.c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void CheckOutputIsNotInput(const std::string& resolved, const std::string& what,
                           const std::string& path, const std::string& input_what,
                           const std::string& input) {
  char resolved_input[PATH_MAX];
  if (::realpath(input.c_str(), resolved_input) == nullptr) return;  // no such file to replace
  if (SameOutput(resolved, resolved_input)) {
    throw Error(what + " '" + path + "': names the file " + input_what + " '" + input +
                "' reads (an output never replaces an input)");
  }
}

}  // namespace edgeattn
