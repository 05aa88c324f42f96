// The process's resident memory (RSS) and its high-water mark, so that each bench row can say
// how much memory its run reached.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_PROCESS_MEMORY_H_
#define EDGEATTN_TOOLS_CLI_BENCH_PROCESS_MEMORY_H_

#include <cstddef>
#include <optional>

namespace edgeattn {
namespace cli {

// Returns freed heap memory to the system, then starts a new high-water mark at the current
// RSS (Linux: /proc/self/clear_refs "5"). False where the system cannot reset it: the peak
// then counts from the start of the process.
bool ResetPeakRss();

// The high-water mark of the RSS in bytes (Linux: VmHWM; elsewhere getrusage), if known.
std::optional<std::size_t> PeakRssBytes();

// The RSS now (Linux: VmRSS), if known.
std::optional<std::size_t> CurrentRssBytes();

// The machine's physical memory, if known.
std::optional<std::size_t> PhysicalMemoryBytes();

struct RssPeak {
  std::optional<std::size_t> peak_bytes;   // the high-water mark
  std::optional<std::size_t> added_bytes;  // how far it rose above the RSS at the start
};

// The RSS peak over a stretch of work: from construction to Read.
class RssWatch {
 public:
  RssWatch() : reset_(ResetPeakRss()), before_(CurrentRssBytes()) {}
  RssPeak Read() const;

 private:
  bool reset_;
  std::optional<std::size_t> before_;
};

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_PROCESS_MEMORY_H_
