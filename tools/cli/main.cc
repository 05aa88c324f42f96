// edgeattn: run, benchmark and inspect multi-head attention from the command line.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "edgeattn/edgeattn.hpp"
#include "tools/cli/commands.h"

namespace {

// A command's status, or 1 when what it wrote to stdout did not all get there (a full disk, a
// closed pipe): the rows would be lost while the exit status said they were written.
int WithStdoutChecked(int status) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  std::fprintf(stderr, "edgeattn: error: writing to stdout failed: %s\n",
               errno != 0 ? std::strerror(errno) : "an earlier write failed");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"edgeattn: multi-head attention on CPUs (PyTorch nn.MultiheadAttention semantics)"};
  app.set_version_flag("--version", std::string("edgeattn ") + edgeattn::Version());
  app.require_subcommand(1);
  const edgeattn::cli::Command commands[] = {
      edgeattn::cli::AddRunCommand(app),
      edgeattn::cli::AddBenchCommand(app),
      edgeattn::cli::AddQuantizeCommand(app),
      edgeattn::cli::AddInfoCommand(app),
  };
  CLI11_PARSE(app, argc, argv);
  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) return WithStdoutChecked(command.run());
    }
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "edgeattn: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgeattn: error: %s\n", e.what());
    return 1;
  }
  return 2;
}
