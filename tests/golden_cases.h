// The PyTorch golden cases in tests/golden (written by tools/make_golden.py).
#ifndef EDGEATTN_TESTS_GOLDEN_CASES_H_
#define EDGEATTN_TESTS_GOLDEN_CASES_H_

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace edgeattn {
namespace testing_support {

struct GoldenCase {
  std::string name;
  std::size_t heads;
  bool cross;
  std::string Path(const std::string& suffix) const;
};

// Directory of the test data: $EDGEATTN_TEST_DATA (set by ctest), else the source tree.
inline std::string TestDataDir() {
  const char* dir = std::getenv("EDGEATTN_TEST_DATA");
  return dir != nullptr ? dir : EDGEATTN_TEST_SOURCE_DIR;
}

inline std::string GoldenCase::Path(const std::string& suffix) const {
  return TestDataDir() + "/golden/" + name + suffix;
}

inline std::vector<GoldenCase> LoadGoldenCases() {
  std::ifstream in(TestDataDir() + "/golden/cases.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<GoldenCase> cases;
  for (const auto& c : doc.at("cases")) {
    cases.push_back({c.at("name").get<std::string>(), c.at("heads").get<std::size_t>(),
                     c.at("cross").get<bool>()});
  }
  return cases;
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_GOLDEN_CASES_H_
