// KvFormat: its names, the attention kernels that read each format, and the operator's and a
// cache's choice among them.
#include <cstring>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "runtime/kv_cache_state.h"
#include "runtime/multihead_attention_impl.h"
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
    case KvFormat::kAuto:
      break;  // resolved by the operator or the cache before a kernel is chosen
  }
  throw Error(std::string(name) + ": expected kFp32, kBf16, kFp16, kInt8 or kAuto (0 to 4), got " +
              std::to_string(static_cast<int>(format)));
}

std::string KernelNames(KvFormat format) {
  std::string names;
  for (const std::string& name : AttentionKernels(format)) {
    names += (names.empty() ? "" : ", ") + name;
  }
  return names;
}

// The format whose kernels include `name` on this CPU, if any (for an error that says which).
const char* FormatOfKernel(const std::string& name) {
  for (KvFormat format : {KvFormat::kFp32, KvFormat::kBf16, KvFormat::kFp16, KvFormat::kInt8}) {
    if (simd::FindAttentionKernel(KvTypeOf(format, "format"), name.c_str()) != nullptr) {
      return KvFormatName(format);
    }
  }
  return nullptr;
}

// The kernel `name` among format's, or an error for `field` naming the format's kernels (and
// the format that `name` belongs to, if another).
const simd::AttentionKernel& NamedKernel(KvFormat format, const std::string& name,
                                         const std::string& field, const char* format_field) {
  const simd::AttentionKernel* named =
      simd::FindAttentionKernel(KvTypeOf(format, format_field), name.c_str());
  if (named != nullptr) return *named;
  const char* other = FormatOfKernel(name);
  const std::string why = other != nullptr
                              ? " ('" + name + "' stores keys and values as " + other + ": set " +
                                    format_field + " to " + other + " or leave " + field + " empty)"
                              : "";
  throw Error(field + ": expected one of the " + KvFormatName(format) +
              " attention kernels this CPU runs (" + KernelNames(format) + "), got '" + name + "'" +
              why);
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
    case KvFormat::kAuto:
      return "auto";
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

const simd::AttentionKernel& ChooseAttentionKernel(const Config& config) {
  const simd::KvType type = KvTypeOf(config.kv_format, "Config.kv_format");
  if (config.attention_kernel.empty()) return *simd::AttentionKernels(type).front();
  return NamedKernel(config.kv_format, config.attention_kernel, "Config.attention_kernel",
                     "Config.kv_format");
}

namespace {

// The kernel of a cache's decode steps when none is named: a step has one or a few query rows
// per head, too few for the kernels that round the query to bf16 for AMX tiles (16 rows) or
// vdpbf16ps, which lead the bf16 list for forward calls. At one row both read at the memory's
// rate: whole steps (d 768, 2048 cached, thread CPU time, 31 alternating rounds, 2026-11-26)
// took AMX / widening 0.98x with fp32 weights and 1.00x with int8 weights, a tie within the
// noise, while the widening kernel keeps the query and probabilities in fp32: cosine against an
// fp32 cache 0.9999896 against the AMX kernel's 0.9999726 (KvFormatTest). Other formats: their
// best.
const simd::AttentionKernel& DecodeKernel(simd::KvType type) {
  const std::vector<const simd::AttentionKernel*> kernels = simd::AttentionKernels(type);
  for (const simd::AttentionKernel* kernel : kernels) {
    if (std::strncmp(std::strstr(kernel->name, "kv_") + 3, "bf16", 4) != 0) return *kernel;
  }
  return *kernels.front();
}

}  // namespace

const simd::AttentionKernel& ChooseCacheKernel(const MultiheadAttention& mha,
                                               const KvCacheOptions& options) {
  const simd::KvType type = KvTypeOf(options.format, "options.format");
  if (options.attention_kernel.empty()) {
    const Config& config = mha.config();
    if (options.format == config.kv_format && !config.attention_kernel.empty()) {
      return *simd::FindAttentionKernel(type, mha.attention_kernel());
    }
    return DecodeKernel(type);
  }
  return NamedKernel(options.format, options.attention_kernel, "options.attention_kernel",
                     "options.format");
}

}  // namespace edgeattn
