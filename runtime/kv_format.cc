// KvFormat: its names, the attention kernels that read each format, and a cache's choice.
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "runtime/kv_cache_state.h"
#include "runtime/text_checks.h"
#include "simd/attention.h"

namespace edgeattn {
namespace {

// The kernels' storage type of a format; an error naming `name` for a value outside the enum.
simd::KvType KvTypeOf(KvFormat format, const char* name) {
  switch (format) {
    case KvFormat::kFp32:
      return simd::KvType::kF32;
    case KvFormat::kBf16:
      return simd::KvType::kBf16;
    case KvFormat::kFp16:
      return simd::KvType::kF16;
    case KvFormat::kInt8:
      return simd::KvType::kI8;
  }
  throw Error(std::string(name) + ": expected kFp32, kBf16, kFp16 or kInt8 (0 to 3), got " +
              std::to_string(static_cast<int>(format)));
}

}  // namespace

const char* KvFormatName(KvFormat format) {
  switch (format) {
    case KvFormat::kFp32:
      return "fp32";
    case KvFormat::kBf16:
      return "bf16";
    case KvFormat::kFp16:
      return "fp16";
    case KvFormat::kInt8:
      return "int8";
  }
  return "unknown";
}

std::vector<std::string> AttentionKernels(KvFormat format) {
  std::vector<std::string> names;
  for (const simd::AttentionKernel* kernel : simd::AttentionKernels(KvTypeOf(format, "format"))) {
    names.emplace_back(kernel->name);
  }
  return names;
}

const simd::AttentionKernel& ChooseCacheKernel(const simd::AttentionKernel& operator_kernel,
                                               const KvCacheOptions& options) {
  const simd::KvType type = KvTypeOf(options.format, "options.format");
  if (options.attention_kernel.empty()) {
    if (type == simd::KvType::kF32) return operator_kernel;
    return *simd::AttentionKernels(type).front();
  }
  const simd::AttentionKernel* named =
      simd::FindAttentionKernel(type, options.attention_kernel.c_str());
  if (named != nullptr) return *named;
  std::string names;
  for (const std::string& name : AttentionKernels(options.format)) {
    names += (names.empty() ? "" : ", ") + name;
  }
  throw Error("options.attention_kernel: expected one of the " +
              std::string(KvFormatName(options.format)) + " cache's kernels this CPU runs (" +
              names + "), got '" + options.attention_kernel + "'");
}

}  // namespace edgeattn
