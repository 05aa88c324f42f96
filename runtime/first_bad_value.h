// The scan behind the weights' finiteness checks, for values of any width.
#ifndef EDGEATTN_RUNTIME_FIRST_BAD_VALUE_H_
#define EDGEATTN_RUNTIME_FIRST_BAD_VALUE_H_

#include <algorithm>
#include <cstddef>

namespace edgeattn {

// The first i in [0, count) for which bad(i) holds, or count when none does. Blocks without an
// early exit, which compilers vectorise (a weight matrix is millions of values); the first bad
// value is looked for only in a block that has one.
template <class Bad>
std::size_t FirstBadValue(std::size_t count, const Bad& bad) {
  constexpr std::size_t kBlock = 1024;
  for (std::size_t begin = 0; begin < count; begin += kBlock) {
    const std::size_t end = std::min(count, begin + kBlock);
    bool any = false;
    for (std::size_t i = begin; i < end; ++i) any |= bad(i);
    if (!any) continue;
    for (std::size_t i = begin; i < end; ++i) {
      if (bad(i)) return i;
    }
  }
  return count;
}

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_FIRST_BAD_VALUE_H_
