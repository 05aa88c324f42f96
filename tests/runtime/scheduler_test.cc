// Scheduling: results independent of thread count and executor, executors that run every worker
// once, concurrent callers, and no CPU burned once a call has returned.
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "runtime/benchmark_case.h"

namespace edgeattn {
namespace {

std::vector<float> RunShape(const MultiheadAttention& mha, const ShapeSpec& s,
                            const std::vector<float>& x, Context& context) {
  std::vector<float> y(x.size());
  mha.Forward(context, {x.data(), 1, s.seq, s.d_model}, {y.data(), 1, s.seq, s.d_model});
  return y;
}

TEST(SchedulerTest, ContractShapesBitIdenticalForAnyThreadCount) {
  for (const ShapeSpec& s : ContractShapes()) {
   for (Precision precision : {Precision::kFp32, Precision::kInt8}) {
    SCOPED_TRACE(s.name + (precision == Precision::kInt8 ? " int8" : " fp32"));
    const RandomModel model(s.d_model, s.heads);
    Config config = model.config;
    config.precision = precision;
    const MultiheadAttention mha(config, model.view());
    const std::vector<float> x = RandomActivations(s.seq * s.d_model);
    Context one(1);
    const std::vector<float> expected = RunShape(mha, s, x, one);
    for (std::size_t threads : {2, 3, 4, 7}) {
      Context context(threads);
      EXPECT_EQ(0, std::memcmp(RunShape(mha, s, x, context).data(), expected.data(),
                               expected.size() * sizeof(float)))
          << threads << " oneTBB threads";
    }
    const auto pool = MakeThreadPoolExecutor(3);
    Context pooled(*pool);
    EXPECT_EQ(RunShape(mha, s, x, pooled), expected) << "std::thread pool";
   }
  }
}

TEST(ThreadPoolTest, RunsEveryWorkerOnceAndMatchesSerial) {
  const auto pool = MakeThreadPoolExecutor(3);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> calls(pool->workers());
    pool->RunWorkers([&](std::size_t w) { calls[w].fetch_add(1); });
    for (const auto& c : calls) ASSERT_EQ(c.load(), 1);
  }
  const ShapeSpec& s = ContractShapes()[0];
  const RandomModel model(s.d_model, s.heads);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations(s.seq * s.d_model);
  SerialExecutor serial(3);
  Context serial_context(serial), pooled(*pool);
  EXPECT_EQ(RunShape(mha, s, x, pooled), RunShape(mha, s, x, serial_context));
}

TEST(SchedulerTest, ExecutorsRunEveryWorkerOnce) {
  std::vector<std::unique_ptr<Executor>> executors;
  executors.push_back(MakeTbbExecutor(3));
  executors.push_back(MakeThreadPoolExecutor(4));
  executors.push_back(std::make_unique<SerialExecutor>(5));
  for (const auto& executor : executors) {
    for (int round = 0; round < 50; ++round) {
      std::vector<std::atomic<int>> calls(executor->workers());
      executor->RunWorkers([&](std::size_t w) { calls[w].fetch_add(1); });
      for (const auto& c : calls) ASSERT_EQ(c.load(), 1);
    }
  }
  EXPECT_GE(MakeTbbExecutor(0)->workers(), 1u);
  EXPECT_GE(MakeThreadPoolExecutor(0)->workers(), 1u);
}

// 8 application threads share one operator, each calling forward with its own context from
// make_context(caller); every output equals the single-threaded one.
template <class MakeContext>
void ExpectCallersAgree(const MakeContext& make_context) {
  const RandomModel model(48, 6, 21);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations(40 * 48, 22);
  std::vector<float> expected(x.size());
  Context serial(1);
  mha.Forward(serial, {x.data(), 1, 40, 48}, {expected.data(), 1, 40, 48});
  std::vector<std::vector<float>> outs(8, std::vector<float>(x.size()));
  std::vector<std::thread> callers;
  for (std::size_t t = 0; t < outs.size(); ++t) {
    callers.emplace_back([&, t] {
      const std::unique_ptr<Context> context = make_context(t);
      for (int rep = 0; rep < 5; ++rep) {
        mha.Forward(*context, {x.data(), 1, 40, 48}, {outs[t].data(), 1, 40, 48});
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (const auto& out : outs) EXPECT_EQ(out, expected);
}

TEST(SchedulerTest, ManyCallersWithOwnOneTbbContexts) {
  ExpectCallersAgree([](std::size_t caller) { return std::make_unique<Context>(caller % 2 + 1); });
}

TEST(ThreadPoolTest, ManyCallersShareOneThreadPool) {
  const auto pool = MakeThreadPoolExecutor(2);
  // One context per caller on one pool: the executor serialises their phases.
  ExpectCallersAgree([&](std::size_t) { return std::make_unique<Context>(*pool); });
}

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// After a forward call returns, the process sleeps: no worker spins waiting for more work.
TEST(SchedulerTest, QuietWhenIdle) {
  const ShapeSpec& s = ContractShapes()[1];
  const RandomModel model(s.d_model, s.heads);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations(s.seq * s.d_model);
  Context tbb(2);
  const auto pool = MakeThreadPoolExecutor(2);
  Context pooled(*pool);
  for (Context* context : {&tbb, &pooled}) {
    for (int i = 0; i < 20; ++i) RunShape(mha, s, x, *context);
    const double before = ProcessCpuSeconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double idle_cpu_ms = (ProcessCpuSeconds() - before) * 1e3;
    RecordProperty("idle_cpu_ms", std::to_string(idle_cpu_ms));
    std::printf("CPU time over 200 ms idle after forward (%zu threads): %.2f ms\n",
                context->threads(), idle_cpu_ms);
    // A spinning worker would burn ~200 ms; a sleeping pool a fraction of a millisecond.
    EXPECT_LT(idle_cpu_ms, 20.0);
  }
}

}  // namespace
}  // namespace edgeattn
