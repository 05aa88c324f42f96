#include "tools/cli/bench/count_lists.h"

#include <algorithm>

#include "edgeattn/edgeattn.hpp"
#include "runtime/text_checks.h"

namespace edgeattn {
namespace cli {
namespace {

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// A whole decimal number, or nothing.
bool ParseCount(const std::string& text, std::size_t* value) {
  if (text.empty() || text.size() > 18) return false;
  *value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    *value = *value * 10 + static_cast<std::size_t>(c - '0');
  }
  return true;
}

struct Limits {
  const std::string& option;
  std::size_t min, max;
};

void AddValue(const Limits& l, std::size_t v, std::vector<std::size_t>* out) {
  if (v < l.min || v > l.max) {
    throw Error(l.option + ": expected values in [" + Str(l.min) + ", " + Str(l.max) + "], got " +
                Str(v));
  }
  if (out->size() == kMaxListValues) {
    throw Error(l.option + ": expected at most " + Str(kMaxListValues) + " values");
  }
  out->push_back(v);
}

// start:end[:xF | :+S]
void AddSweep(const Limits& l, const std::string& item, std::vector<std::size_t>* out) {
  const std::vector<std::string> parts = Split(item, ':');
  std::size_t start = 0, end = 0, step = 1;
  const bool geometric = parts.size() == 3 && !parts[2].empty() && parts[2][0] == 'x';
  const bool steps_ok = parts.size() == 2 ||
                        (parts.size() == 3 && !parts[2].empty() &&
                         (parts[2][0] == 'x' || parts[2][0] == '+') &&
                         ParseCount(parts[2].substr(1), &step));
  if (parts.size() > 3 || !ParseCount(parts[0], &start) || !ParseCount(parts[1], &end) ||
      !steps_ok) {
    throw Error(l.option + ": expected a sweep START:END:xFACTOR or START:END:+STEP, got '" +
                item + "'");
  }
  if (start > end) {
    throw Error(l.option + ": sweep '" + item + "' starts above its end");
  }
  if (geometric ? (step < 2 || start == 0) : step == 0) {
    throw Error(l.option + ": sweep '" + item + "' never advances (" +
                (geometric ? "factor >= 2 and start >= 1" : "step >= 1") + " expected)");
  }
  for (std::size_t v = start; v <= end;) {
    AddValue(l, v, out);
    if (geometric ? v > end / step : end - v < step) break;
    v = geometric ? v * step : v + step;
  }
}

// Each listed value once, in the order first given.
std::vector<std::size_t> Distinct(const std::vector<std::size_t>& values) {
  std::vector<std::size_t> out;
  for (std::size_t v : values) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

}  // namespace

std::vector<std::size_t> ParseCountList(const std::string& option, const std::string& text,
                                        std::size_t min, std::size_t max) {
  const Limits limits{option, min, max};
  std::vector<std::size_t> values;
  for (const std::string& item : Split(text, ',')) {
    std::size_t v = 0;
    if (item.find(':') != std::string::npos) {
      AddSweep(limits, item, &values);
    } else if (ParseCount(item, &v)) {
      AddValue(limits, v, &values);
    } else {
      throw Error(option + ": expected " + kCountListExpected + ", got '" + item + "'");
    }
  }
  return Distinct(values);
}

std::vector<std::size_t> ParseThreadCounts(const std::string& text, std::size_t all_cpus) {
  const std::string counts = text.empty() ? "1,0" : text;
  const auto resolved = [all_cpus](std::size_t n) { return n == 0 ? all_cpus : n; };
  std::vector<std::size_t> distinct;
  for (std::size_t n : ParseCountList("--threads", counts, 0, kMaxThreads)) {
    const auto same = [&](std::size_t m) { return resolved(m) == resolved(n); };
    if (std::none_of(distinct.begin(), distinct.end(), same)) distinct.push_back(n);
  }
  return distinct;
}

}  // namespace cli
}  // namespace edgeattn
