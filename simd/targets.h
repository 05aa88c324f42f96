// Which Highway targets the kernels were compiled for and which one runs on this CPU.
#ifndef EDGEATTN_SIMD_TARGETS_H_
#define EDGEATTN_SIMD_TARGETS_H_

#include <string>
#include <vector>

namespace edgeattn {
namespace simd {

// Makes dynamic dispatch consider every target this CPU supports, once per process. Highway
// 1.0.3's own initialisation skips the fixed-width SVE targets (SVE2_128, SVE_256); the
// library calls this before its first dispatched call.
void InitDispatch();

// The Highway release the kernels were compiled against, e.g. "1.4.0".
std::string HighwayVersion();
// Names of the targets compiled into the kernels, best first (e.g. AVX3_DL, AVX3, AVX2, SSE4).
std::vector<std::string> CompiledTargets();
// Names of the compiled targets this CPU can run, best first.
std::vector<std::string> SupportedTargets();
// The target that dynamic dispatch picks for the kernels on this CPU.
std::string ChosenTarget();

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_TARGETS_H_
