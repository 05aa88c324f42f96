// The per-Context scratch memory.
#include "runtime/workspace.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <new>
#include <string>

namespace edgeattn {
namespace {

// A Reserve whose allocation fails throws std::bad_alloc, saying what needed how many bytes,
// and leaves the workspace usable: the next call allocates again. (It had kept its old capacity
// over a null buffer, so that a Context's next call within that capacity wrote through a null
// pointer.) SIZE_MAX / 4 floats: Highway refuses the size itself, so that no allocator (nor a
// sanitizer's) is asked for it.
TEST(WorkspaceTest, FailedReserveLeavesItUsable) {
  Workspace workspace;
  ASSERT_NE(workspace.Reserve(1000), nullptr);
  const std::size_t floats = std::numeric_limits<std::size_t>::max() / 4;
  try {
    workspace.Reserve(floats);
    ADD_FAILURE() << "no exception";
  } catch (const std::bad_alloc& e) {
    EXPECT_EQ(std::string(e.what()), "out of memory: could not allocate " +
                                         std::to_string(floats * sizeof(float)) +
                                         " bytes for the context's scratch memory");
  }
  float* again = workspace.Reserve(1000);
  ASSERT_NE(again, nullptr);
  again[0] = again[999] = 1.0f;
  EXPECT_EQ(workspace.bytes(), 1000 * sizeof(float));
}

}  // namespace
}  // namespace edgeattn
