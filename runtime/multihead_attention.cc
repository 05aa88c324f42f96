#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/attention_math.h"
#include "runtime/auto_choice.h"
#include "runtime/context_state.h"
#include "runtime/exclusive_use.h"
#include "runtime/half_weights.h"
#include "runtime/int8_weight_file.h"
#include "runtime/kv_cache_state.h"
#include "runtime/kv_projection_fingerprint.h"
#include "runtime/mha_forward.h"
#include "runtime/mha_validation.h"
#include "runtime/multihead_attention_impl.h"
#include "runtime/packed_projection.h"
#include "runtime/weight_loading.h"
#include "runtime/weight_quantizer.h"
#include "simd/projection_kernel.h"
#include "simd/targets.h"

namespace edgeattn {
namespace {

const MultiheadAttention::Impl& Live(const std::unique_ptr<MultiheadAttention::Impl>& impl) {
  if (impl == nullptr) throw Error("MultiheadAttention: moved-from (it holds no operator)");
  return *impl;
}

}  // namespace

std::uint64_t NewOperatorId() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// Another thread's call, or one made from inside a job of the executor running this context's
// call (the same thread): the message names both.
const char kContextBusy[] =
    "context: already in use by another call, on another thread or from a job of its own call "
    "(use one Context per calling thread, and another inside executor jobs)";

const simd::ProjectionKernel& ChooseProjectionKernel(const Config& config) {
  const simd::WeightType type = WeightTypeOf(config.precision);
  if (config.projection_kernel.empty()) return *simd::ProjectionKernels(type).front();
  const simd::ProjectionKernel* named =
      simd::FindProjectionKernel(type, config.projection_kernel.c_str());
  if (named != nullptr) return *named;
  std::string names;
  for (const std::string& name : ProjectionKernels(config.precision)) {
    names += (names.empty() ? "" : ", ") + name;
  }
  throw Error("Config.projection_kernel: expected one of the " +
              std::string(PrecisionName(config.precision)) + " kernels this CPU runs (" + names +
              "), got '" + config.projection_kernel + "'");
}

void MultiheadAttention::Impl::Build(const simd::ProjectionKernel& kernel, const Weights& w) {
  attention = &ChooseAttentionKernel(config);
  const std::size_t d = config.d_model;
  const std::size_t kvd = KvDim(config);
  const std::size_t block = config.int8_block;
  projections.q = PackedProjection(kernel, w.q, w.q_scale, w.q_bias, d, d, block);
  projections.k = PackedProjection(kernel, w.k, w.k_scale, w.k_bias, kvd, d, block);
  projections.v = PackedProjection(kernel, w.v, w.v_scale, w.v_bias, kvd, d, block);
  projections.out = PackedProjection(kernel, w.out, w.out_scale, w.out_bias, d, d, block);
  kv_fingerprint = KvProjectionFingerprint(
      {kernel.weights, w.k, w.v, w.k_scale, w.v_scale, w.k_bias, w.v_bias, kvd, d}, math);
}

void MultiheadAttention::Impl::BuildInt8(const Int8Weights& w) {
  Build(ChooseProjectionKernel(config), {w.q, w.k, w.v, w.out, w.q_scale, w.k_scale, w.v_scale,
                                         w.out_scale, w.q_bias, w.k_bias, w.v_bias, w.out_bias});
}

MultiheadAttention::MultiheadAttention(const Config& given, const WeightsView& weights) {
  simd::InitDispatch();
  const Config config = ResolveAuto(given);
  ValidateConfig(config);
  ValidateWeights(config, weights);
  const simd::ProjectionKernel& kernel = ChooseProjectionKernel(config);
  const std::size_t d = config.d_model;
  const std::size_t kvd = KvDim(config);
  const ProjectionWeights w = SplitProjections(config, weights);
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->math = ResolveStepMath(config, &weights);
  if (kernel.weights == simd::WeightType::kQc8) {
    const QuantizedMatrix q = QuantizePerChannel(w.q, d, d);
    const QuantizedMatrix k = QuantizePerChannel(w.k, kvd, d);
    const QuantizedMatrix v = QuantizePerChannel(w.v, kvd, d);
    const QuantizedMatrix out = QuantizePerChannel(w.out, d, d);
    impl->Build(kernel, {q.values.data(), k.values.data(), v.values.data(), out.values.data(),
                         q.scales.data(), k.scales.data(), v.scales.data(), out.scales.data(),
                         w.q_bias, w.k_bias, w.v_bias, w.out_bias});
  } else if (kernel.weights != simd::WeightType::kF32) {
    const std::vector<std::uint16_t> q = NarrowWeights(kernel.weights, w.q, d * d, "Wq"),
                                     k = NarrowWeights(kernel.weights, w.k, kvd * d, "Wk"),
                                     v = NarrowWeights(kernel.weights, w.v, kvd * d, "Wv"),
                                     out = NarrowWeights(kernel.weights, w.out, d * d,
                                                         "out_proj.weight");
    impl->Build(kernel, {q.data(), k.data(), v.data(), out.data(), nullptr, nullptr, nullptr,
                         nullptr, w.q_bias, w.k_bias, w.v_bias, w.out_bias});
  } else {
    impl->Build(kernel, {w.q, w.k, w.v, w.out, nullptr, nullptr, nullptr, nullptr, w.q_bias,
                         w.k_bias, w.v_bias, w.out_bias});
  }
  impl_ = std::move(impl);
}

MultiheadAttention MultiheadAttention::Load(const std::string& path,
                                            const LoadOptions& options) {
  return LoadLayer(SafetensorsFile::Read(path), options);
}

MultiheadAttention MultiheadAttention::Load(const std::string& path, std::size_t num_heads,
                                            Precision precision, std::size_t int8_block) {
  LoadOptions options;
  options.num_heads = num_heads;
  options.precision = precision;
  options.int8_block = int8_block;
  return Load(path, options);
}

MultiheadAttention MultiheadAttention::LoadFromMemory(const void* data, std::size_t size,
                                                      const LoadOptions& options) {
  return LoadLayer(SafetensorsFile::View(data, size, "memory buffer"), options);
}

MultiheadAttention MultiheadAttention::LoadLayer(const SafetensorsFile& file,
                                                 const LoadOptions& options) {
  const LayerWeights layer = FindLayerWeights(file, ResolveAuto(options));
  if (!layer.int8 && !layer.half) return MultiheadAttention(layer.config, layer.floats);
  simd::InitDispatch();
  MultiheadAttention mha;
  mha.impl_ = std::make_unique<Impl>();
  mha.impl_->config = layer.config;
  if (layer.half) ValidateVectorWeights(layer.config, layer.floats);
  mha.impl_->math = ResolveStepMath(layer.config, layer.half ? &layer.floats : nullptr);
  if (layer.int8) {
    mha.impl_->BuildInt8(layer.int8_weights);
  } else {
    mha.impl_->Build(ChooseProjectionKernel(layer.config), HalfLayerWeights(layer));
  }
  return mha;
}

void MultiheadAttention::SaveInt8(const std::string& path) const {
  const Impl& impl = Live(impl_);
  if (impl.projections.q.kernel().weights != simd::WeightType::kQc8) {
    throw Error(std::string("SaveInt8: expected an operator built with Precision::kInt8, got ") +
                PrecisionName(impl.config.precision));
  }
  if (!impl.math.sinks.empty() || !impl.math.q_norm_weight.empty()) {
    throw Error("SaveInt8: int8 files hold the projections only, and this operator has learned "
                "sinks or Q/K norm weights (keep the float file)");
  }
  // Everything is read back from the packed projections, the values through their kernel's
  // unpack (the file format does not depend on the kernel's layout).
  const MhaProjections& p = impl.projections;
  const auto values = [](const PackedProjection& projection) {
    std::vector<std::int8_t> v(projection.n() * projection.k());
    projection.Unpack(v.data());
    return v;
  };
  const std::vector<std::int8_t> q = values(p.q), k = values(p.k), v = values(p.v),
                                 out = values(p.out);
  WriteInt8File(path, impl.config,
                {q.data(), k.data(), v.data(), out.data(), p.q.view().scales, p.k.view().scales,
                 p.v.view().scales, p.out.view().scales, p.q.view().bias, p.k.view().bias,
                 p.v.view().bias, p.out.view().bias});
}

MultiheadAttention::MultiheadAttention() = default;
MultiheadAttention::MultiheadAttention(MultiheadAttention&&) noexcept = default;
MultiheadAttention& MultiheadAttention::operator=(MultiheadAttention&&) noexcept = default;
MultiheadAttention::~MultiheadAttention() = default;

const Config& MultiheadAttention::config() const { return Live(impl_).config; }

const char* MultiheadAttention::projection_kernel() const {
  return Live(impl_).projections.q.kernel().name;
}

const char* MultiheadAttention::attention_kernel() const { return Live(impl_).attention->name; }

std::size_t MultiheadAttention::weight_bytes() const {
  const MhaProjections& p = Live(impl_).projections;
  return p.q.bytes() + p.k.bytes() + p.v.bytes() + p.out.bytes();
}

std::vector<std::string> AttentionKernels() { return AttentionKernels(KvFormat::kFp32); }

const char* PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kInt8:
      return "int8";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kAuto:
      return "auto";
  }
  return "unknown";
}

std::vector<std::string> ProjectionKernels(Precision precision) {
  std::vector<std::string> names;
  for (const simd::ProjectionKernel* kernel : simd::ProjectionKernels(WeightTypeOf(precision))) {
    names.emplace_back(kernel->name);
  }
  return names;
}

void MultiheadAttention::Forward(Context& context, ConstTensor query, ConstTensor key,
                                 ConstTensor value, Tensor out,
                                 const ForwardOptions& options) const {
  const Impl& impl = Live(impl_);
  MhaOptions resolved;
  const MhaShape shape = ValidateForward(impl.config, query, key, value, out, options, &resolved);
  Context::State& state = *context.state_;
  const ExclusiveUse use(state.busy, kContextBusy);
  MhaForward(impl.projections, *impl.attention, impl.math, shape, resolved, query.data, key.data,
             value.data, out.data, nullptr, *state.executor, state.workspace);
}

void MultiheadAttention::Forward(Context& context, ConstTensor x, Tensor out,
                                 const ForwardOptions& options) const {
  if (options.key_lengths.data != nullptr || options.query_lengths.data == nullptr) {
    Forward(context, x, x, x, out, options);
    return;
  }
  ForwardOptions self = options;
  self.key_lengths = options.query_lengths;
  Forward(context, x, x, x, out, self);
}

void MultiheadAttention::Decode(Context& context, ConstTensor x, KvCache& cache,
                                Tensor out) const {
  Decode(context, x, cache, out, {});
}

void MultiheadAttention::Decode(Context& context, ConstTensor x, KvCache& cache, Tensor out,
                                Span<const std::size_t> step_lengths) const {
  const Impl& impl = Live(impl_);
  KvCache::State& c = LiveCacheState(cache.state_);
  const CacheChange cache_change(c);
  const MhaShape shape = ValidateDecode(impl, x, out, step_lengths, c);
  MhaOptions options;
  options.causal = true;
  options.query_lengths = options.key_lengths = step_lengths.data;
  AppendingStep step{&c, step_lengths.data, x.length};
  KvStore store{c.keys.get(),   c.values.get(),   c.keys_stride,
                c.values_stride, c.lengths.data(), c.slots};
  store.before_writing = &ForgetOverwrittenPositions;
  store.before_writing_context = &step;
  Context::State& state = *context.state_;
  const ExclusiveUse context_use(state.busy, kContextBusy);
  MhaForward(impl.projections, *c.attention, impl.math, shape, options, x.data, x.data,
             x.data, out.data, &store, *state.executor, state.workspace);
  for (std::size_t b = 0; b < c.batch; ++b) c.lengths[b] += step.of(b);
}

}  // namespace edgeattn
