// The public face of simd/targets.h and the oneTBB version, so that programs linking a shared
// libedgeattn (which exports only the public API) can report them.
#include "edgeattn/cpu_dispatch.hpp"

#include "edgeattn/build_config.h"
#if EDGEATTN_WITH_TBB
#include <oneapi/tbb/version.h>
#endif

#include "simd/targets.h"

namespace edgeattn {

std::string HighwayVersion() { return simd::HighwayVersion(); }

std::vector<std::string> CompiledTargets() { return simd::CompiledTargets(); }

std::vector<std::string> SupportedTargets() { return simd::SupportedTargets(); }

std::string ChosenTarget() { return simd::ChosenTarget(); }

std::string TbbVersion() {
#if EDGEATTN_WITH_TBB
  return std::string(TBB_VERSION_STRING) + " (runtime " + TBB_runtime_version() + ")";
#else
  return "";
#endif
}

}  // namespace edgeattn
