// The count lists of `edgeattn bench` (--seq, --key-len, --decode, --threads): a number, a list,
// a sweep or a mix, as text until the plan reads it.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_COUNT_LISTS_H_
#define EDGEATTN_TOOLS_CLI_BENCH_COUNT_LISTS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace edgeattn {
namespace cli {

// What a count list is, for its errors.
inline constexpr char kCountListExpected[] =
    "a number, a list such as 64,128 or a sweep such as 64:4096:x2";

// "64,128,256", "64:4096:x2" (x: times a factor), "64:512:+64" (+: plus a step), "1:4" (+1),
// or a mix separated by commas; every value in [min, max], at most kMaxListValues values; each
// value once, in the order first given. Throws Error naming `option`.
std::vector<std::size_t> ParseCountList(const std::string& option, const std::string& text,
                                        std::size_t min, std::size_t max);
inline constexpr std::size_t kMaxListValues = 1000;

// --threads: "" (not given) is "1,0"; 0 is all CPUs, `all_cpus` here (what a Context of 0
// threads runs on). A count equal to one listed before it is dropped, 0 included: --threads 0,2
// with 2 CPUs is {0}, one row of 2 threads. 0 stays 0, for Context to resolve.
std::vector<std::size_t> ParseThreadCounts(const std::string& text, std::size_t all_cpus);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_COUNT_LISTS_H_
