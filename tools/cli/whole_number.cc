#include "tools/cli/whole_number.h"

#include <cerrno>
#include <cstdlib>

namespace edgeattn {
namespace cli {

std::string CheckWholeNumber(const std::string& text) {
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  errno = 0;
  if (digits) std::strtoull(text.c_str(), nullptr, 10);
  if (digits && errno != ERANGE) return "";
  return "expected a whole number below 2^64, got '" + text + "'";
}

std::function<std::string(const std::string&)> NotEmpty(const std::string& expected) {
  return [expected](const std::string& text) {
    return text.empty() ? "expected " + expected + ", got an empty value" : std::string();
  };
}

}  // namespace cli
}  // namespace edgeattn
