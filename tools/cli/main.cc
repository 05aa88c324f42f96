// edgeattn: run, benchmark and inspect multi-head attention from the command line.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "edgeattn/edgeattn.hpp"
#include "tools/cli/commands.h"

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
      if (command.app->parsed()) return command.run();
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
