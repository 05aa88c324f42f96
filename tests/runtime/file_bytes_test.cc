// Atomic writes: a unique temporary created exclusively (a planted symlink or file at any name
// is neither followed nor destroyed), permissions as numpy.save users expect, nothing left
// behind on failure; output path checks; memory-mapped reads.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "runtime/file_bytes.h"
#include "runtime/mapped_file.h"
#include "tests/scratch_dir.h"

namespace edgeattn {
namespace {

using testing_support::ScratchDir;

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }

mode_t Mode(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode;
}

// Sets the umask for one scope.
class Umask {
 public:
  explicit Umask(mode_t mask) : old_(::umask(mask)) {}
  ~Umask() { ::umask(old_); }

 private:
  mode_t old_;
};

// The attack on the old writer: `<output>.tmp` planted as a symlink to a victim file, and a
// user's own file of that name. Neither is opened, followed or destroyed.
TEST(FileBytesTest, PlantedTemporaryNamesAreNotTouched) {
  ScratchDir dir;
  WriteText(dir.Path("victim"), "precious");
  ASSERT_EQ(::symlink(dir.Path("victim").c_str(), dir.Path("out.npy.tmp").c_str()), 0);
  WriteText(dir.Path("other.npy.tmp"), "mine");
  WriteFileAtomically(dir.Path("out.npy"), Bytes("new output"));
  WriteFileAtomically(dir.Path("other.npy"), Bytes("other output"));
  EXPECT_EQ(Contents(dir.Path("victim")), "precious");
  EXPECT_TRUE(S_ISLNK(Mode(dir.Path("out.npy.tmp"))));
  EXPECT_EQ(Contents(dir.Path("other.npy.tmp")), "mine");
  EXPECT_EQ(Contents(dir.Path("out.npy")), "new output");
  EXPECT_EQ(Contents(dir.Path("other.npy")), "other output");
  std::vector<std::string> names = dir.Names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"other.npy", "other.npy.tmp", "out.npy",
                                             "out.npy.tmp", "victim"}));
}

TEST(FileBytesTest, NewFilesFollowTheUmaskExistingFilesKeepTheirMode) {
  ScratchDir dir;
  {
    const Umask mask(022);
    WriteFileAtomically(dir.Path("new"), Bytes("x"));
    EXPECT_EQ(Mode(dir.Path("new")) & 0777, 0644u);
    WriteText(dir.Path("private"), "old");
    ASSERT_EQ(::chmod(dir.Path("private").c_str(), 0600), 0);
    WriteFileAtomically(dir.Path("private"), Bytes("new"));
    EXPECT_EQ(Mode(dir.Path("private")) & 0777, 0600u);
    EXPECT_EQ(Contents(dir.Path("private")), "new");
  }
  const Umask mask(077);
  WriteFileAtomically(dir.Path("strict"), Bytes("x"));
  EXPECT_EQ(Mode(dir.Path("strict")) & 0777, 0600u);
  WriteText(dir.Path("shared"), "old");
  ASSERT_EQ(::chmod(dir.Path("shared").c_str(), 0664), 0);
  WriteFileAtomically(dir.Path("shared"), Bytes("new"));
  EXPECT_EQ(Mode(dir.Path("shared")) & 0777, 0664u);
}

// A symlink at the output path itself is replaced; what it pointed to stays as it was.
TEST(FileBytesTest, SymlinkAtTheOutputIsReplacedNotFollowed) {
  ScratchDir dir;
  WriteText(dir.Path("target"), "untouched");
  ASSERT_EQ(::symlink(dir.Path("target").c_str(), dir.Path("link").c_str()), 0);
  WriteFileAtomically(dir.Path("link"), Bytes("written"));
  EXPECT_TRUE(S_ISREG(Mode(dir.Path("link"))));
  EXPECT_EQ(Contents(dir.Path("link")), "written");
  EXPECT_EQ(Contents(dir.Path("target")), "untouched");
}

TEST(FileBytesTest, FailuresLeaveNothingBehind) {
  ScratchDir dir;
  ASSERT_EQ(::mkdir(dir.Path("sub").c_str(), 0755), 0);
  EXPECT_THROW(WriteFileAtomically(dir.Path("sub"), Bytes("x")), Error);  // a directory
  EXPECT_THROW(WriteFileAtomically(dir.Path("missing/x"), Bytes("x")), Error);
  {
    StagedFile staged(dir.Path("never"), Bytes("x"));  // destroyed without Commit
  }
  EXPECT_EQ(dir.Names(), std::vector<std::string>{"sub"});
}

TEST(FileBytesTest, StagedFilesCommitTogether) {
  ScratchDir dir;
  WriteText(dir.Path("a"), "old a");
  std::vector<StagedFile> staged;
  staged.emplace_back(dir.Path("a"), Bytes("new a"));
  staged.emplace_back(dir.Path("b"), Bytes("new b"));
  EXPECT_EQ(Contents(dir.Path("a")), "old a");  // nothing replaced before Commit
  EXPECT_EQ(dir.Names().size(), 3u);            // a and two temporaries
  for (StagedFile& file : staged) file.Commit();
  EXPECT_EQ(Contents(dir.Path("a")), "new a");
  EXPECT_EQ(Contents(dir.Path("b")), "new b");
  EXPECT_EQ(dir.Names().size(), 2u);
}

TEST(FileBytesTest, CheckOutputPath) {
  ScratchDir dir;
  ASSERT_EQ(::mkdir(dir.Path("sub").c_str(), 0755), 0);
  const auto expect_error = [](const std::string& path, const std::string& fragment) {
    try {
      CheckOutputPath(path, "--output");
      ADD_FAILURE() << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--output '" + path + "'"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error(dir.Path("missing/y.npy"), "does not exist");
  expect_error(dir.Path("sub"), "expected a file, got a directory");
  expect_error(dir.Path("sub/"), "expected a file name");
  expect_error(dir.Path("sub/.."), "expected a file name");
  expect_error("", "expected a file name");
  WriteText(dir.Path("plain"), "x");
  expect_error(dir.Path("plain/y.npy"), "does not exist");  // a file is no directory
  // A device or pipe would be replaced by the renamed file, not written: refused, and left.
  ASSERT_EQ(::mkfifo(dir.Path("pipe.npy").c_str(), 0644), 0);
  expect_error(dir.Path("pipe.npy"), "expected a regular file or a new name, got a named pipe");
  struct stat st;
  ASSERT_EQ(::lstat(dir.Path("pipe.npy").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  if (::access("/dev", W_OK | X_OK) == 0) {  // root: else /dev itself is refused first
    expect_error("/dev/null", "expected a regular file or a new name, got a device");
  }
  // One file, many spellings.
  const std::string a = CheckOutputPath(dir.Path("out.npy"), "a");
  EXPECT_EQ(CheckOutputPath(dir.Path("./out.npy"), "b"), a);
  EXPECT_EQ(CheckOutputPath(dir.Path("sub/../out.npy"), "c"), a);
  ASSERT_EQ(::symlink(dir.path().c_str(), dir.Path("alias").c_str()), 0);
  EXPECT_EQ(CheckOutputPath(dir.Path("alias/out.npy"), "d"), a);
  EXPECT_TRUE(SameOutput(a, CheckOutputPath(dir.Path("alias/out.npy"), "d")));
  EXPECT_FALSE(SameOutput(a, CheckOutputPath(dir.Path("other.npy"), "e")));
  WriteText(dir.Path("out.npy"), "x");
  ASSERT_EQ(::link(dir.Path("out.npy").c_str(), dir.Path("hard.npy").c_str()), 0);
  EXPECT_TRUE(SameOutput(a, CheckOutputPath(dir.Path("hard.npy"), "f")));
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(CheckOutputPath("rel.npy", "g"), std::string(cwd) + "/rel.npy");
}

TEST(FileBytesTest, MappedFile) {
  ScratchDir dir;
  WriteText(dir.Path("f"), "mapped bytes");
  const MappedFile mapped(dir.Path("f"));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(mapped.data()), mapped.size()),
            "mapped bytes");
  WriteText(dir.Path("empty"), "");
  EXPECT_EQ(MappedFile(dir.Path("empty")).size(), 0u);
  EXPECT_THROW(MappedFile(dir.Path("missing")), Error);
  try {
    MappedFile m(dir.path());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected a regular file, got a directory"),
              std::string::npos) << e.what();
  }
  // A FIFO has no writer: opening it must not wait for one.
  ASSERT_EQ(::mkfifo(dir.Path("fifo").c_str(), 0600), 0);
  EXPECT_THROW(MappedFile(dir.Path("fifo")), Error);
}

}  // namespace
}  // namespace edgeattn
