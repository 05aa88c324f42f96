// What the rows of a bench group call: a forward pass or a decode step on seeded inputs, and
// the float reference of its output.
#ifndef EDGEATTN_TOOLS_CLI_BENCH_WORKLOAD_H_
#define EDGEATTN_TOOLS_CLI_BENCH_WORKLOAD_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "runtime/benchmark_case.h"
#include "tools/cli/bench/bench_options.h"

namespace edgeattn {
namespace cli {

// One operator and context, ready to be timed.
class WorkloadRun {
 public:
  virtual ~WorkloadRun() = default;
  virtual void Call() = 0;
  // What the last call wrote, laid out as Workload::Reference's output.
  virtual const std::vector<float>& output() const = 0;
  virtual std::size_t cache_bytes() const { return 0; }
  // A self-attention decode step's KV cache: bytes per position and its attention kernel.
  virtual std::size_t cache_bytes_per_position() const { return 0; }
  virtual const char* cache_kernel() const { return nullptr; }
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual double flops() const = 0;            // of one call (ForwardFlops / DecodeFlops)
  virtual double reference_flops() const = 0;  // of one reference call
  virtual void Reference(std::vector<float>* out) const = 0;
  // `mha` and `context` must outlive the run; a KV cache, if the run has one, is made as `kv`.
  virtual std::unique_ptr<WorkloadRun> Start(const MultiheadAttention& mha, Context& context,
                                             const KvCacheOptions& kv) const = 0;
  // Whether Start's runs hold a KV cache (whose format a row may choose).
  virtual bool has_cache() const { return false; }
};

// The model must outlive the workload.
std::unique_ptr<Workload> MakeForwardWorkload(const BenchGroup& group, const RandomModel& model);
std::unique_ptr<Workload> MakeDecodeWorkload(const BenchGroup& group, const RandomModel& model);
std::unique_ptr<Workload> MakeCrossStepWorkload(const BenchGroup& group, const RandomModel& model);

inline std::unique_ptr<Workload> MakeWorkload(const BenchGroup& group, const RandomModel& model) {
  if (!group.decode) return MakeForwardWorkload(group, model);
  const bool cross =
      group.step == DecodeStep::kCrossMemory || group.step == DecodeStep::kCrossReproject;
  return cross ? MakeCrossStepWorkload(group, model) : MakeDecodeWorkload(group, model);
}

}  // namespace cli
}  // namespace edgeattn

#endif  // EDGEATTN_TOOLS_CLI_BENCH_WORKLOAD_H_
