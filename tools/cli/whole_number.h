// The check of every count and size option: CLI11 reads "-5" into an unsigned option as
// 2^64 - 5 and an overflowing value as 2^64 - 1, which the options' own range checks would then
// report as those numbers.
#ifndef EDGEATTN_TOOLS_CLI_WHOLE_NUMBER_H_
#define EDGEATTN_TOOLS_CLI_WHOLE_NUMBER_H_

#include <string>

namespace edgeattn {
namespace cli {

// "" for decimal digits below 2^64; else what was expected and what came (CLI11 prefixes the
// option's name).
std::string CheckWholeNumber(const std::string& text);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_WHOLE_NUMBER_H_
