// Atomic writes for the file formats, and the checks an output path gets before a program
// computes what it will write there. (Reads: runtime/mapped_file.h.)
#ifndef EDGEATTN_RUNTIME_FILE_BYTES_H_
#define EDGEATTN_RUNTIME_FILE_BYTES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace edgeattn {

// An output written in full under a fresh temporary name in the target's directory, put in
// place by Commit() (a rename, atomic on POSIX file systems). The temporary is created
// exclusively (O_CREAT | O_EXCL | O_NOFOLLOW with a random name, retried on a clash), so no
// planted file or symlink is opened or overwritten; destroying an uncommitted StagedFile
// removes it. Permissions: a new file gets 0666 minus the umask, as open() and numpy.save give;
// an existing regular file keeps its permission bits (its owner becomes the writer; hard links
// to it keep the old contents). A symlink at `path` is replaced by the new file; the link's
// target is not touched.
class StagedFile {
 public:
  StagedFile(const std::string& path, const std::vector<std::uint8_t>& bytes);
  ~StagedFile();
  StagedFile(StagedFile&& other) noexcept;
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;
  StagedFile& operator=(StagedFile&&) = delete;

  void Commit();

 private:
  std::string path_;
  std::string temp_;  // empty once committed or moved from
};

// StagedFile(path, bytes).Commit(): a failed write leaves no half-written file.
void WriteFileAtomically(const std::string& path, const std::vector<std::uint8_t>& bytes);

// Checks that `path` can become an output before anything is computed: its directory exists
// and is writable, and `path` is not a directory. `what` names the argument in the error
// ("--output"). Returns the path with its directory resolved (symlinks, "." and ".."), which
// names one output whatever the spelling.
std::string CheckOutputPath(const std::string& path, const std::string& what);

// Whether two checked outputs are the same file: equal resolved paths, or existing files
// with the same device and inode (case-insensitive file systems, hard links).
bool SameOutput(const std::string& resolved_a, const std::string& resolved_b);

// Throws when the output `path` (checked: `resolved` is CheckOutputPath's) is the existing file
// `input` names, however spelled (its resolved path, or the same device and inode): a run must
// not replace a file it reads. `what` and `input_what` name the arguments.
void CheckOutputIsNotInput(const std::string& resolved, const std::string& what,
                           const std::string& path, const std::string& input_what,
                           const std::string& input);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_FILE_BYTES_H_
