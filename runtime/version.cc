// The version compiled into the library, for callers to compare with the headers' macros.
#include "edgeattn/edgeattn.hpp"

namespace edgeattn {

const char* Version() { return EDGEATTN_VERSION_STRING; }

}  // namespace edgeattn
