// Objects one thread's call is using, tried from another thread: a context, a KV cache or a
// cross-attention memory in use is refused with a named error, never shared; what may be read
// concurrently (a cache's length, a memory's keys and values) is. In scheduler_test's binary, so
// that the ThreadSanitizer build runs them.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "runtime/benchmark_case.h"
#include "tests/expect_error.h"

namespace edgeattn {
namespace {

using testing_support::ExpectError;

// An executor whose calls wait at a gate, so that a test can hold a call inside the library
// while another thread tries the same context or cache. Two workers, run one after the other:
// with one, the library runs its phases inline and never calls RunWorkers. A second call that
// reaches the gate while one waits there (a context the library let two calls share) passes
// without waiting, so that the test fails on the missing error instead of hanging.
class GateExecutor final : public Executor {
 public:
  std::size_t workers() const override { return 2; }
  void RunWorkers(WorkerFn fn) override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!waiting_) {
      entered_ = waiting_ = true;
      changed_.notify_all();
      changed_.wait(lock, [&] { return open_; });
      waiting_ = false;
    }
    lock.unlock();
    fn(0);
    fn(1);
  }
  void WaitUntilEntered() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return entered_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool entered_ = false, waiting_ = false, open_ = false;
};

TEST(ThreadPoolTest, ContextUsedByTwoThreadsAtOnceIsRefused) {
  const RandomModel model(32, 4, 5);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations(9 * 32, 6);
  std::vector<float> first(x.size()), second(x.size()), expected(x.size());
  GateExecutor gate;
  Context shared(gate);
  std::thread holder([&] { mha.Forward(shared, {x.data(), 1, 9, 32}, {first.data(), 1, 9, 32}); });
  gate.WaitUntilEntered();
  ExpectError(
      [&] {
        mha.Forward(shared, {x.data(), 1, 9, 32}, {second.data(), 1, 9, 32});
      },
      {"context: already in use by another call"});
  gate.Open();
  holder.join();
  Context own(1);
  mha.Forward(own, {x.data(), 1, 9, 32}, {expected.data(), 1, 9, 32});
  EXPECT_EQ(first, expected);  // the call that held the context was not disturbed
  mha.Forward(shared, {x.data(), 1, 9, 32}, {second.data(), 1, 9, 32});  // free again
  EXPECT_EQ(second, expected);
}

TEST(ThreadPoolTest, CacheUsedByTwoThreadsAtOnceIsRefused) {
  const RandomModel model(32, 4, 5);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations(4 * 32, 6);
  std::vector<float> out(x.size()), other(x.size());
  KvCache cache(mha, 16);
  GateExecutor gate;
  Context held(gate), free_context(1);
  std::thread holder([&] {
    mha.Decode(held, {x.data(), 1, 4, 32}, cache, {out.data(), 1, 4, 32});
  });
  gate.WaitUntilEntered();
  ExpectError([&] { cache.Truncate(0); }, {"cache: already in use by another call"});
  ExpectError([&] { cache.Clear(); }, {"cache: already in use"});
  const std::size_t keep[] = {0};
  ExpectError([&] { cache.Reorder({keep, 1}); }, {"cache: already in use"});
  ExpectError([&] { cache.Truncate({keep, 1}); }, {"cache: already in use"});
  ExpectError(
      [&] {
        mha.Decode(free_context, {x.data(), 1, 1, 32}, cache, {other.data(), 1, 1, 32});
      },
      {"cache: already in use"});
  gate.Open();
  holder.join();
  EXPECT_EQ(cache.length(), 4u);
}

// length() is read on another thread while decode steps run: it sees each step's length once
// the step is done, never a length being written (ThreadSanitizer checks the latter).
TEST(ThreadPoolTest, CacheLengthIsReadWhileAnotherThreadDecodes) {
  const RandomModel model(32, 4, 5);
  const MultiheadAttention mha(model.config, model.view());
  constexpr std::size_t kSteps = 40;
  const std::vector<float> x = RandomActivations(kSteps * 32, 6);
  std::vector<float> out(x.size());
  KvCache cache(mha, kSteps);
  Context context(1);
  std::atomic<bool> done{false};
  std::thread decoder([&] {
    for (std::size_t t = 0; t < kSteps; ++t) {
      mha.Decode(context, {x.data() + t * 32, 1, 1, 32}, cache, {out.data() + t * 32, 1, 1, 32});
    }
    done = true;
  });
  std::size_t seen = 0;
  bool ordered = true;
  while (!done && ordered) {
    const std::size_t now = cache.length();
    ordered = now >= seen && now <= kSteps && cache.length(0) >= now;
    seen = now;
  }
  decoder.join();
  EXPECT_TRUE(ordered) << "read " << seen;
  EXPECT_EQ(cache.length(), kSteps);
}

// While another thread swaps two sequences of lengths 3 and 0 (Reorder) and truncates, length()
// is always 3: the longest as one change left it, never a mix of two changes' sequences.
TEST(ThreadPoolTest, CacheLengthIsOneChangesWhileSequencesMove) {
  const RandomModel model(32, 4, 5);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations(2 * 3 * 32, 6);
  std::vector<float> out(x.size());
  KvCache cache(mha, 4, 2);
  Context context(1);
  const std::size_t steps[] = {3, 0};
  mha.Decode(context, {x.data(), 2, 3, 32}, cache, {out.data(), 2, 3, 32}, {steps, 2});
  std::atomic<bool> done{false};
  std::thread mover([&] {
    const std::size_t swap[] = {1, 0};
    for (int i = 0; i < 5000; ++i) {
      cache.Reorder({swap, 2});
      cache.Truncate(3);
    }
    done = true;
  });
  std::size_t wrong = 0;
  while (!done) {
    const std::size_t longest = cache.length();
    const std::size_t first = cache.length(0);
    if (longest != 3 || (first != 0 && first != 3)) ++wrong;
  }
  mover.join();
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(cache.length(), 3u);
}

// A cross-attention memory serves readers on several threads at once; projecting into it while
// a reader holds it (or reading while a projection runs) is refused.
TEST(ThreadPoolTest, MemoryIsReadConcurrentlyAndWrittenAlone) {
  const RandomModel model(32, 4, 5);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> encoder = RandomActivations(50 * 32, 6), x = RandomActivations(32, 7);
  CrossAttentionMemory memory(mha, 50);
  Context setup(1);
  mha.ProjectMemory(setup, {encoder.data(), 1, 50, 32}, memory);
  std::vector<float> expected(32);
  mha.DecodeCross(setup, {x.data(), 1, 1, 32}, memory, {expected.data(), 1, 1, 32});
  {
    std::vector<std::thread> readers;
    std::vector<std::vector<float>> outs(4, std::vector<float>(32));
    for (std::size_t t = 0; t < outs.size(); ++t) {
      readers.emplace_back([&, t] {
        Context own(1);
        for (int i = 0; i < 50; ++i) {
          mha.DecodeCross(own, {x.data(), 1, 1, 32}, memory, {outs[t].data(), 1, 1, 32});
        }
      });
    }
    for (std::thread& r : readers) r.join();
    for (const std::vector<float>& out : outs) EXPECT_EQ(out, expected);
  }
  std::vector<float> held_out(32), other(32);
  GateExecutor reading_gate;
  Context held(reading_gate), free_context(1);
  std::thread reader([&] {
    mha.DecodeCross(held, {x.data(), 1, 1, 32}, memory, {held_out.data(), 1, 1, 32});
  });
  reading_gate.WaitUntilEntered();
  ExpectError(
      [&] {
        mha.ProjectMemory(free_context, {encoder.data(), 1, 50, 32}, memory);
      },
      {"memory: in use by another call on another thread"});
  mha.DecodeCross(free_context, {x.data(), 1, 1, 32}, memory, {other.data(), 1, 1, 32});
  EXPECT_EQ(other, expected);  // a second reader at the same time
  reading_gate.Open();
  reader.join();
  EXPECT_EQ(held_out, expected);

  GateExecutor writing_gate;
  Context writing(writing_gate);
  std::thread writer([&] { mha.ProjectMemory(writing, {encoder.data(), 1, 50, 32}, memory); });
  writing_gate.WaitUntilEntered();
  ExpectError(
      [&] {
        mha.DecodeCross(free_context, {x.data(), 1, 1, 32}, memory, {other.data(), 1, 1, 32});
      },
      {"memory: in use by another call on another thread"});
  writing_gate.Open();
  writer.join();
  mha.DecodeCross(free_context, {x.data(), 1, 1, 32}, memory, {other.data(), 1, 1, 32});
  EXPECT_EQ(other, expected);
}
}  // namespace
}  // namespace edgeattn
