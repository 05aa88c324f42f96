// Options whose value is a list of names separated by commas (`--shape tiny,bert`). CLI11's own
// delimiter drops empty items, so that `--precision fp32,,int8` measured fp32 and int8 and
// `--shape tiny,` tiny alone: these options take their text whole, checked here, and are split
// into their names once parsing is done.
#ifndef EDGEATTN_TOOLS_CLI_NAME_LIST_H_
#define EDGEATTN_TOOLS_CLI_NAME_LIST_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace edgeattn {
namespace cli {

// Checks one value: names separated by commas, none empty, each one of `names` (any name where
// `names` is empty). Its description lists them, as CLI::IsMember's does in --help.
CLI::Validator NameList(const std::vector<std::string>& names);

// The names of each value, in order: {"fp32,int8", "bf16"} -> {"fp32", "int8", "bf16"}.
std::vector<std::string> SplitNameLists(const std::vector<std::string>& values);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_NAME_LIST_H_
