// What the library was built with and what it runs on this CPU: the Highway version and the
// targets compiled in, the ones this CPU supports, the one dispatch picks, the int8 dot-product
// path and the oneTBB version (`edgeattn info` prints them).
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
// The int8 dot-product instruction the int8 kernels use here, e.g. "sdot" or "vpdpbusd".
EDGEATTN_API const char* Int8Path();
// "2021.8.0 (runtime 2021.8.0)": the oneTBB headers built against and the library loaded;
// "" in builds without oneTBB.
EDGEATTN_API std::string TbbVersion();

}  // namespace edgeattn

#endif  // EDGEATTN_CPU_DISPATCH_HPP_
