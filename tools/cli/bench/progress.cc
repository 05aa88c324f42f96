#include "tools/cli/bench/progress.h"

#if defined(_WIN32)
#include <io.h>
#define EDGEATTN_ISATTY(fd) _isatty(fd)
#define EDGEATTN_FILENO(f) _fileno(f)
#else
#include <unistd.h>
#define EDGEATTN_ISATTY(fd) isatty(fd)
#define EDGEATTN_FILENO(f) fileno(f)
#endif

namespace edgeattn {
namespace cli {

std::string CallsText(std::size_t calls, double seconds) {
  char text[64];
  std::snprintf(text, sizeof(text), "%zu call%s, %.1f s", calls, calls == 1 ? "" : "s", seconds);
  return text;
}

Progress::Progress(std::FILE* stream)
    : stream_(stream), active_(EDGEATTN_ISATTY(EDGEATTN_FILENO(stream)) != 0) {}

bool Progress::Due() const {
  return active_ && (!shown_ || std::chrono::steady_clock::now() - last_ >=
                                    std::chrono::milliseconds(100));
}

void Progress::Show(const std::string& text) {
  if (!active_) return;
  // \r and "erase to the end of the line" (ANSI), so a shorter text leaves nothing behind.
  std::fprintf(stream_, "\r%s\033[K", text.c_str());
  std::fflush(stream_);
  shown_ = true;
  last_ = std::chrono::steady_clock::now();
}

void Progress::Clear() {
  if (!shown_) return;
  std::fprintf(stream_, "\r\033[K");
  std::fflush(stream_);
  shown_ = false;
}

}  // namespace cli
}  // namespace edgeattn
