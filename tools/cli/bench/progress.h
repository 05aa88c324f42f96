// A one-line progress report on stderr while a bench row runs, only when stderr is a terminal:
// redirected output gets nothing extra.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_PROGRESS_H_
#define EDGEATTN_TOOLS_CLI_BENCH_PROGRESS_H_

#include <chrono>
#include <cstdio>
#include <string>

namespace edgeattn {
namespace cli {

// "1 call, 0.7 s" / "12 calls, 1.4 s".
std::string CallsText(std::size_t calls, double seconds);

class Progress {
 public:
  explicit Progress(std::FILE* stream);

  // Whether a Show now would print: at most ten updates a second.
  bool Due() const;
  // Replaces the line with `text`.
  void Show(const std::string& text);
  // Removes the line, before a row is printed.
  void Clear();

 private:
  std::FILE* stream_;
  bool active_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_PROGRESS_H_
