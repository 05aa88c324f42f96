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
  bool causal = false;
  bool key_padding_mask = false;  // _key_padding_mask.npy (bool [B, Lk])
  bool attn_mask = false;         // _attn_mask.npy (float or bool)
  std::string weights{};          // "", "averaged" or "per_head": _weights.npy
  std::vector<std::size_t> lengths{};     // per batch item (also as _key_padding_mask.npy)
  std::vector<std::size_t> decode_steps{};  // replay as KV-cache decode steps
  std::string prefix{};  // the layer's prefix in a whole-model checkpoint
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
    GoldenCase g{c.at("name").get<std::string>(), c.at("heads").get<std::size_t>(),
                 c.at("cross").get<bool>()};
    g.causal = c.value("causal", false);
    g.key_padding_mask = c.value("key_padding_mask", false);
    g.attn_mask = c.value("attn_mask", false);
    g.weights = c.value("weights", std::string());
    g.lengths = c.value("lengths", std::vector<std::size_t>());
    g.decode_steps = c.value("decode_steps", std::vector<std::size_t>());
    g.prefix = c.value("prefix", std::string());
    cases.push_back(g);
  }
  return cases;
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_GOLDEN_CASES_H_
