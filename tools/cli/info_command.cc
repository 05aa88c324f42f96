// edgeattn info: what this CPU offers and what the kernels will use on it.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <CLI/CLI.hpp>

#include "edgeattn/cpu_dispatch.hpp"
#include "edgeattn/edgeattn.hpp"
#include "tools/cli/commands.h"
#include "tools/cli/info_weights.h"

namespace edgeattn {
namespace cli {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// CPUID leaf 7 EDX, read directly: clang 14's __builtin_cpu_supports knows none of these names.
void AddLeaf7EdxFeatures(std::vector<std::string>& found) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return;
  const struct {
    unsigned bit;
    const char* name;
  } kFeatures[] = {{23, "avx512fp16"}, {24, "amx-tile"}, {25, "amx-int8"}, {22, "amx-bf16"}};
  for (const auto& feature : kFeatures) {
    if (edx & (1u << feature.bit)) found.emplace_back(feature.name);
  }
  // AVX-VNNI: leaf 7, sub-leaf 1, EAX bit 4.
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 4))) {
    found.emplace_back("avxvnni");
  }
}
#endif

std::vector<std::string> CpuFeatures() {
  std::vector<std::string> found;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
#define EDGEATTN_X86_FEATURE(name) \
  if (__builtin_cpu_supports(name)) found.emplace_back(name);
  EDGEATTN_X86_FEATURE("sse4.2")
  EDGEATTN_X86_FEATURE("avx")
  EDGEATTN_X86_FEATURE("avx2")
  EDGEATTN_X86_FEATURE("fma")
  EDGEATTN_X86_FEATURE("avx512f")
  EDGEATTN_X86_FEATURE("avx512bw")
  EDGEATTN_X86_FEATURE("avx512vl")
  EDGEATTN_X86_FEATURE("avx512vnni")
  EDGEATTN_X86_FEATURE("avx512bf16")
#undef EDGEATTN_X86_FEATURE
  AddLeaf7EdxFeatures(found);
#elif defined(__aarch64__) && defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  if (hwcap & HWCAP_ASIMD) found.emplace_back("neon");
  if (hwcap & HWCAP_ASIMDHP) found.emplace_back("fp16");
  if (hwcap & HWCAP_ASIMDDP) found.emplace_back("dotprod");
  if (hwcap & HWCAP_SVE) found.emplace_back("sve");
#ifdef HWCAP2_SVE2
  if (hwcap2 & HWCAP2_SVE2) found.emplace_back("sve2");
#endif
#ifdef HWCAP2_BF16
  if (hwcap2 & HWCAP2_BF16) found.emplace_back("bf16");
#endif
#ifdef HWCAP2_I8MM
  if (hwcap2 & HWCAP2_I8MM) found.emplace_back("i8mm");
#endif
  (void)hwcap2;
#endif
  return found;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : " ") + item;
  return out.empty() ? "(none)" : out;
}

// What a default Context (as `run` and `bench` build one) runs on.
void PrintThreadPool() {
  const Context context;
  const Executor& pool = context.executor();
  std::printf("threads:             %zu\n", context.threads());
  std::printf("thread pool:         %s\n", pool.kind());
  std::printf("spinning:            %s\n",
              pool.spins() ? "allowed (idle workers spin briefly before they sleep)"
                           : "off (idle workers sleep at once)");
  const std::string tbb = TbbVersion();
  std::printf("oneTBB:              %s\n", tbb.empty() ? "(not built in)" : tbb.c_str());
}

}  // namespace

Command AddInfoCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand(
      "info", "Print the CPU's SIMD features, the Highway version and targets and the thread pool "
              "a context uses");
  auto weights = std::make_shared<std::string>();
  app->add_option("--weights", *weights,
                  "Instead: list the attention layers a safetensors checkpoint holds (prefix, "
                  "family, d_model, kv dim, heads, biases, dtype, shapes)")
      ->check(CLI::ExistingFile);
  return {app, [weights] {
            if (!weights->empty()) return PrintAttentionLayers(*weights);
            std::printf("cpu features:        %s\n", Join(CpuFeatures()).c_str());
            std::printf("highway version:     %s\n", HighwayVersion().c_str());
            std::printf("highway compiled:    %s\n", Join(CompiledTargets()).c_str());
            std::printf("highway supported:   %s\n", Join(SupportedTargets()).c_str());
            std::printf("highway chosen:      %s\n", ChosenTarget().c_str());
            std::printf("fp32 kernels:        %s\n",
                        Join(edgeattn::ProjectionKernels(Precision::kFp32)).c_str());
            const std::vector<std::string> int8 = edgeattn::ProjectionKernels(Precision::kInt8);
            std::printf("int8 kernels:        %s\n", Join(int8).c_str());
            // What an operator built without Config::projection_kernel uses.
            std::printf("int8 chosen:         %s\n", int8.empty() ? "(none)" : int8[0].c_str());
            std::printf("bf16 kernels:        %s\n",
                        Join(edgeattn::ProjectionKernels(Precision::kBf16)).c_str());
            std::printf("fp16 kernels:        %s\n",
                        Join(edgeattn::ProjectionKernels(Precision::kFp16)).c_str());
            std::printf("attention kernels:   %s\n", Join(edgeattn::AttentionKernels()).c_str());
            // A KV cache's format picks its decode steps' kernel (edgeattn::KvCacheOptions).
            for (edgeattn::KvFormat format : {edgeattn::KvFormat::kBf16, edgeattn::KvFormat::kFp16,
                                              edgeattn::KvFormat::kInt8}) {
              const std::string label = "kv " + std::string(KvFormatName(format)) + " kernels:";
              std::printf("%-21s%s\n", label.c_str(),
                          Join(edgeattn::AttentionKernels(format)).c_str());
            }
            // What Precision::kAuto and KvFormat::kAuto resolve to here (docs/precision.md).
            const edgeattn::AutoChoice choice = edgeattn::AutoChoiceForThisCpu();
            const std::vector<std::string> projection =
                edgeattn::ProjectionKernels(choice.precision);
            std::printf("auto precision:      %s (%s)\n", PrecisionName(choice.precision),
                        projection.empty() ? "(none)" : projection[0].c_str());
            std::printf("auto kv forward:     %s (%s)\n", KvFormatName(choice.kv_format),
                        edgeattn::AttentionKernels(choice.kv_format).front().c_str());
            std::printf("auto kv cache:       %s (%s)\n", KvFormatName(choice.cache_format),
                        edgeattn::AttentionKernels(choice.cache_format).front().c_str());
            PrintThreadPool();
            return 0;
          }};
}

}  // namespace cli
}  // namespace edgeattn
