// bench's --threads list against a CPU count the test sets (tools/cli/bench/count_lists.h).
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "tools/cli/bench/count_lists.h"

namespace edgeattn {
namespace {

using Counts = std::vector<std::size_t>;

// 0 is all CPUs: listed with the count it equals, the configuration is measured once, under
// whichever was given first (0 stays 0 for Context to resolve).
TEST(CliCountListsTest, ThreadCountsMeasureAllCpusOnce) {
  EXPECT_EQ(cli::ParseThreadCounts("0,2", 2), (Counts{0}));
  EXPECT_EQ(cli::ParseThreadCounts("2,0", 2), (Counts{2}));
  EXPECT_EQ(cli::ParseThreadCounts("1:4,0", 4), (Counts{1, 2, 3, 4}));
  EXPECT_EQ(cli::ParseThreadCounts("1,0", 1), (Counts{1}));
  EXPECT_EQ(cli::ParseThreadCounts("0,2", 4), (Counts{0, 2}));
  EXPECT_EQ(cli::ParseThreadCounts("0,0,3,3", 8), (Counts{0, 3}));
}

// Not given: 1 and all CPUs, or 1 alone on a machine of one.
TEST(CliCountListsTest, ThreadCountsDefault) {
  EXPECT_EQ(cli::ParseThreadCounts("", 8), (Counts{1, 0}));
  EXPECT_EQ(cli::ParseThreadCounts("", 1), (Counts{1}));
}

}  // namespace
}  // namespace edgeattn
