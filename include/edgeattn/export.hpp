// Marks the public API. The library is built with -fvisibility=hidden: a shared libedgeattn
// exports only what carries EDGEATTN_API / EDGEATTN_C_API (and its version script keeps the
// standard library's template instantiations in too). A static libedgeattn marks nothing, so
// an app's shared library that links it exports only the app's own symbols.
#ifndef EDGEATTN_EXPORT_HPP_
#define EDGEATTN_EXPORT_HPP_

#include "edgeattn/build_config.h"

#if EDGEATTN_SHARED_LIBRARY && (defined(__GNUC__) || defined(__clang__))
#define EDGEATTN_API __attribute__((visibility("default")))
#else
#define EDGEATTN_API
#endif
/* On the definitions (in the library's own headers) of the internal types nested in exported
 * classes (MultiheadAttention::Impl, Context::State, ...), which would otherwise inherit the
 * class's visibility. Not on their declarations here: a consumer's compiler would warn that the
 * class is more visible than its field. */
#if defined(__GNUC__) || defined(__clang__)
#define EDGEATTN_HIDDEN __attribute__((visibility("hidden")))
#else
#define EDGEATTN_HIDDEN
#endif

#endif  // EDGEATTN_EXPORT_HPP_
