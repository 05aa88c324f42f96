#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/context_state.h"
#include "runtime/exclusive_use.h"
#include "runtime/int8_weight_file.h"
#include "runtime/kv_cache_state.h"
#include "runtime/mha_forward.h"
#include "runtime/mha_validation.h"
#include "runtime/multihead_attention_impl.h"
#include "runtime/projection_weights.h"
#include "runtime/weight_loading.h"
#include "runtime/weight_quantizer.h"
#include "simd/targets.h"

namespace edgeattn {
namespace {

const MultiheadAttention::Impl& Live(const std::unique_ptr<MultiheadAttention::Impl>& impl) {
  if (impl == nullptr) throw Error("MultiheadAttention: moved-from (it holds no operator)");
  return *impl;
}

constexpr char kContextBusy[] =
    "context: already in use by another call on another thread (use one Context per calling "
    "thread)";

}  // namespace

void MultiheadAttention::Impl::BuildInt8(const Int8Weights& w) {
  const std::size_t d = config.d_model;
  const std::size_t kvd = KvDim(config);
  const std::size_t block = config.int8_block;
  projections.int8 = true;
  projections.q8 = PackedProjectionI8(w.q, w.q_scale, w.q_bias, d, d, block);
  projections.k8 = PackedProjectionI8(w.k, w.k_scale, w.k_bias, kvd, d, block);
  projections.v8 = PackedProjectionI8(w.v, w.v_scale, w.v_bias, kvd, d, block);
  projections.out8 = PackedProjectionI8(w.out, w.out_scale, w.out_bias, d, d, block);
}

MultiheadAttention::MultiheadAttention(const Config& config, const WeightsView& weights) {
  simd::InitDispatch();
  ValidateConfig(config);
  ValidateWeights(config, weights);
  const std::size_t d = config.d_model;
  const std::size_t kvd = KvDim(config);
  const ProjectionWeights w = SplitProjections(config, weights);
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  if (config.precision == Precision::kInt8) {
    const QuantizedMatrix q = QuantizePerChannel(w.q, d, d);
    const QuantizedMatrix k = QuantizePerChannel(w.k, kvd, d);
    const QuantizedMatrix v = QuantizePerChannel(w.v, kvd, d);
    const QuantizedMatrix out = QuantizePerChannel(w.out, d, d);
    impl->BuildInt8({q.values.data(), k.values.data(), v.values.data(), out.values.data(),
                     q.scales.data(), k.scales.data(), v.scales.data(), out.scales.data(),
                     w.q_bias, w.k_bias, w.v_bias, w.out_bias});
  } else {
    impl->projections.q = PackedProjection(w.q, w.q_bias, d, d);
    impl->projections.k = PackedProjection(w.k, w.k_bias, kvd, d);
    impl->projections.v = PackedProjection(w.v, w.v_bias, kvd, d);
    impl->projections.out = PackedProjection(w.out, w.out_bias, d, d);
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
  const LayerWeights layer = FindLayerWeights(file, options);
  if (!layer.int8) return MultiheadAttention(layer.config, layer.floats);
  simd::InitDispatch();
  MultiheadAttention mha;
  mha.impl_ = std::make_unique<Impl>();
  mha.impl_->config = layer.config;
  mha.impl_->BuildInt8(layer.int8_weights);
  return mha;
}

void MultiheadAttention::SaveInt8(const std::string& path) const {
  const Impl& impl = Live(impl_);
  if (!impl.projections.int8) {
    throw Error("SaveInt8: expected an operator built with Precision::kInt8, got fp32");
  }
  // Everything is read back from the packed projections: values, scales and biases.
  const MhaProjections& p = impl.projections;
  const std::vector<std::int8_t> q = p.q8.UnpackValues(), k = p.k8.UnpackValues(),
                                 v = p.v8.UnpackValues(), out = p.out8.UnpackValues();
  WriteInt8File(path, impl.config,
                {q.data(), k.data(), v.data(), out.data(), p.q8.view().scales,
                 p.k8.view().scales, p.v8.view().scales, p.out8.view().scales, p.q8.view().bias,
                 p.k8.view().bias, p.v8.view().bias, p.out8.view().bias});
}

MultiheadAttention::MultiheadAttention() = default;
MultiheadAttention::MultiheadAttention(MultiheadAttention&&) noexcept = default;
MultiheadAttention& MultiheadAttention::operator=(MultiheadAttention&&) noexcept = default;
MultiheadAttention::~MultiheadAttention() = default;

const Config& MultiheadAttention::config() const { return Live(impl_).config; }

void MultiheadAttention::Forward(Context& context, ConstTensor query, ConstTensor key,
                                 ConstTensor value, Tensor out,
                                 const ForwardOptions& options) const {
  const Impl& impl = Live(impl_);
  MhaOptions resolved;
  const MhaShape shape = ValidateForward(impl.config, query, key, value, out, options, &resolved);
  Context::State& state = *context.state_;
  const ExclusiveUse use(state.busy, kContextBusy);
  MhaForward(impl.projections, shape, resolved, query.data, key.data, value.data, out.data,
             nullptr, *state.executor, state.workspace);
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
  const Impl& impl = Live(impl_);
  KvCache::State& c = LiveCacheState(cache.state_);
  const ExclusiveUse cache_use(c.busy, kCacheBusy);
  const MhaShape shape = ValidateDecode(impl.config, x, out, c);
  MhaOptions options;
  options.causal = true;
  options.causal_offset = c.length;
  const KvStore store{c.keys.get(), c.values.get(), c.keys_stride, c.values_stride, c.length};
  Context::State& state = *context.state_;
  const ExclusiveUse context_use(state.busy, kContextBusy);
  MhaForward(impl.projections, shape, options, x.data, x.data, x.data, out.data, &store,
             *state.executor, state.workspace);
  c.length += x.length;
}

}  // namespace edgeattn
