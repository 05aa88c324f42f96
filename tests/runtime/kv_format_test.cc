// KV caches in bf16, fp16 and int8 against the fp32 cache: the same decode (ragged steps, a
// windowed ring with rotary keys, Truncate, Reorder, grouped-query heads) stays within each
// format's accuracy bound, any thread count gives bit-identical steps, 2048 steps do not drift,
// and bad formats and kernel names are refused.
#include <gtest/gtest.h>

#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.h"
#include "edgeattn/edgeattn.hpp"
#include "tests/expect_error.h"
#include "tests/runtime/test_model.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::Cosine;
using testing_support::ExpectError;
using testing_support::GqaModel;
using testing_support::RandomNormal;

constexpr KvFormat kCompact[] = {KvFormat::kBf16, KvFormat::kFp16, KvFormat::kInt8};

// The bounds on normal data: cosine against the fp32 cache.
double Bound(KvFormat format) { return format == KvFormat::kInt8 ? 0.9995 : 0.9999; }

// One cache and the context its steps run on.
struct Decoder {
  const MultiheadAttention& mha;
  KvCache cache;
  Context context;
  Decoder(const MultiheadAttention& m, std::size_t max_length, std::size_t batch,
          const KvCacheOptions& options, std::size_t threads)
      : mha(m), cache(m, max_length, batch, options), context(threads) {}

  std::vector<float> Step(const std::vector<float>& x, std::size_t batch, std::size_t n,
                          const std::size_t* lengths) {
    const std::size_t d = mha.config().d_model;
    std::vector<float> out(batch * n * d);
    mha.Decode(context, {x.data(), batch, n, d}, cache, {out.data(), batch, n, d},
               {lengths, lengths != nullptr ? batch : 0});
    return out;
  }
};

// Ragged steps on a windowed rotary GQA operator, with Truncate and Reorder between them, on an
// fp32 cache and on `options`' cache at 1 and 2 threads.
void CheckScenario(const KvCacheOptions& options) {
  SCOPED_TRACE(options.attention_kernel);
  const std::size_t d = 64, batch = 2, n = 30;
  GqaModel model(d, 4, 2, 70);
  model.config.math.window = 40;  // a ring of 128 slots
  model.config.math.rotary = RotaryLayout::kHalves;
  const MultiheadAttention mha(model.config, model.view());
  Decoder fp32(mha, 400, batch, {}, 1), one(mha, 400, batch, options, 1),
      two(mha, 400, batch, options, 2);
  ASSERT_EQ(one.cache.format(), options.format);
  ASSERT_EQ(std::string(one.cache.attention_kernel()), options.attention_kernel);
  for (int step = 0; step < 12; ++step) {
    const std::size_t lengths[2] = {step % 4 == 1 ? std::size_t{0} : n,
                                    step % 3 == 0 ? std::size_t{11} : n};
    const std::vector<float> x = RandomNormal(batch * n * d, 300 + step);
    const std::vector<float> want = fp32.Step(x, batch, n, lengths);
    const std::vector<float> got = one.Step(x, batch, n, lengths);
    const std::vector<float> got2 = two.Step(x, batch, n, lengths);
    ASSERT_EQ(0, std::memcmp(got.data(), got2.data(), got.size() * sizeof(float)))
        << "1 and 2 threads differ at step " << step;
    ASSERT_GE(Cosine(got, want), Bound(options.format)) << "step " << step;
    if (step == 5) {  // speculative rollback within the ring, then beams
      for (Decoder* c : {&fp32, &one, &two}) {
        const std::size_t keep[2] = {c->cache.length(0) - 5, c->cache.length(1) - 3};
        c->cache.Truncate({keep, 2});
        const std::size_t beams[2] = {1, 1};
        c->cache.Reorder({beams, 2});
      }
    }
    if (step == 8) {
      for (Decoder* c : {&fp32, &one, &two}) {
        const std::size_t swap[2] = {1, 0};
        c->cache.Reorder({swap, 2});
      }
    }
    ASSERT_EQ(one.cache.length(0), fp32.cache.length(0));
    ASSERT_EQ(one.cache.length(1), fp32.cache.length(1));
  }
}

TEST(KvFormatTest, EveryKernelFollowsTheFp32CacheThroughRingsTruncateAndReorder) {
  for (KvFormat format : kCompact) {
    for (const std::string& kernel : AttentionKernels(format)) {
      KvCacheOptions options;
      options.format = format;
      options.attention_kernel = kernel;
      CheckScenario(options);
      if (HasFatalFailure()) return;
    }
  }
}

// One decode step after a 300-position prompt (d 256, 4 heads of 64), normal data and outlier
// channels: 6 input channels x20 and 6 rows of each projection x8.
double StepCosine(KvFormat format, bool outliers) {
  const std::size_t d = 256, prompt = 300;
  GqaModel model(d, 4, 4, 90);
  std::vector<float> x = RandomNormal((prompt + 1) * d, 91);
  if (outliers) {
    for (std::size_t r = 0; r <= prompt; ++r) {
      for (std::size_t c : {3, 50, 100, 150, 200, 250}) x[r * d + c] *= 20.0f;
    }
    for (std::size_t row : {1, 40, 80, 120, 160, 200}) {
      for (std::size_t c = 0; c < d; ++c) {
        for (std::vector<float>* w : {&model.wq, &model.wk, &model.wv}) (*w)[row * d + c] *= 8.0f;
      }
    }
  }
  const MultiheadAttention mha(model.config, model.view());
  KvCacheOptions options;
  options.format = format;
  Decoder fp32(mha, prompt + 1, 1, {}, 1), compact(mha, prompt + 1, 1, options, 1);
  const std::vector<float> head(x.begin(), x.begin() + prompt * d);
  const std::vector<float> last(x.begin() + prompt * d, x.end());
  fp32.Step(head, 1, prompt, nullptr);
  compact.Step(head, 1, prompt, nullptr);
  return Cosine(compact.Step(last, 1, 1, nullptr), fp32.Step(last, 1, 1, nullptr));
}

TEST(KvFormatTest, AccuracyOnNormalDataAndOutliers) {
  for (KvFormat format : kCompact) {
    const double normal = StepCosine(format, false), outliers = StepCosine(format, true);
    std::cout << std::setprecision(8) << KvFormatName(format) << " cache: cosine vs fp32 cache " << normal << " (normal), "
              << outliers << " (outliers)\n";
    EXPECT_GE(normal, Bound(format)) << KvFormatName(format);
    EXPECT_GE(outliers, 0.999) << KvFormatName(format);
  }
}

// 2048 one-position steps (d 32, 2 heads): the last step still meets the bound.
TEST(KvFormatTest, NoDriftOver2048Steps) {
  const std::size_t d = 32, steps = 2048;
  const GqaModel model(d, 2, 2, 110);
  const MultiheadAttention mha(model.config, model.view());
  const std::vector<float> x = RandomNormal(steps * d, 111);
  Decoder fp32(mha, steps, 1, {}, 1);
  std::vector<std::unique_ptr<Decoder>> owned;
  for (KvFormat format : kCompact) {
    KvCacheOptions options;
    options.format = format;
    owned.push_back(std::make_unique<Decoder>(mha, steps, 1, options, 1));
  }
  std::vector<float> row(d);
  for (std::size_t i = 0; i < steps; ++i) {
    std::memcpy(row.data(), x.data() + i * d, d * sizeof(float));
    const std::vector<float> want = fp32.Step(row, 1, 1, nullptr);
    for (std::size_t f = 0; f < owned.size(); ++f) {
      const std::vector<float> got = owned[f]->Step(row, 1, 1, nullptr);
      if (i + 1 == steps) {
        std::cout << std::setprecision(8) << KvFormatName(kCompact[f]) << " cache, step 2048: cosine " << Cosine(got, want)
                  << "\n";
        EXPECT_GE(Cosine(got, want), Bound(kCompact[f])) << KvFormatName(kCompact[f]);
      }
    }
  }
}

TEST(KvFormatTest, BytesPerPosition) {
  const GqaModel model(256, 4, 2, 120);  // 2 key/value heads of 64
  const MultiheadAttention mha(model.config, model.view());
  const std::size_t expected[] = {2 * 64 * 4 * 2, 2 * 64 * 2 * 2, 2 * 64 * 2 * 2, 2 * 2 * (64 + 4)};
  const KvFormat formats[] = {KvFormat::kFp32, KvFormat::kBf16, KvFormat::kFp16, KvFormat::kInt8};
  for (std::size_t f = 0; f < 4; ++f) {
    KvCacheOptions options;
    options.format = formats[f];
    const KvCache cache(mha, 2048, 3, options);
    EXPECT_EQ(cache.bytes_per_position(), expected[f]) << KvFormatName(formats[f]);
    EXPECT_EQ(cache.bytes(), 3 * 2048 * expected[f]) << KvFormatName(formats[f]);
  }
}

TEST(KvFormatTest, RefusesBadFormatsAndKernels) {
  const GqaModel model(64, 4, 2, 130);
  const MultiheadAttention mha(model.config, model.view());
  KvCacheOptions options;
  options.format = static_cast<KvFormat>(9);
  ExpectError([&] { KvCache cache(mha, 8, 1, options); },
              {"options.format", "kFp32, kBf16, kFp16 or kInt8", "got 9"});
  ExpectError([&] { AttentionKernels(static_cast<KvFormat>(-1)); }, {"format", "got -1"});
  EXPECT_STREQ(KvFormatName(static_cast<KvFormat>(9)), "unknown");
  options.format = KvFormat::kInt8;
  options.attention_kernel = AttentionKernels(KvFormat::kBf16).front();
  ExpectError([&] { KvCache cache(mha, 8, 1, options); },
              {"options.attention_kernel", "int8 cache's kernels", options.attention_kernel.c_str()});
  // The fp32 cache defaults to the operator's kernel; a compact one to the format's best.
  EXPECT_STREQ(KvCache(mha, 8).attention_kernel(), mha.attention_kernel());
  options.attention_kernel.clear();
  EXPECT_EQ(std::string(KvCache(mha, 8, 1, options).attention_kernel()),
            AttentionKernels(KvFormat::kInt8).front());
}

TEST(KvFormatTest, CApi) {
  edgeattn_config config{};
  config.d_model = 64;
  config.num_heads = 4;
  edgeattn_operator* op = nullptr;
  const std::vector<float> w = RandomNormal(4 * 64 * 64, 141, 0.125f);
  edgeattn_weights weights{};
  weights.in_proj_weight = w.data();
  weights.in_proj_weight_size = 3 * 64 * 64;
  weights.out_proj_weight = w.data() + 3 * 64 * 64;
  weights.out_proj_weight_size = 64 * 64;
  ASSERT_EQ(edgeattn_operator_create(&config, &weights, &op), EDGEATTN_OK) << edgeattn_last_error();
  edgeattn_kv_cache* cache = reinterpret_cast<edgeattn_kv_cache*>(1);
  EXPECT_EQ(edgeattn_kv_cache_create_format(op, 16, 1, 7, nullptr, &cache),
            EDGEATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(cache, nullptr);
  EXPECT_NE(std::string(edgeattn_last_error()).find("format: expected EDGEATTN_KV_FP32"),
            std::string::npos);
  EXPECT_EQ(edgeattn_kv_cache_create_format(op, 16, 1, EDGEATTN_KV_INT8, "no_such_kernel", &cache),
            EDGEATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(edgeattn_kv_cache_create_format(nullptr, 16, 1, EDGEATTN_KV_INT8, nullptr, &cache),
            EDGEATTN_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(edgeattn_kv_cache_create_format(op, 64, 1, EDGEATTN_KV_INT8, "", &cache), EDGEATTN_OK);
  // 4 heads of 16: keys and values of 16 int8 and a 4-byte scale each (64 slots: whole panels).
  EXPECT_EQ(edgeattn_kv_cache_bytes_per_position(cache), 4u * (16 + 4) * 2);
  EXPECT_EQ(edgeattn_kv_cache_bytes_per_position(nullptr), 0u);
  edgeattn_context* context = nullptr;
  ASSERT_EQ(edgeattn_context_create(1, &context), EDGEATTN_OK);
  const std::vector<float> x = RandomNormal(3 * 64, 142);
  std::vector<float> out(x.size());
  EXPECT_EQ(edgeattn_decode(op, context, cache, x.data(), 1, 3, out.data()), EDGEATTN_OK)
      << edgeattn_last_error();
  EXPECT_EQ(edgeattn_kv_cache_length(cache), 3u);
  edgeattn_context_destroy(context);
  edgeattn_kv_cache_destroy(cache);
  edgeattn_operator_destroy(op);
}

}  // namespace
}  // namespace edgeattn
