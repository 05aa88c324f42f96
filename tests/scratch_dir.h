// A fresh directory per test (tests run as parallel processes), removed with its contents.
#ifndef EDGEATTN_TESTS_SCRATCH_DIR_H_
#define EDGEATTN_TESTS_SCRATCH_DIR_H_

#include <dirent.h>
#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace edgeattn {
namespace testing_support {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = ::testing::TempDir() + "edgeattn-test-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~ScratchDir() {
    if (!path_.empty()) {
      ::nftw(path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) {
        return std::remove(p);
      }, 16, FTW_DEPTH | FTW_PHYS);
    }
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Path(const std::string& name) const { return path_ + "/" + name; }

  // The names in the directory, "." and ".." left out.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    DIR* dir = ::opendir(path_.c_str());
    if (dir == nullptr) return names;
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
    return names;
  }

 private:
  std::string path_;
};

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_SCRATCH_DIR_H_
