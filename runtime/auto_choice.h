// Precision::kAuto and KvFormat::kAuto resolved to this CPU's choice (AutoChoiceForThisCpu) where
// an operator or a cache is made, so that nothing later sees an auto format.
#ifndef EDGEATTN_RUNTIME_AUTO_CHOICE_H_
#define EDGEATTN_RUNTIME_AUTO_CHOICE_H_

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {

Config ResolveAuto(const Config& config);
LoadOptions ResolveAuto(const LoadOptions& options);
KvCacheOptions ResolveAuto(const KvCacheOptions& options);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_AUTO_CHOICE_H_
