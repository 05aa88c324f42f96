// Bench rows as text: a table, JSON lines, CSV or Markdown, one row at a time as rows finish.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_ROW_WRITERS_H_
#define EDGEATTN_TOOLS_CLI_BENCH_ROW_WRITERS_H_

#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/cli/bench/bench_options.h"
#include "tools/cli/bench/environment.h"
#include "tools/cli/bench/row.h"

namespace edgeattn {
namespace cli {

class RowWriter {
 public:
  virtual ~RowWriter() = default;
  virtual void Write(const Row& row) = 0;
};

std::unique_ptr<RowWriter> MakeRowWriter(OutputFormat format, const BenchEnvironment& env,
                                         std::FILE* out);

// Every field of a row, in a fixed order with the same keys for every row (null where a row
// has no value): the JSON lines, and the columns of the CSV.
nlohmann::ordered_json RowToJson(const Row& row, const BenchEnvironment& env);

// The kernels a row ran, e.g. "qd8_qc8w_vnni_4x4v + <attention kernel> (AVX3_DL)".
std::string RowKernels(const Row& row, const BenchEnvironment& env);

std::unique_ptr<RowWriter> MakeJsonLinesWriter(const BenchEnvironment& env, std::FILE* out);
std::unique_ptr<RowWriter> MakeCsvWriter(const BenchEnvironment& env, std::FILE* out);
std::unique_ptr<RowWriter> MakeTableWriter(const BenchEnvironment& env, std::FILE* out,
                                           bool markdown);

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_ROW_WRITERS_H_
