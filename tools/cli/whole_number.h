// The checks of option text that CLI11 would misread: it reads "-5" into an unsigned option as
// 2^64 - 5 and an overflowing value as 2^64 - 1, which the options' own range checks would then
// report as those numbers; and it takes an empty value as no value (a text option stays unset,
// a number option becomes 0), so that `--seq ''` ran the shape's own lengths.
#ifndef EDGEATTN_TOOLS_CLI_WHOLE_NUMBER_H_
#define EDGEATTN_TOOLS_CLI_WHOLE_NUMBER_H_

#include <functional>
#include <string>

namespace edgeattn {
namespace cli {

// "" for decimal digits below 2^64; else what was expected and what came (CLI11 prefixes the
// option's name). Every count and size option has it.
std::string CheckWholeNumber(const std::string& text);

// A check that refuses the empty text, saying that `expected` was expected: for the options
// whose empty value CLI11 would read as none (lists kept as text, float and file options).
std::function<std::string(const std::string&)> NotEmpty(const std::string& expected);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_WHOLE_NUMBER_H_
