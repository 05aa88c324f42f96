// The edgeattn subcommands: each registers its options on the app and runs when chosen.
#ifndef EDGEATTN_TOOLS_CLI_COMMANDS_H_
#define EDGEATTN_TOOLS_CLI_COMMANDS_H_

#include <functional>

#include "tools/cli/cli_app.h"

namespace edgeattn {
namespace cli {

struct Command {
  CLI::App* app;              // the subcommand, for checking whether it was chosen
  std::function<int()> run;   // returns the exit code
};

Command AddRunCommand(CLI::App& parent);
Command AddBenchCommand(CLI::App& parent);
Command AddInfoCommand(CLI::App& parent);
Command AddQuantizeCommand(CLI::App& parent);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_COMMANDS_H_
