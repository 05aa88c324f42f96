#include <string>
#include <utility>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "runtime/context_state.h"
#include "runtime/kv_cache_state.h"
#include "runtime/mha_forward.h"
#include "runtime/mha_validation.h"
#include "runtime/multihead_attention_impl.h"
#include "runtime/projection_weights.h"
#include "runtime/weight_quantizer.h"
#include "simd/targets.h"

namespace edgeattn {
namespace {

// Tensor and metadata names of int8 weight files (docs/int8.md, "int8 weight files").
constexpr char kFormat[] = "edgeattn-int8-v1";
constexpr char kInWeightQ[] = "in_proj_weight.int8";
constexpr char kInWeightScale[] = "in_proj_weight.scale";
constexpr char kOutWeightQ[] = "out_proj.weight.int8";
constexpr char kOutWeightScale[] = "out_proj.weight.scale";

FloatSpan SpanOf(const std::vector<float>& v) {
  return {v.empty() ? nullptr : v.data(), v.size()};
}

// The first of `names` the file holds, or "" if none.
std::string FirstPresent(const SafetensorsFile& file, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (file.Contains(name)) return name;
  }
  return "";
}

std::string Str(std::size_t v) { return std::to_string(v); }

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

MultiheadAttention MultiheadAttention::Load(const std::string& path, std::size_t num_heads,
                                            Precision precision, std::size_t int8_block) {
  const SafetensorsFile file = SafetensorsFile::Read(path);
  const bool int8_file = file.Contains(kInWeightQ);
  const std::string where = "safetensors '" + path + "': ";
  const auto meta = [&](const char* key, bool required, std::size_t fallback) -> std::size_t {
    const auto it = file.metadata().find(key);
    if (it == file.metadata().end()) {
      if (!required) return fallback;
      throw Error(where + "int8 weights need __metadata__ '" + key + "'");
    }
    try {
      return std::stoul(it->second);
    } catch (const std::exception&) {
      throw Error(where + "__metadata__ '" + key + "': expected a whole number, got '" +
                  it->second + "'");
    }
  };
  std::size_t num_kv_heads = 0;
  if (int8_file) {
    const std::size_t file_heads = meta("num_heads", true, 0);
    if (num_heads != 0 && num_heads != file_heads) {
      throw Error("num_heads: the int8 file '" + path + "' was quantized for " +
                  Str(file_heads) + " heads, got " + Str(num_heads));
    }
    num_heads = file_heads;
    num_kv_heads = meta("num_kv_heads", false, 0);
    precision = Precision::kInt8;
    int8_block = meta("int8_block", true, 0);
  }
  const std::string out_name =
      int8_file ? kOutWeightQ : FirstPresent(file, {"out_proj.weight", "o_proj.weight"});
  if (out_name.empty()) {
    throw Error(where + "expected an output projection 'out_proj.weight' or 'o_proj.weight'");
  }
  const TensorInfo& out_w = file.Info(out_name);
  if (out_w.shape.size() != 2 || out_w.shape[0] != out_w.shape[1]) {
    throw Error(where + out_name + ": expected a square [d_model, d_model] matrix");
  }
  const std::size_t d = out_w.shape[0];
  const std::string k_name =
      int8_file ? "" : FirstPresent(file, {"k_proj.weight", "k_proj_weight"});
  const bool separate = !int8_file && !file.Contains("in_proj_weight") && !k_name.empty();
  if (separate && num_heads != 0 && d % num_heads == 0) {
    // Grouped-query weights: the key projection's rows give the key/value heads.
    const TensorInfo& k_info = file.Info(k_name);
    const std::size_t dk = d / num_heads;
    if (k_info.shape.size() != 2 || k_info.shape[0] % dk != 0 || k_info.shape[0] == 0) {
      throw Error(where + k_name + ": expected [num_kv_heads * " + Str(dk) + ", " + Str(d) +
                  "] for " + Str(num_heads) + " heads");
    }
    num_kv_heads = k_info.shape[0] / dk;
  }
  const Config config{d, num_heads, precision, int8_block, num_kv_heads};
  ValidateConfig(config);
  const std::size_t kvd = KvDim(config);
  const std::size_t in_rows = d + 2 * kvd;
  const auto optional = [&](std::initializer_list<const char*> names, std::size_t n) {
    const std::string name = FirstPresent(file, names);
    return name.empty() ? std::vector<float>() : file.ReadFloat(name, {n});
  };
  std::vector<float> in_b = optional({"in_proj_bias"}, in_rows);
  const std::vector<float> out_b = optional({"out_proj.bias", "o_proj.bias"}, d);
  if (!int8_file) {
    WeightsView view;
    std::vector<float> in_w, q_w, k_w, v_w, q_b, k_b, v_b;
    if (separate) {
      const auto required = [&](const char* a, const char* b, std::size_t rows) {
        const std::string name = FirstPresent(file, {a, b});
        if (name.empty()) throw Error(where + "expected '" + a + "' (or '" + b + "')");
        return file.ReadFloat(name, {rows, d});
      };
      q_w = required("q_proj.weight", "q_proj_weight", d);
      k_w = required("k_proj.weight", "k_proj_weight", kvd);
      v_w = required("v_proj.weight", "v_proj_weight", kvd);
      view.q_proj_weight = SpanOf(q_w);
      view.k_proj_weight = SpanOf(k_w);
      view.v_proj_weight = SpanOf(v_w);
    } else {
      in_w = file.ReadFloat("in_proj_weight", {in_rows, d});
      view.in_proj_weight = SpanOf(in_w);
    }
    if (in_b.empty()) {
      q_b = optional({"q_proj.bias", "q_proj_bias"}, d);
      k_b = optional({"k_proj.bias", "k_proj_bias"}, kvd);
      v_b = optional({"v_proj.bias", "v_proj_bias"}, kvd);
      view.q_proj_bias = SpanOf(q_b);
      view.k_proj_bias = SpanOf(k_b);
      view.v_proj_bias = SpanOf(v_b);
    }
    view.in_proj_bias = SpanOf(in_b);
    const std::vector<float> out_wf = file.ReadFloat(out_name, {d, d});
    view.out_proj_weight = SpanOf(out_wf);
    view.out_proj_bias = SpanOf(out_b);
    return MultiheadAttention(config, view);
  }
  const auto int8_tensor = [&](const char* name, std::size_t rows) {
    const TensorInfo& info = file.Info(name);
    if (info.dtype != DType::kI8 || info.shape != std::vector<std::size_t>{rows, d}) {
      throw Error(where + name + ": expected I8 [" + Str(rows) + ", " + Str(d) + "]");
    }
    return reinterpret_cast<const std::int8_t*>(file.Data(name));
  };
  const std::int8_t* in_q = int8_tensor(kInWeightQ, in_rows);
  const std::int8_t* out_q = int8_tensor(kOutWeightQ, d);
  const std::vector<float> in_scale = file.ReadFloat(kInWeightScale, {in_rows});
  const std::vector<float> out_scale = file.ReadFloat(kOutWeightScale, {d});
  const float* bias = SpanOf(in_b).data;
  simd::InitDispatch();
  MultiheadAttention mha;
  mha.impl_ = std::make_unique<Impl>();
  mha.impl_->config = config;
  mha.impl_->BuildInt8({in_q, in_q + d * d, in_q + (d + kvd) * d, out_q, in_scale.data(),
                        in_scale.data() + d, in_scale.data() + d + kvd, out_scale.data(), bias,
                        bias != nullptr ? bias + d : nullptr,
                        bias != nullptr ? bias + d + kvd : nullptr, SpanOf(out_b).data});
  return mha;
}

void MultiheadAttention::SaveInt8(const std::string& path) const {
  const Impl& impl = *impl_;
  if (!impl.projections.int8) {
    throw Error("SaveInt8: expected an operator built with Precision::kInt8, got fp32");
  }
  const std::size_t d = impl.config.d_model;
  const std::size_t in_rows = d + 2 * KvDim(impl.config);
  // Everything is read back from the packed projections: values, scales and biases.
  std::vector<std::int8_t> in_q;
  std::vector<float> in_scale, in_bias;
  for (const PackedProjectionI8* p : {&impl.projections.q8, &impl.projections.k8,
                                      &impl.projections.v8}) {
    const std::vector<std::int8_t> values = p->UnpackValues();
    in_q.insert(in_q.end(), values.begin(), values.end());
    in_scale.insert(in_scale.end(), p->view().scales, p->view().scales + p->n());
    const float* bias = p->view().bias;
    if (bias != nullptr) in_bias.insert(in_bias.end(), bias, bias + p->n());
  }
  // A file holds one bias for all three projections or none: fill the missing ones with zeros.
  if (!in_bias.empty() && in_bias.size() != in_rows) {
    in_bias.clear();
    for (const PackedProjectionI8* p : {&impl.projections.q8, &impl.projections.k8,
                                        &impl.projections.v8}) {
      const float* bias = p->view().bias;
      for (std::size_t n = 0; n < p->n(); ++n) in_bias.push_back(bias != nullptr ? bias[n] : 0.0f);
    }
  }
  const float* out_bias = impl.projections.out8.view().bias;
  const std::vector<std::int8_t> out_q = impl.projections.out8.UnpackValues();
  SafetensorsWriter writer;
  writer.Add(kInWeightQ, DType::kI8, {in_rows, d}, in_q.data());
  writer.Add(kInWeightScale, DType::kF32, {in_rows}, in_scale.data());
  writer.Add(kOutWeightQ, DType::kI8, {d, d}, out_q.data());
  writer.Add(kOutWeightScale, DType::kF32, {d}, impl.projections.out8.view().scales);
  if (!in_bias.empty()) writer.Add("in_proj_bias", DType::kF32, {in_rows}, in_bias.data());
  if (out_bias != nullptr) writer.Add("out_proj.bias", DType::kF32, {d}, out_bias);
  writer.SetMetadata("format", kFormat);
  writer.SetMetadata("num_heads", Str(impl.config.num_heads));
  writer.SetMetadata("num_kv_heads", Str(KvHeads(impl.config)));
  writer.SetMetadata("d_model", Str(d));
  writer.SetMetadata("int8_block", Str(impl.config.int8_block));
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
                                 ConstTensor value, Tensor out,
                                 const ForwardOptions& options) const {
  MhaOptions resolved;
  const MhaShape shape =
      ValidateForward(impl_->config, query, key, value, out, options, &resolved);
  Context::State& state = *context.state_;
  MhaForward(impl_->projections, shape, resolved, query.data, key.data, value.data, out.data,
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
  KvCache::State& c = *cache.state_;
  const MhaShape shape = ValidateDecode(impl_->config, x, out, c);
  MhaOptions options;
  options.causal = true;
  options.causal_offset = c.length;
  const KvStore store{c.keys.get(), c.values.get(), c.keys_stride, c.values_stride, c.length};
  Context::State& state = *context.state_;
  MhaForward(impl_->projections, shape, options, x.data, x.data, x.data, out.data, &store,
             *state.executor, state.workspace);
  c.length += x.length;
}

}  // namespace edgeattn
