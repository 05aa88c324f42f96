// CSV (RFC 4180): a header of the JSON keys, then one line per row; null is an empty field.
#include <string>

#include "tools/cli/bench/row_writers.h"

namespace edgeattn {
namespace cli {
namespace {

std::string Field(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

class CsvWriter : public RowWriter {
 public:
  CsvWriter(const BenchEnvironment& env, std::FILE* out) : env_(env), out_(out) {}

  void Write(const Row& row) override {
    const nlohmann::ordered_json j = RowToJson(row, env_);
    if (!header_written_) {
      std::string header;
      for (const auto& item : j.items()) header += (header.empty() ? "" : ",") + Field(item.key());
      std::fprintf(out_, "%s\n", header.c_str());
      header_written_ = true;
    }
    std::string line;
    bool first = true;
    for (const auto& item : j.items()) {
      line += (first ? "" : ",") + Field(item.value());
      first = false;
    }
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
  }

 private:
  BenchEnvironment env_;
  std::FILE* out_;
  bool header_written_ = false;
};

}  // namespace

std::unique_ptr<RowWriter> MakeCsvWriter(const BenchEnvironment& env, std::FILE* out) {
  return std::make_unique<CsvWriter>(env, out);
}

}  // namespace cli
}  // namespace edgeattn
