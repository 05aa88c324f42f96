// Scheduling: results independent of thread count and executor, executors that run every worker
// once (and one breaking its contract), calls from inside pools, concurrent callers, and no CPU
// burned once a call has returned. concurrent_use_test.cc, in this binary, has the objects one
// call uses that another thread tries.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "runtime/benchmark_case.h"
#include "runtime/c_thread_pool.h"
#include "runtime/parallel_for_items.h"
#include "tests/address_limit.h"
#include "tests/expect_error.h"

namespace edgeattn {
namespace {

using testing_support::ExpectError;

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
            << threads << " threads on the default executor (" << context.executor().kind() << ")";
      }
      const auto pool = MakeThreadPoolExecutor(3);
      Context pooled(*pool);
      EXPECT_EQ(RunShape(mha, s, x, pooled), expected) << "std::thread pool";
    }
  }
}

// Grouped-query heads with many query chunks: every attention item of a batch item reads its one
// key/value head, packed in the workspace or appended to a cache. Forward and decode steps,
// bit-identical for any thread count and executor.
std::vector<float> RunSharedKeyValueHead(const MultiheadAttention& mha, Context& context) {
  constexpr std::size_t kBatch = 2, kLength = 300, kD = 64;
  const std::vector<float> x = RandomActivations(kBatch * kLength * kD, 5);
  std::vector<float> y(x.size()), steps(x.size());
  mha.Forward(context, {x.data(), kBatch, kLength, kD}, {y.data(), kBatch, kLength, kD});
  KvCache cache(mha, kLength, kBatch);
  std::size_t first = 0;
  for (std::size_t n : {200, 1, 99}) {
    std::vector<float> in(kBatch * n * kD), out(in.size());
    for (std::size_t b = 0; b < kBatch; ++b) {
      std::memcpy(&in[b * n * kD], &x[(b * kLength + first) * kD], n * kD * sizeof(float));
    }
    mha.Decode(context, {in.data(), kBatch, n, kD}, cache, {out.data(), kBatch, n, kD});
    for (std::size_t b = 0; b < kBatch; ++b) {
      std::memcpy(&steps[(b * kLength + first) * kD], &out[b * n * kD], n * kD * sizeof(float));
    }
    first += n;
  }
  y.insert(y.end(), steps.begin(), steps.end());
  return y;
}

TEST(SchedulerTest, SharedKeyValueHeadBitIdenticalForAnyThreadCount) {
  const RandomModel model(64, 8, 23, /*kv_heads=*/1);
  const MultiheadAttention mha(model.config, model.view());
  Context one(1);
  const std::vector<float> expected = RunSharedKeyValueHead(mha, one);
  for (std::size_t threads : {2, 3, 7}) {
    Context context(threads);
    EXPECT_EQ(RunSharedKeyValueHead(mha, context), expected) << threads << " threads";
  }
  const auto pool = MakeThreadPoolExecutor(4);
  Context pooled(*pool);
  EXPECT_EQ(RunSharedKeyValueHead(mha, pooled), expected) << "std::thread pool";
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
#if EDGEATTN_WITH_TBB
  executors.push_back(MakeTbbExecutor(3));
#endif
  executors.push_back(MakeThreadPoolExecutor(4));
  executors.push_back(MakeThreadPoolExecutor(3, /*spin=*/false));
  executors.push_back(std::make_unique<SerialExecutor>(5));
  for (const auto& executor : executors) {
    for (int round = 0; round < 50; ++round) {
      std::vector<std::atomic<int>> calls(executor->workers());
      executor->RunWorkers([&](std::size_t w) { calls[w].fetch_add(1); });
      for (const auto& c : calls) ASSERT_EQ(c.load(), 1);
    }
  }
#if EDGEATTN_WITH_TBB
  EXPECT_GE(MakeTbbExecutor(0)->workers(), 1u);
#endif
  EXPECT_GE(MakeThreadPoolExecutor(0)->workers(), 1u);
}

// Runs its workers last first, so that each starts on its own share before worker 0 can help
// with it (SerialExecutor's worker 0 runs first and takes every share).
class ReverseExecutor final : public Executor {
 public:
  explicit ReverseExecutor(std::size_t workers) : workers_(workers) {}
  std::size_t workers() const override { return workers_; }
  void RunWorkers(WorkerFn fn) override {
    for (std::size_t w = workers_; w-- > 0;) fn(w);
  }

 private:
  std::size_t workers_;
};

// Every item exactly once, on a worker below the count, for item counts below, at and above the
// worker count and worker counts on both sides of the helped-share limit (64).
TEST(SchedulerTest, ParallelForItemsRunsEveryItemOnce) {
  for (const std::size_t workers : {1, 2, 3, 7, 64, 65, 100, 256}) {
    for (const std::size_t items : {0, 1, 2, 5, 63, 64, 65, 257, 1000}) {
      SerialExecutor forward(workers);
      ReverseExecutor reverse(workers);
      for (Executor* executor : {static_cast<Executor*>(&forward),
                                 static_cast<Executor*>(&reverse)}) {
        SCOPED_TRACE(::testing::Message() << workers << " workers, " << items << " items");
        std::vector<int> runs(items, 0);
        bool worker_in_range = true;
        ParallelForItems(*executor, workers, items, [&](std::size_t item, std::size_t worker) {
          ++runs[item];
          worker_in_range = worker_in_range && worker < workers;
        });
        EXPECT_TRUE(worker_in_range);
        EXPECT_EQ(runs, std::vector<int>(items, 1));
      }
    }
  }
}

// Past 64 workers each runs only its own share: a forward call there is still a one-worker
// call's, bit for bit, fp32 and int8 (which counts the heads done per query chunk).
TEST(SchedulerTest, ManyWorkersBeyondHelpedSharesMatchOne) {
  const RandomModel model(64, 4, 31);
  const std::vector<float> x = RandomActivations(2 * 130 * 64, 32);
  for (Precision precision : {Precision::kFp32, Precision::kInt8}) {
    Config config = model.config;
    config.precision = precision;
    const MultiheadAttention mha(config, model.view());
    std::vector<float> expected(x.size()), got(x.size());
    Context one(1);
    mha.Forward(one, {x.data(), 2, 130, 64}, {expected.data(), 2, 130, 64});
    for (const std::size_t workers : {65, 200}) {
      SerialExecutor serial(workers);
      ReverseExecutor reverse(workers);
      for (Executor* executor : {static_cast<Executor*>(&serial),
                                 static_cast<Executor*>(&reverse)}) {
        Context context(*executor);
        std::fill(got.begin(), got.end(), -1.0f);
        mha.Forward(context, {x.data(), 2, 130, 64}, {got.data(), 2, 130, 64});
        EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)))
            << workers << " workers, " << (precision == Precision::kInt8 ? "int8" : "fp32");
      }
    }
  }
}

// A small operator, 20 rows of input, and what a call from outside any pool gives for them.
struct SmallForward {
  RandomModel model{32, 4, 5};
  MultiheadAttention mha{model.config, model.view()};
  std::vector<float> x = RandomActivations(20 * 32, 6);
  std::vector<float> expected = Expected();

  std::vector<float> Expected() const {
    std::vector<float> out(x.size());
    Context own(1);
    mha.Forward(own, {x.data(), 1, 20, 32}, {out.data(), 1, 20, 32});
    return out;
  }
};

// An application executor breaking its contract: workers() says `first` for its first
// `first_reads` reads and `after` from then on, and it runs that many workers, last first.
class ChangingCountExecutor final : public Executor {
 public:
  ChangingCountExecutor(std::size_t first, std::size_t first_reads, std::size_t after)
      : first_(first), first_reads_(first_reads), after_(after) {}
  std::size_t workers() const override { return ++reads_ <= first_reads_ ? first_ : after_; }
  void RunWorkers(WorkerFn fn) override {
    for (std::size_t w = workers(); w-- > 0;) fn(w);
  }

 private:
  const std::size_t first_;
  const std::size_t first_reads_;
  const std::size_t after_;
  mutable std::size_t reads_ = 0;
};

// A call reads the worker count once, as its per-worker scratch is sized: workers past it are
// given nothing (they ran on scratch made for one worker; AddressSanitizer saw the overflow),
// and the result is a one-worker call's. The Context's read and the call's say 1.
TEST(SchedulerTest, ExecutorCountIsReadOncePerCall) {
  const SmallForward small;
  ChangingCountExecutor changing(1, 2, 8);
  Context context(changing);
  std::vector<float> out(small.x.size());
  small.mha.Forward(context, {small.x.data(), 1, 20, 32}, {out.data(), 1, 20, 32});
  EXPECT_EQ(out, small.expected);
}

// A count that left [1, kMaxThreads] after the Context was made fails each kind of call naming
// it, the output untouched: with 0 a call ran no items and returned as if it had written it.
// (ProjectMemory comes last: a failed projection leaves the memory empty.)
TEST(SchedulerTest, ExecutorCountOutOfRangeAtACallIsRefused) {
  const SmallForward small;
  Context good(1);
  CrossAttentionMemory memory(small.mha, 20);
  for (const std::size_t count : {std::size_t{0}, kMaxThreads + 1}) {
    small.mha.ProjectMemory(good, {small.x.data(), 1, 20, 32}, memory);
    const std::string got = "], got " + std::to_string(count);
    const std::vector<float> untouched(small.x.size(), -7.0f);
    std::vector<float> out = untouched;
    const std::vector<std::function<void(Context&)>> calls = {
        [&](Context& c) {
          small.mha.Forward(c, {small.x.data(), 1, 20, 32}, {out.data(), 1, 20, 32});
        },
        [&](Context& c) {
          small.mha.DecodeCross(c, {small.x.data(), 1, 20, 32}, memory, {out.data(), 1, 20, 32});
        },
        [&](Context& c) {
          small.mha.ProjectMemory(c, {small.x.data(), 1, 20, 32}, memory);
        }};
    for (std::size_t k = 0; k < calls.size(); ++k) {
      SCOPED_TRACE("count " + std::to_string(count) + ", call " + std::to_string(k));
      ChangingCountExecutor broken(1, 1, count);
      Context context(broken);
      ExpectError([&] { calls[k](context); },
                  {"the context's executor: expected executor.workers() in [1, 256", got.c_str()});
      EXPECT_EQ(out, untouched);
    }
  }
}

// A caller pool's run() (C API) that runs every item, then throws on its first call (*user
// counts the calls).
void RunItemsThenThrowOnce(void* user, std::size_t items, edgeattn_pool_item item,
                           void* item_context) {
  for (std::size_t i = 0; i < items; ++i) item(item_context, i);
  if ((*static_cast<int*>(user))++ == 0) throw std::runtime_error("the application's pool failed");
}

// An exception out of a caller pool's run() fails the call naming the pool's run (it came out as
// "internal error: the application's pool failed"), and the context's next call is right.
TEST(ThreadPoolTest, CallerPoolThatThrowsIsNamed) {
  int calls = 0;
  edgeattn_thread_pool pool{};
  pool.workers = 2;
  pool.run = &RunItemsThenThrowOnce;
  pool.user = &calls;
  const auto executor = MakeCallerPoolExecutor(pool);
  const SmallForward small;
  Context context(*executor);
  std::vector<float> out(small.x.size());
  const auto forward = [&] {
    small.mha.Forward(context, {small.x.data(), 1, 20, 32}, {out.data(), 1, 20, 32});
  };
  ExpectError(forward,
              {"edgeattn_thread_pool.run: expected to return, got an exception out of it"});
  forward();
  EXPECT_EQ(out, small.expected);
}

// The default executor is oneTBB's where it is built in, else the std::thread pool; `edgeattn
// info` reports kind() and spins().
TEST(SchedulerTest, DefaultExecutorFollowsTheBuild) {
  const Context context(2);
  EXPECT_STREQ(context.executor().kind(), EDGEATTN_WITH_TBB ? "oneTBB" : "std::thread");
  EXPECT_TRUE(context.executor().spins());
  EXPECT_EQ(context.executor().workers(), 2u);
  EXPECT_FALSE(MakeThreadPoolExecutor(2, /*spin=*/false)->spins());
  EXPECT_STREQ(SerialExecutor(2).kind(), "serial");
}

// An application's executor that overrides only what it must is reported (`edgeattn info`) as
// "application" and not spinning; a SerialExecutor of 0 workers (or the default) has one.
TEST(SchedulerTest, ExecutorDefaults) {
  struct Plain final : Executor {
    std::size_t workers() const override { return 1; }
    void RunWorkers(WorkerFn fn) override { fn(0); }
  } plain;
  EXPECT_STREQ(plain.kind(), "application");
  EXPECT_FALSE(plain.spins());
  EXPECT_STREQ(Context(plain).executor().kind(), "application");
  SerialExecutor zero(0);
  EXPECT_EQ(zero.workers(), 1u);
  EXPECT_EQ(Context(zero).threads(), 1u);
  EXPECT_EQ(SerialExecutor().workers(), 1u);
  EXPECT_FALSE(SerialExecutor().spins());
}

// Context() is Context(0): one thread per hardware thread, as the default executor counts them
// (a one-CPU machine cannot tell this from one thread).
TEST(SchedulerTest, DefaultContextHasOneThreadPerHardwareThread) {
  const Context by_default;
  const Context zero(0);
  EXPECT_EQ(by_default.threads(), zero.threads());
#if EDGEATTN_WITH_TBB
  EXPECT_EQ(zero.threads(), MakeTbbExecutor(0)->workers());
#else
  EXPECT_EQ(zero.threads(), MakeThreadPoolExecutor(0)->workers());
#endif
}

TEST(ThreadPoolTest, WithoutSpinningMatchesSerial) {
  const ShapeSpec& s = ContractShapes()[0];
  const RandomModel model(s.d_model, s.heads);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations(s.seq * s.d_model);
  const auto pool = MakeThreadPoolExecutor(3, /*spin=*/false);
  SerialExecutor serial(3);
  Context serial_context(serial), pooled(*pool);
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(RunShape(mha, s, x, pooled), RunShape(mha, s, x, serial_context));
  }
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

// A forward call from inside a job of the executor it runs on (an app sharing its pool with
// edgeattn) completes with the result of a call from outside: the thread pool runs the inner
// call's phases on the calling thread instead of waiting for itself; oneTBB nests arenas.
void ExpectCallsFromInsideComplete(Executor& executor) {
  const SmallForward small;
  const MultiheadAttention& mha = small.mha;
  const std::vector<float>& x = small.x;
  const std::vector<float>& expected = small.expected;
  std::vector<std::vector<float>> outs(executor.workers(), std::vector<float>(x.size()));
  executor.RunWorkers([&](std::size_t w) {
    Context inner(executor);
    mha.Forward(inner, {x.data(), 1, 20, 32}, {outs[w].data(), 1, 20, 32});
  });
  for (const auto& out : outs) EXPECT_EQ(out, expected);
}

TEST(ThreadPoolTest, CallFromInsideItsOwnPoolCompletes) {
  ExpectCallsFromInsideComplete(*MakeThreadPoolExecutor(2));
}

// In a child process, with an alarm to end a deadlock: two pools, each running a job whose
// workers call edgeattn on contexts over the other pool; exits 0 once both jobs are done with
// the result of a call from outside.
[[noreturn]] void RunJobsCallingAcrossTwoPools() {
  alarm(60);
  const SmallForward small;
  const MultiheadAttention& mha = small.mha;
  const std::vector<float>& x = small.x;
  const std::vector<float>& expected = small.expected;
  const auto first = MakeThreadPoolExecutor(2, false), second = MakeThreadPoolExecutor(2, false);
  std::atomic<int> wrong{0};
  const auto calling_over = [&](Executor& other) {
    return [&](std::size_t) {
      Context context(other);
      std::vector<float> out(x.size());
      for (int i = 0; i < 50; ++i) {
        mha.Forward(context, {x.data(), 1, 20, 32}, {out.data(), 1, 20, 32});
        wrong += out != expected;
      }
    };
  };
  const auto over_second = calling_over(*second);
  const auto over_first = calling_over(*first);
  std::thread a([&] { first->RunWorkers(over_second); });
  std::thread b([&] { second->RunWorkers(over_first); });
  a.join();
  b.join();
  std::_Exit(wrong == 0 ? 0 : 1);
}

// Jobs of two std::thread pools calling edgeattn over each other complete: a worker of one pool
// finding the other busy runs the call's phases itself instead of waiting on it (every thread of
// both pools waited on the other's lock).
TEST(ThreadPoolDeathTest, JobsCallingAcrossTwoPoolsComplete) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(RunJobsCallingAcrossTwoPools(), ::testing::ExitedWithCode(0), "");
}

#if EDGEATTN_WITH_TBB
TEST(SchedulerTest, CallFromInsideItsOwnTbbArenaCompletes) {
  ExpectCallsFromInsideComplete(*MakeTbbExecutor(2));
}
#endif

#ifndef EDGEATTN_SANITIZED
// In a child process: limits the address space to what it uses plus room for a few 8 MiB thread
// stacks (not for 64), starts a 64-thread pool and exits 0 when that threw the clean error.
[[noreturn]] void StartPoolUnderAddressLimit() {
  testing_support::LimitAddressSpace(48u << 20);
  try {
    const auto pool = MakeThreadPoolExecutor(64);
    std::_Exit(2);  // every thread started: the limit did not bite
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::_Exit(std::strstr(e.what(), "could start only") != nullptr ? 0 : 3);
  }
}
#endif

// Under an address-space limit (ulimit -v) thread stacks cannot be mapped: the pool must throw
// a clean error with the threads it did start joined, not hang or abort. Run in a child
// process, since the limit cannot be lifted again.
TEST(ThreadPoolDeathTest, ThreadThatCannotStartGivesACleanError) {
#ifdef EDGEATTN_SANITIZED
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: no limit can be set";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(StartPoolUnderAddressLimit(), ::testing::ExitedWithCode(0),
              "MakeThreadPoolExecutor: could start only");
#endif
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
  Context default_context(2);
  const auto pool = MakeThreadPoolExecutor(2);
  const auto sleepy_pool = MakeThreadPoolExecutor(2, /*spin=*/false);
  Context pooled(*pool), sleepy(*sleepy_pool);
  for (Context* context : {&default_context, &pooled, &sleepy}) {
    for (int i = 0; i < 20; ++i) RunShape(mha, s, x, *context);
    const double before = ProcessCpuSeconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double idle_cpu_ms = (ProcessCpuSeconds() - before) * 1e3;
    RecordProperty("idle_cpu_ms", std::to_string(idle_cpu_ms));
    std::printf("CPU time over 200 ms idle after forward (%zu threads, %s): %.2f ms\n",
                context->threads(), context->executor().kind(), idle_cpu_ms);
    // A spinning worker would burn ~200 ms; a sleeping pool a fraction of a millisecond.
    EXPECT_LT(idle_cpu_ms, 20.0);
  }
}

}  // namespace
}  // namespace edgeattn
