// A buffer the system cannot give fails the call with std::bad_alloc (the C API:
// EDGEATTN_ERROR_OUT_OF_MEMORY) saying which buffer needed how many bytes, where it said only
// "std::bad_alloc" (C: "out of memory").
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/benchmark_case.h"
#include "tests/address_limit.h"

namespace edgeattn {
namespace {

#ifndef EDGEATTN_SANITIZED
// A cache whose keys, 2^20 positions x 1024 channels of fp32, take 4 GiB.
struct HugeCache {
  static constexpr std::size_t kDModel = 1024, kHeads = 16, kMaxLength = std::size_t{1} << 20;
  static std::string KeysMessage() {
    return "out of memory: could not allocate " +
           std::to_string(kMaxLength * kDModel * sizeof(float)) + " bytes for the KV cache's keys";
  }
};

// The child's headroom, which no 4 GiB buffer fits.
constexpr std::size_t kHeadroom = std::size_t{256} << 20;

// In a child process: a KvCache too large for the limit; exits 0 when its error names it.
[[noreturn]] void CacheUnderAddressLimit() {
  const RandomModel model(HugeCache::kDModel, HugeCache::kHeads);
  const MultiheadAttention mha(model.config, model.view());
  const std::string want = HugeCache::KeysMessage();
  testing_support::LimitAddressSpace(kHeadroom);
  try {
    const KvCache cache(mha, HugeCache::kMaxLength);
    std::_Exit(2);
  } catch (const std::bad_alloc& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::_Exit(e.what() == want ? 0 : 3);
  }
}

// The same through the C API: the status, and the thread's last error naming the buffer.
[[noreturn]] void CApiCacheUnderAddressLimit() {
  const std::size_t d = HugeCache::kDModel;
  const std::vector<float> w(4 * d * d, 0.01f);
  edgeattn_config config{};
  config.d_model = d;
  config.num_heads = HugeCache::kHeads;
  edgeattn_weights weights{};
  weights.in_proj_weight = w.data();
  weights.in_proj_weight_size = 3 * d * d;
  weights.out_proj_weight = w.data() + 3 * d * d;
  weights.out_proj_weight_size = d * d;
  edgeattn_operator* op = nullptr;
  if (edgeattn_operator_create(&config, &weights, &op) != EDGEATTN_OK) std::_Exit(6);
  const std::string want = HugeCache::KeysMessage();
  testing_support::LimitAddressSpace(kHeadroom);
  edgeattn_kv_cache* cache = nullptr;
  const edgeattn_status status = edgeattn_kv_cache_create(op, HugeCache::kMaxLength, 1, &cache);
  std::fprintf(stderr, "%s\n", edgeattn_last_error());
  std::_Exit(status == EDGEATTN_ERROR_OUT_OF_MEMORY && cache == nullptr &&
                     edgeattn_last_error() == want
                 ? 0
                 : 3);
}

// The standard library's std::bad_alloc (not an OutOfMemory) reaches a C caller as
// EDGEATTN_ERROR_OUT_OF_MEMORY saying "out of memory": here the float copies a load makes of F16
// weights (48 MiB for in_proj_weight) under a limit of 16 MiB more than the process holds.
[[noreturn]] void CApiPlainBadAllocUnderAddressLimit() {
  constexpr std::size_t d = 2048;
  const std::vector<std::uint16_t> zeros(3 * d * d, 0);
  SafetensorsWriter writer;
  writer.Add("in_proj_weight", DType::kF16, {3 * d, d}, zeros.data());
  writer.Add("out_proj.weight", DType::kF16, {d, d}, zeros.data());
  const std::vector<std::uint8_t> bytes = writer.Serialize();
  edgeattn_load_options options{};
  options.num_heads = 16;
  edgeattn_operator* op = nullptr;
  testing_support::LimitAddressSpace(std::size_t{16} << 20);
  const edgeattn_status status =
      edgeattn_operator_load_memory(bytes.data(), bytes.size(), &options, &op);
  std::fprintf(stderr, "%d %s\n", static_cast<int>(status), edgeattn_last_error());
  std::_Exit(status == EDGEATTN_ERROR_OUT_OF_MEMORY && op == nullptr &&
                     std::string(edgeattn_last_error()) == "out of memory"
                 ? 0
                 : 3);
}
#endif

// Under an address-space limit (ulimit -v), in a child process, since the limit cannot be lifted.
TEST(OutOfMemoryDeathTest, ErrorNamesTheBufferAndItsBytes) {
#ifdef EDGEATTN_SANITIZED
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: no limit can be set";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(CacheUnderAddressLimit(), ::testing::ExitedWithCode(0), HugeCache::KeysMessage());
  EXPECT_EXIT(CApiCacheUnderAddressLimit(), ::testing::ExitedWithCode(0), HugeCache::KeysMessage());
#endif
}

TEST(OutOfMemoryDeathTest, CApiReportsAStandardBadAlloc) {
#ifdef EDGEATTN_SANITIZED
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: no limit can be set";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(CApiPlainBadAllocUnderAddressLimit(), ::testing::ExitedWithCode(0),
              "2 out of memory");
#endif
}

}  // namespace
}  // namespace edgeattn
