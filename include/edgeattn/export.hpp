// Marks the public API. The library is built with -fvisibility=hidden, so only what carries
// EDGEATTN_API is exported from a shared libedgeattn (or from an app's shared library that links
// the static one).
#ifndef EDGEATTN_EXPORT_HPP_
#define EDGEATTN_EXPORT_HPP_

#if defined(__GNUC__) || defined(__clang__)
#define EDGEATTN_API __attribute__((visibility("default")))
#else
#define EDGEATTN_API
#endif

#endif  // EDGEATTN_EXPORT_HPP_
