// The hot path allocates nothing: after the first forward call has sized the context's
// workspace, further calls make no heap allocation through operator new. This binary replaces
// the global operator new to count them.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "runtime/benchmark_case.h"

namespace {
std::atomic<long> allocations{0};
}  // namespace

// g++ 12 sees these deletes' free() inlined into code whose memory came from operator new and
// warns of a mismatch; the replacements pair malloc with free by construction.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace edgeattn {
namespace {

TEST(NoAllocationTest, ForwardAfterTheFirstCall) {
  for (const ShapeSpec& s : {ContractShapes()[0], ContractShapes()[1]}) {
    for (Precision precision : {Precision::kFp32, Precision::kInt8}) {
      for (KvFormat kv_format :
           {KvFormat::kFp32, KvFormat::kBf16, KvFormat::kFp16, KvFormat::kInt8}) {
        const RandomModel model(s.d_model, s.heads);
        Config config = model.config;
        config.precision = precision;
        config.kv_format = kv_format;
        const MultiheadAttention mha(config, model.view());
        const std::vector<float> x = RandomActivations(s.seq * s.d_model);
        std::vector<float> y(x.size());
        const auto pool = MakeThreadPoolExecutor(2);
        Context tbb(2), one(1), pooled(*pool);
        for (Context* context : {&one, &tbb, &pooled}) {
          mha.Forward(*context, {x.data(), 1, s.seq, s.d_model}, {y.data(), 1, s.seq, s.d_model});
          const long before = allocations.load();
          for (int i = 0; i < 20; ++i) {
            mha.Forward(*context, {x.data(), 1, s.seq, s.d_model}, {y.data(), 1, s.seq, s.d_model});
          }
          EXPECT_EQ(allocations.load() - before, 0)
              << s.name << " " << PrecisionName(precision) << " K/V " << KvFormatName(kv_format)
              << " " << context->threads() << " threads";
        }
      }
    }
  }
  // The counter works: an allocation here is seen.
  const long before = allocations.load();
  auto* probe = new std::vector<int>(10);
  delete probe;
  EXPECT_GE(allocations.load() - before, 2);
}

// A decode step allocates nothing either, in every cache format, once the workspace is sized.
TEST(NoAllocationTest, DecodeStepAfterTheFirst) {
  const RandomModel model(64, 4);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomActivations(64);
  std::vector<float> y(x.size());
  for (KvFormat format : {KvFormat::kFp32, KvFormat::kBf16, KvFormat::kFp16, KvFormat::kInt8}) {
    KvCacheOptions options;
    options.format = format;
    KvCache cache(mha, 64, 1, options);
    Context context(2);
    mha.Decode(context, {x.data(), 1, 1, 64}, cache, {y.data(), 1, 1, 64});
    const long before = allocations.load();
    for (int i = 0; i < 20; ++i)
      mha.Decode(context, {x.data(), 1, 1, 64}, cache, {y.data(), 1, 1, 64});
    EXPECT_EQ(allocations.load() - before, 0) << KvFormatName(format);
  }
}

}  // namespace
}  // namespace edgeattn
