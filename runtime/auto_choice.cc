// The auto rule (docs/precision.md, "auto"): measured with `edgeattn bench --shape all
// --precision fp32,int8,bf16 --kv-format fp32,bf16,int8 --threads 1`, each choice asks the
// registry for the best kernel of a format and takes the format only where that kernel computes
// in it (a dot-product instruction) rather than widening to fp32, so that a faster kernel
// registered later is picked up without a change here.
#include "runtime/auto_choice.h"

#include <string>
#include <vector>

#include "simd/attention.h"
#include "simd/projection_kernel.h"
#include "simd/targets.h"

namespace edgeattn {
namespace {

// Field `index` of a kernel name's '_'-separated fields ("" past the last).
std::string NameField(const char* name, std::size_t index) {
  const std::string s = name;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < index; ++i) {
    begin = s.find('_', begin);
    if (begin == std::string::npos) return "";
    ++begin;
  }
  return s.substr(begin, s.find('_', begin) - begin);
}

// Whether the best bf16 projection kernel computes in bf16 (f32_bf16w_<instructions>_<tile>):
// AMX measured 1.2x (whisper) to 2.3-9x (tiny, minilm, bert) fp32 in noisy runs, within the
// bf16 bounds (cosine 0.99999); the widening kernel is slower than fp32 (0.84-0.90x), and the
// AVX512-BF16 one, slower still, is listed after it.
bool Bf16ProjectionsComputeInBf16() {
  const std::vector<const simd::ProjectionKernel*> kernels =
      simd::ProjectionKernels(simd::WeightType::kBf16);
  return !kernels.empty() && NameField(kernels.front()->name, 2) != "widen";
}

// Whether the best kernel of a K/V type computes in it (<kv>kv_<arithmetic>_<tile>): the AMX
// bf16 core measured 2.3x fp32 keys and values on whisper; the widening kernels (arithmetic f32)
// 0.88-0.96x, as every call packs its keys and values first.
bool AttentionComputesIn(simd::KvType type) {
  const std::vector<const simd::AttentionKernel*> kernels = simd::AttentionKernels(type);
  return !kernels.empty() && NameField(kernels.front()->name, 1) != "f32";
}

}  // namespace

AutoChoice AutoChoiceForThisCpu() {
  simd::InitDispatch();
  AutoChoice choice;
  // Projections: int8 (1.2-2.5x fp32 with VNNI) misses the outlier bound against the float
  // reference (cosine 0.9983 at d 256, 0.9990 at d 768 with outlier channels; 0.999 needed), as
  // int8 keys and values do; fp16 weights only widen. bf16 where a kernel computes in bf16.
  choice.precision = Bf16ProjectionsComputeInBf16() ? Precision::kBf16 : Precision::kFp32;
  // A forward call's keys and values: bf16 where a kernel computes in bf16. int8 keys and values
  // meet the bounds since their keys are rotated (outliers: cosine 0.99975) but packing them
  // costs more than they save (whisper cross-attention with its projections, 2026-11-26: int8
  // 59.6 ms, AMX bf16 21.5 ms, fp32 26.4 ms), and fp16 refuses keys and values past 65504, which
  // auto must not bring on.
  choice.kv_format = AttentionComputesIn(simd::KvType::kBf16) ? KvFormat::kBf16 : KvFormat::kFp32;
  // A decode step reads every cached byte: int8 (a quarter of fp32's bytes) measured fastest and
  // meets the int8 bounds there (0.99995 normal, 0.99993 outliers, no drift over 2048 steps).
  choice.cache_format = KvFormat::kInt8;
  return choice;
}

namespace {

// Config and LoadOptions alike: their precision and kv_format.
template <class Options>
Options ResolvePrecisionAndKv(const Options& options) {
  if (options.precision != Precision::kAuto && options.kv_format != KvFormat::kAuto) {
    return options;
  }
  const AutoChoice choice = AutoChoiceForThisCpu();
  Options resolved = options;
  if (resolved.precision == Precision::kAuto) resolved.precision = choice.precision;
  if (resolved.kv_format == KvFormat::kAuto) resolved.kv_format = choice.kv_format;
  return resolved;
}

}  // namespace

Config ResolveAuto(const Config& config) { return ResolvePrecisionAndKv(config); }

LoadOptions ResolveAuto(const LoadOptions& options) { return ResolvePrecisionAndKv(options); }

KvCacheOptions ResolveAuto(const KvCacheOptions& options) {
  if (options.format != KvFormat::kAuto) return options;
  KvCacheOptions resolved = options;
  resolved.format = AutoChoiceForThisCpu().cache_format;
  return resolved;
}

}  // namespace edgeattn
