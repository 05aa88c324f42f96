// Whole-file reads and atomic writes for the file formats.
#ifndef EDGEATTN_RUNTIME_FILE_BYTES_H_
#define EDGEATTN_RUNTIME_FILE_BYTES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace edgeattn {

// Throws edgeattn::Error naming the path when it cannot be read.
std::vector<std::uint8_t> ReadFileBytes(const std::string& path);
// Writes to a temporary file beside `path` and renames it over `path`, so that a failed write
// leaves no half-written file.
void WriteFileAtomically(const std::string& path, const std::vector<std::uint8_t>& bytes);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_FILE_BYTES_H_
