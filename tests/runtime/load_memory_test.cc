// Peak memory of loading a float safetensors file: the file is mapped and packed straight from
// the mapping, so the process's peak resident set grows by at most the file plus the packed
// weights (the old loader read the file, copied each tensor, then packed: about 3x the file).
// Its own binary: ru_maxrss is the whole process's peak. EDGEATTN_LOAD_RSS_D sets d_model
// (default 1024: a 16 MiB file; 4096 gives the 256 MiB file the docs quote).
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "tests/scratch_dir.h"

namespace edgeattn {
namespace {

double PeakRssMiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // KiB on Linux
}

// Writes an nn.MultiheadAttention state_dict of width d a MiB at a time, so that writing it
// does not raise the peak being measured. Returns the file's size in bytes.
std::size_t WriteLayer(const std::string& path, std::size_t d) {
  struct Tensor {
    const char* name;
    std::size_t rows, cols;
  };
  const Tensor tensors[] = {{"in_proj_bias", 3 * d, 1}, {"in_proj_weight", 3 * d, d},
                            {"out_proj.bias", d, 1}, {"out_proj.weight", d, d}};
  std::string header = "{";
  std::size_t offset = 0;
  for (const Tensor& t : tensors) {
    const std::size_t bytes = 4 * t.rows * t.cols;
    header += std::string(offset ? "," : "") + "\"" + t.name + "\":{\"dtype\":\"F32\",\"shape\":[" +
              std::to_string(t.rows) + (t.cols > 1 ? "," + std::to_string(t.cols) : "") +
              "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  if (f == nullptr) return 0;
  const std::uint64_t n = header.size();
  std::fwrite(&n, 8, 1, f);  // little-endian hosts
  std::fwrite(header.data(), 1, header.size(), f);
  std::vector<float> chunk(1 << 18);
  std::uint32_t state = 1;
  for (std::size_t left = offset / 4; left > 0;) {
    const std::size_t count = std::min(left, chunk.size());
    for (std::size_t i = 0; i < count; ++i) {
      state = state * 1664525u + 1013904223u;
      chunk[i] = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 0.05f;
    }
    std::fwrite(chunk.data(), 4, count, f);
    left -= count;
  }
  std::fclose(f);
  return 8 + header.size() + offset;
}

TEST(LoadMemoryTest, PeakIsAtMostFilePlusPacked) {
  const char* env = std::getenv("EDGEATTN_LOAD_RSS_D");
  const std::size_t d = env != nullptr ? std::strtoul(env, nullptr, 10) : 1024;
  testing_support::ScratchDir dir;
  const std::string path = dir.Path("layer.safetensors");
  const double file_mib = WriteLayer(path, d) / (1024.0 * 1024.0);
  // fp32 panels of 64 columns: the same floats as the file when d is a multiple of 64.
  const double packed_mib = file_mib;
  const double before = PeakRssMiB();
  const MultiheadAttention mha = MultiheadAttention::Load(path, 16);
  const double growth = PeakRssMiB() - before;
  std::printf("d_model %zu: file %.1f MiB, packed %.1f MiB, peak RSS %.1f MiB before the load, "
              "grew by %.1f MiB (%.2fx the file)\n",
              d, file_mib, packed_mib, before, growth, growth / file_mib);
  EXPECT_EQ(mha.config().d_model, d);
  // Slack for the library's own start-up (dispatch tables, allocator arenas).
  EXPECT_LE(growth, file_mib + packed_mib + 4.0);
}

}  // namespace
}  // namespace edgeattn
