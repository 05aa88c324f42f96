// Tests of what happens when memory runs out: they cap a child process's address space (ulimit
// -v), which cannot be lifted again, so they run in death tests. Sanitizers reserve terabytes of
// address space, so no limit can be set under them: EDGEATTN_SANITIZED says so.
#ifndef EDGEATTN_TESTS_ADDRESS_LIMIT_H_
#define EDGEATTN_TESTS_ADDRESS_LIMIT_H_

#include <sys/resource.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EDGEATTN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define EDGEATTN_SANITIZED 1
#endif
#endif

namespace edgeattn {
namespace testing_support {

// Limits this process's address space to what it maps now plus `headroom` bytes; exits the
// process (code 4 or 5) if it cannot.
inline void LimitAddressSpace(std::size_t headroom) {
  long pages = 0;
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr || std::fscanf(statm, "%ld", &pages) != 1) std::_Exit(4);
  std::fclose(statm);
  const rlim_t limit = static_cast<rlim_t>(pages) * sysconf(_SC_PAGESIZE) + headroom;
  const rlimit as{limit, limit};
  if (setrlimit(RLIMIT_AS, &as) != 0) std::_Exit(5);
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_ADDRESS_LIMIT_H_
