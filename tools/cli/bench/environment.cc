#include "tools/cli/bench/environment.h"

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/cpu_dispatch.hpp"

namespace edgeattn {
namespace cli {
namespace {

// The first processor's "key : value" lines of /proc/cpuinfo.
std::map<std::string, std::string> FirstCpuInfo() {
  std::map<std::string, std::string> fields;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() && !fields.empty()) break;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    const std::size_t value = line.find_first_not_of(' ', colon + 1);
    fields.emplace(key, value == std::string::npos ? "" : line.substr(value));
  }
  return fields;
}

// x86 names a model ("model name", plus family and model numbers, which tell apart CPUs that a
// hypervisor reports by a generic name); ARM Linux gives implementer and part numbers.
std::string LinuxCpuModel() {
  const std::map<std::string, std::string> f = FirstCpuInfo();
  const auto get = [&](const char* key) {
    const auto it = f.find(key);
    return it == f.end() ? std::string() : it->second;
  };
  if (!get("model name").empty()) {
    std::string name = get("model name");
    if (!get("cpu family").empty() && !get("model").empty()) {
      name += " (family " + get("cpu family") + ", model " + get("model") + ")";
    }
    return name;
  }
  if (!get("CPU implementer").empty()) {
    return "implementer " + get("CPU implementer") + ", part " + get("CPU part");
  }
  return get("Hardware");
}

}  // namespace

std::string CpuModel() {
#if defined(__APPLE__)
  char brand[256] = {};
  std::size_t size = sizeof(brand) - 1;
  if (sysctlbyname("machdep.cpu.brand_string", brand, &size, nullptr, 0) == 0 && brand[0]) {
    return brand;
  }
#endif
  const std::string model = LinuxCpuModel();
  return model.empty() ? "unknown" : model;
}

std::optional<double> LoadAverage() {
#if defined(__linux__) || defined(__APPLE__)
  double load[1];
  if (getloadavg(load, 1) == 1) return load[0];
#endif
  return std::nullopt;
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
#if defined(_WIN32)
  gmtime_s(&utc, &now);
#else
  gmtime_r(&now, &utc);
#endif
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

BenchEnvironment DetectEnvironment() {
  return {Version(), CpuModel(), HighwayVersion(), ChosenTarget()};
}

}  // namespace cli
}  // namespace edgeattn
