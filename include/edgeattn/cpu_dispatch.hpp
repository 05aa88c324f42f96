// What the library was built with and what it runs on this CPU: the Highway version and the
// targets compiled in, the ones this CPU supports, the one dispatch picks and the oneTBB version
// (`edgeattn info` prints them; the kernels this CPU runs are ProjectionKernels and
// AttentionKernels in edgeattn.hpp).
#ifndef EDGEATTN_CPU_DISPATCH_HPP_
#define EDGEATTN_CPU_DISPATCH_HPP_

#include <string>
#include <vector>

#include "edgeattn/export.hpp"

namespace edgeattn {

// The Highway release the kernels were compiled against, e.g. "1.4.0".
EDGEATTN_API std::string HighwayVersion();
// Highway target names, best first (e.g. "AVX3_DL", "AVX2"; "SVE", "NEON").
EDGEATTN_API std::vector<std::string> CompiledTargets();
EDGEATTN_API std::vector<std::string> SupportedTargets();
EDGEATTN_API std::string ChosenTarget();
// "2021.8.0 (runtime 2021.8.0)": the oneTBB headers built against and the library loaded;
// "" in builds without oneTBB.
EDGEATTN_API std::string TbbVersion();

}  // namespace edgeattn

#endif  // EDGEATTN_CPU_DISPATCH_HPP_
