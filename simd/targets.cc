#include "simd/targets.h"

#include <stdint.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/targets.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/highway_compat.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace simd {
namespace HWY_NAMESPACE {

int64_t CurrentTarget() { return HWY_TARGET; }

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {
namespace simd {

HWY_EXPORT(CurrentTarget);

namespace {
std::vector<std::string> TargetNames(int64_t bits) {
  std::vector<std::string> names;
  // Highway numbers better targets with lower bits. Unsigned: g++ puts SCALAR at bit 62, and a
  // signed bit shifted past it is undefined (and negative, below every mask).
  const uint64_t mask = static_cast<uint64_t>(bits);
  for (uint64_t bit = 1; bit != 0 && bit <= mask; bit <<= 1) {
    if (mask & bit) names.emplace_back(hwy::TargetName(static_cast<int64_t>(bit)));
  }
  return names;
}
}  // namespace

std::string HighwayVersion() { return EDGEATTN_HWY_VERSION_STRING; }

std::vector<std::string> CompiledTargets() { return TargetNames(HWY_TARGETS); }

namespace {
// Highway 1.0.3's SupportedTargets() re-initialises the chosen target from its first probe,
// which lacks the fixed-width SVE targets; choosing again from its full answer restores them.
int64_t QuerySupportedTargets() {
  const int64_t targets = hwy::SupportedTargets();
  hwy::GetChosenTarget().Update(targets);
  return targets;
}
}  // namespace

void InitDispatch() {
  static const int64_t once = QuerySupportedTargets();
  (void)once;
}

std::string ChosenTarget() {
  InitDispatch();
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(CurrentTarget)());
}

std::vector<std::string> SupportedTargets() {
  return TargetNames(QuerySupportedTargets() & HWY_TARGETS);
}

}  // namespace simd
}  // namespace edgeattn
#endif  // HWY_ONCE
