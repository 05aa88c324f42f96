#include <utility>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/context_state.h"
#include "runtime/mha_forward_f32.h"
#include "runtime/mha_validation.h"
#include "runtime/projection_weights.h"

namespace edgeattn {

struct MultiheadAttention::Impl {
  Config config;
  MhaProjections projections;
};

MultiheadAttention::MultiheadAttention(const Config& config, const WeightsView& weights) {
  ValidateConfig(config);
  ValidateWeights(config, weights);
  const std::size_t d = config.d_model;
  const float* w = weights.in_proj_weight.data;
  const float* b = weights.in_proj_bias.data;
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->projections.q = PackedProjection(w, b, d, d);
  impl->projections.k = PackedProjection(w + d * d, b ? b + d : nullptr, d, d);
  impl->projections.v = PackedProjection(w + 2 * d * d, b ? b + 2 * d : nullptr, d, d);
  impl->projections.out =
      PackedProjection(weights.out_proj_weight.data, weights.out_proj_bias.data, d, d);
  impl_ = std::move(impl);
}

MultiheadAttention MultiheadAttention::Load(const std::string& path, std::size_t num_heads) {
  const SafetensorsFile file = SafetensorsFile::Read(path);
  const TensorInfo& out_w = file.Info("out_proj.weight");
  if (out_w.shape.size() != 2 || out_w.shape[0] != out_w.shape[1]) {
    throw Error("safetensors '" + path + "': out_proj.weight: expected a square [d_model, " +
                "d_model] matrix, got rank " + std::to_string(out_w.shape.size()));
  }
  const std::size_t d = out_w.shape[0];
  Config config{d, num_heads};
  ValidateConfig(config);
  const std::vector<float> in_w = file.ReadFloat("in_proj_weight", {3 * d, d});
  const std::vector<float> out_wf = file.ReadFloat("out_proj.weight", {d, d});
  std::vector<float> in_b, out_b;
  if (file.Contains("in_proj_bias")) in_b = file.ReadFloat("in_proj_bias", {3 * d});
  if (file.Contains("out_proj.bias")) out_b = file.ReadFloat("out_proj.bias", {d});
  const auto span = [](const std::vector<float>& v) {
    return FloatSpan{v.empty() ? nullptr : v.data(), v.size()};
  };
  return MultiheadAttention(config, {span(in_w), span(in_b), span(out_wf), span(out_b)});
}

MultiheadAttention::MultiheadAttention(MultiheadAttention&&) noexcept = default;
MultiheadAttention& MultiheadAttention::operator=(MultiheadAttention&&) noexcept = default;
MultiheadAttention::~MultiheadAttention() = default;

const Config& MultiheadAttention::config() const { return impl_->config; }

void MultiheadAttention::Forward(Context& context, ConstTensor query, ConstTensor key,
                                 ConstTensor value, Tensor out) const {
  const MhaShape shape = ValidateForward(impl_->config, query, key, value, out);
  Context::State& state = *context.state_;
  MhaForwardF32(impl_->projections, shape, query.data, key.data, value.data, out.data,
                *state.executor, state.workspace);
}

void MultiheadAttention::Forward(Context& context, ConstTensor x, Tensor out) const {
  Forward(context, x, x, x, out);
}

}  // namespace edgeattn
