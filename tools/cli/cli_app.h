// CLI11's App, declared: the headers of the commands and options name it, and only the sources
// that register options compile CLI11 itself (its inline code is most of a source's compile time).
#ifndef EDGEATTN_TOOLS_CLI_CLI_APP_H_
#define EDGEATTN_TOOLS_CLI_CLI_APP_H_

namespace CLI {
class App;
}  // namespace CLI

#endif  // EDGEATTN_TOOLS_CLI_CLI_APP_H_
