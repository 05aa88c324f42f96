// Runs the edgeattn program for the CLI tests and splits what it prints.
#ifndef EDGEATTN_TESTS_TOOLS_CLI_RUNNER_H_
#define EDGEATTN_TESTS_TOOLS_CLI_RUNNER_H_

#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace edgeattn {
namespace cli_test {

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr
};

// Runs the program; `redirect` says what the result's output holds (default: stdout and stderr).
inline Result RunCli(const std::string& args, const std::string& redirect = "2>&1") {
  const std::string command = std::string(EDGEATTN_CLI_PATH) + " " + args + " " + redirect;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  Result result{0, ""};
  char buf[4096];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), pipe)) > 0) result.output.append(buf, got);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  // A crash is never the refusal a test expects: with only EXPECT_NE(exit_code, 0) and the
  // message (std::terminate prints what() too), one passed. sh reports the program's signal as
  // 128 + n; the program's own codes are 0-2 and CLI11's 100-127.
  EXPECT_TRUE(result.exit_code >= 0 && result.exit_code < 128)
      << "edgeattn " << args << ": killed by a signal (status " << status << ")\n"
      << result.output;
  return result;
}

// Runs a shell command with stderr on a pseudo-terminal and returns what it wrote there.
inline std::string RunOnTerminal(const std::string& command) {
  int terminal = -1, child_side = -1;
  if (openpty(&terminal, &child_side, nullptr, nullptr, nullptr) != 0) return "openpty failed";
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(child_side, STDERR_FILENO);
    close(terminal);
    close(child_side);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(child_side);
  std::string out;
  char buf[4096];
  ssize_t got;
  // read fails (EIO) once the child's side is closed.
  while ((got = read(terminal, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(got));
  close(terminal);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

// The JSON objects among a command's output lines.
inline std::vector<nlohmann::json> JsonLines(const std::string& output) {
  std::vector<nlohmann::json> lines;
  std::size_t start = 0;
  while (start < output.size()) {
    const std::size_t end = output.find('\n', start);
    const std::string line = output.substr(start, end - start);
    if (!line.empty() && line[0] == '{') lines.push_back(nlohmann::json::parse(line));
    start = end == std::string::npos ? output.size() : end + 1;
  }
  return lines;
}

inline std::vector<std::string> Lines(const std::string& output) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < output.size()) {
    const std::size_t end = output.find('\n', start);
    lines.push_back(output.substr(start, end - start));
    start = end == std::string::npos ? output.size() : end + 1;
  }
  return lines;
}

// A small custom shape measured quickly; the options under test come after it.
inline const std::string kSmallBench =
    "bench --d-model 24 --heads 3 --min-time 0.01 --min-calls 3 ";

// The rows of a small bench run that must succeed, as JSON.
inline std::vector<nlohmann::json> SmallBenchRows(const std::string& args) {
  const Result r = RunCli(kSmallBench + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return JsonLines(r.output);
}

}  // namespace cli_test
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_TOOLS_CLI_RUNNER_H_
