#include <string>
#include <utility>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/context_state.h"
#include "runtime/mha_forward.h"
#include "runtime/mha_validation.h"
#include "runtime/projection_weights.h"
#include "runtime/weight_quantizer.h"
#include "simd/targets.h"

namespace edgeattn {
namespace {

// Tensor and metadata names of int8 weight files (README, "int8 weight files").
constexpr char kFormat[] = "edgeattn-int8-v1";
constexpr char kInWeightQ[] = "in_proj_weight.int8";
constexpr char kInWeightScale[] = "in_proj_weight.scale";
constexpr char kOutWeightQ[] = "out_proj.weight.int8";
constexpr char kOutWeightScale[] = "out_proj.weight.scale";

const float* OffsetOrNull(const float* p, std::size_t offset) {
  return p != nullptr ? p + offset : nullptr;
}

FloatSpan Span(const std::vector<float>& v) {
  return {v.empty() ? nullptr : v.data(), v.size()};
}

}  // namespace

struct MultiheadAttention::Impl {
  Config config;
  MhaProjections projections;

  // int8 operator from per-channel quantized weights: in_q [3d x d], out_q [d x d].
  void BuildInt8(const std::int8_t* in_q, const float* in_scale, const float* in_b,
                 const std::int8_t* out_q, const float* out_scale, const float* out_b) {
    const std::size_t d = config.d_model;
    const std::size_t block = config.int8_block;
    projections.int8 = true;
    projections.q8 = PackedProjectionI8(in_q, in_scale, in_b, d, d, block);
    projections.k8 = PackedProjectionI8(in_q + d * d, in_scale + d, OffsetOrNull(in_b, d), d, d,
                                        block);
    projections.v8 = PackedProjectionI8(in_q + 2 * d * d, in_scale + 2 * d,
                                        OffsetOrNull(in_b, 2 * d), d, d, block);
    projections.out8 = PackedProjectionI8(out_q, out_scale, out_b, d, d, block);
  }
};

MultiheadAttention::MultiheadAttention(const Config& config, const WeightsView& weights) {
  simd::InitDispatch();
  ValidateConfig(config);
  ValidateWeights(config, weights);
  const std::size_t d = config.d_model;
  const float* w = weights.in_proj_weight.data;
  const float* b = weights.in_proj_bias.data;
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  if (config.precision == Precision::kInt8) {
    const QuantizedMatrix in_q = QuantizePerChannel(w, 3 * d, d);
    const QuantizedMatrix out_q = QuantizePerChannel(weights.out_proj_weight.data, d, d);
    impl->BuildInt8(in_q.values.data(), in_q.scales.data(), b, out_q.values.data(),
                    out_q.scales.data(), weights.out_proj_bias.data);
  } else {
    impl->projections.q = PackedProjection(w, b, d, d);
    impl->projections.k = PackedProjection(w + d * d, OffsetOrNull(b, d), d, d);
    impl->projections.v = PackedProjection(w + 2 * d * d, OffsetOrNull(b, 2 * d), d, d);
    impl->projections.out =
        PackedProjection(weights.out_proj_weight.data, weights.out_proj_bias.data, d, d);
  }
  impl_ = std::move(impl);
}

MultiheadAttention MultiheadAttention::Load(const std::string& path, std::size_t num_heads,
                                            Precision precision, std::size_t int8_block) {
  const SafetensorsFile file = SafetensorsFile::Read(path);
  const bool int8_file = file.Contains(kInWeightQ);
  const auto meta = [&](const char* key) -> std::size_t {
    const auto it = file.metadata().find(key);
    if (it == file.metadata().end()) {
      throw Error("safetensors '" + path + "': int8 weights need __metadata__ '" + key + "'");
    }
    try {
      return std::stoul(it->second);
    } catch (const std::exception&) {
      throw Error("safetensors '" + path + "': __metadata__ '" + key +
                  "': expected a whole number, got '" + it->second + "'");
    }
  };
  if (int8_file) {
    const std::size_t file_heads = meta("num_heads");
    if (num_heads != 0 && num_heads != file_heads) {
      throw Error("num_heads: the int8 file '" + path + "' was quantized for " +
                  std::to_string(file_heads) + " heads, got " + std::to_string(num_heads));
    }
    num_heads = file_heads;
    precision = Precision::kInt8;
    int8_block = meta("int8_block");
  }
  const std::string out_name = int8_file ? kOutWeightQ : "out_proj.weight";
  const TensorInfo& out_w = file.Info(out_name);
  if (out_w.shape.size() != 2 || out_w.shape[0] != out_w.shape[1]) {
    throw Error("safetensors '" + path + "': " + out_name +
                ": expected a square [d_model, d_model] matrix");
  }
  const std::size_t d = out_w.shape[0];
  const Config config{d, num_heads, precision, int8_block};
  ValidateConfig(config);
  std::vector<float> in_b, out_b;
  if (file.Contains("in_proj_bias")) in_b = file.ReadFloat("in_proj_bias", {3 * d});
  if (file.Contains("out_proj.bias")) out_b = file.ReadFloat("out_proj.bias", {d});
  if (!int8_file) {
    const std::vector<float> in_w = file.ReadFloat("in_proj_weight", {3 * d, d});
    const std::vector<float> out_wf = file.ReadFloat("out_proj.weight", {d, d});
    return MultiheadAttention(config, {Span(in_w), Span(in_b), Span(out_wf), Span(out_b)});
  }
  const auto int8_tensor = [&](const char* name, std::size_t rows) {
    const TensorInfo& info = file.Info(name);
    if (info.dtype != DType::kI8 || info.shape != std::vector<std::size_t>{rows, d}) {
      throw Error("safetensors '" + path + "': " + name + ": expected I8 [" +
                  std::to_string(rows) + ", " + std::to_string(d) + "]");
    }
    return reinterpret_cast<const std::int8_t*>(file.Data(name));
  };
  const std::int8_t* in_q = int8_tensor(kInWeightQ, 3 * d);
  const std::int8_t* out_q = int8_tensor(kOutWeightQ, d);
  const std::vector<float> in_scale = file.ReadFloat(kInWeightScale, {3 * d});
  const std::vector<float> out_scale = file.ReadFloat(kOutWeightScale, {d});
  simd::InitDispatch();
  MultiheadAttention mha;
  mha.impl_ = std::make_unique<Impl>();
  mha.impl_->config = config;
  mha.impl_->BuildInt8(in_q, in_scale.data(), Span(in_b).data, out_q, out_scale.data(),
                       Span(out_b).data);
  return mha;
}

void MultiheadAttention::SaveInt8(const std::string& path) const {
  const Impl& impl = *impl_;
  if (!impl.projections.int8) {
    throw Error("SaveInt8: expected an operator built with Precision::kInt8, got fp32");
  }
  const std::size_t d = impl.config.d_model;
  // Everything is read back from the packed projections: values, scales and biases.
  std::vector<std::int8_t> in_q;
  std::vector<float> in_scale, in_bias;
  for (const PackedProjectionI8* p : {&impl.projections.q8, &impl.projections.k8,
                                      &impl.projections.v8}) {
    const std::vector<std::int8_t> values = p->UnpackValues();
    in_q.insert(in_q.end(), values.begin(), values.end());
    in_scale.insert(in_scale.end(), p->view().scales, p->view().scales + d);
    const float* bias = p->view().bias;
    if (bias != nullptr) in_bias.insert(in_bias.end(), bias, bias + d);
  }
  const float* out_bias = impl.projections.out8.view().bias;
  const std::vector<std::int8_t> out_q = impl.projections.out8.UnpackValues();
  SafetensorsWriter writer;
  writer.Add(kInWeightQ, DType::kI8, {3 * d, d}, in_q.data());
  writer.Add(kInWeightScale, DType::kF32, {3 * d}, in_scale.data());
  writer.Add(kOutWeightQ, DType::kI8, {d, d}, out_q.data());
  writer.Add(kOutWeightScale, DType::kF32, {d}, impl.projections.out8.view().scales);
  if (!in_bias.empty()) writer.Add("in_proj_bias", DType::kF32, {3 * d}, in_bias.data());
  if (out_bias != nullptr) writer.Add("out_proj.bias", DType::kF32, {d}, out_bias);
  writer.SetMetadata("format", kFormat);
  writer.SetMetadata("num_heads", std::to_string(impl.config.num_heads));
  writer.SetMetadata("d_model", std::to_string(d));
  writer.SetMetadata("int8_block", std::to_string(impl.config.int8_block));
  writer.SetMetadata("weights", "int8 symmetric, one F32 scale per output channel (row)");
  writer.SetMetadata("activations",
                     "int8 symmetric, one scale per row and per int8_block values, at run time");
  writer.Write(path);
}

MultiheadAttention::MultiheadAttention() = default;
MultiheadAttention::MultiheadAttention(MultiheadAttention&&) noexcept = default;
MultiheadAttention& MultiheadAttention::operator=(MultiheadAttention&&) noexcept = default;
MultiheadAttention::~MultiheadAttention() = default;

const Config& MultiheadAttention::config() const { return impl_->config; }

void MultiheadAttention::Forward(Context& context, ConstTensor query, ConstTensor key,
                                 ConstTensor value, Tensor out) const {
  const MhaShape shape = ValidateForward(impl_->config, query, key, value, out);
  Context::State& state = *context.state_;
  MhaForward(impl_->projections, shape, query.data, key.data, value.data, out.data,
             *state.executor, state.workspace);
}

void MultiheadAttention::Forward(Context& context, ConstTensor x, Tensor out) const {
  Forward(context, x, x, x, out);
}

}  // namespace edgeattn
