// A forward call: self-attention on x [B, L, d], or cross-attention with its own key and value
// [B, Lk, d]; causal on request.
#include "edgeattn/reference.hpp"
#include "tools/cli/bench/workload.h"

namespace edgeattn {
namespace cli {
namespace {

class ForwardRun : public WorkloadRun {
 public:
  ForwardRun(const MultiheadAttention& mha, Context& context, const ConstTensor& q,
             const ConstTensor& k, const ConstTensor& v, const ForwardOptions& options)
      : mha_(mha), context_(context), q_(q), k_(k), v_(v), options_(options),
        out_(q.batch * q.length * q.features) {}

  void Call() override {
    mha_.Forward(context_, q_, k_, v_, {out_.data(), q_.batch, q_.length, q_.features}, options_);
  }
  const std::vector<float>& output() const override { return out_; }

 private:
  const MultiheadAttention& mha_;
  Context& context_;
  ConstTensor q_, k_, v_;
  ForwardOptions options_;
  std::vector<float> out_;
};

class ForwardWorkload : public Workload {
 public:
  ForwardWorkload(const BenchGroup& g, const RandomModel& model)
      : g_(g), model_(model), x_(RandomActivations(g.batch * g.seq * g.d_model)) {
    if (g.cross) {
      key_ = RandomActivations(g.batch * g.key_len * g.d_model, 8);
      value_ = RandomActivations(g.batch * g.key_len * g.d_model, 9);
    }
    options_.is_causal = g.causal;
  }

  double flops() const override {
    return ForwardFlops(g_.batch, g_.seq, g_.key_len, g_.d_model, KvDim());
  }
  double reference_flops() const override { return flops(); }

  void Reference(std::vector<float>* out) const override {
    out->resize(x_.size());
    ReferenceForward(model_.config, model_.view(), Query(), Key(), Value(),
                     {out->data(), g_.batch, g_.seq, g_.d_model}, options_);
  }

  std::unique_ptr<WorkloadRun> Start(const MultiheadAttention& mha, Context& context,
                                     const KvCacheOptions&) const override {
    return std::make_unique<ForwardRun>(mha, context, Query(), Key(), Value(), options_);
  }

 private:
  std::size_t KvDim() const { return g_.kv_heads * (g_.d_model / g_.heads); }
  ConstTensor Query() const { return {x_.data(), g_.batch, g_.seq, g_.d_model}; }
  ConstTensor Key() const {
    return g_.cross ? ConstTensor{key_.data(), g_.batch, g_.key_len, g_.d_model} : Query();
  }
  ConstTensor Value() const {
    return g_.cross ? ConstTensor{value_.data(), g_.batch, g_.key_len, g_.d_model} : Query();
  }

  BenchGroup g_;
  const RandomModel& model_;
  std::vector<float> x_, key_, value_;
  ForwardOptions options_;
};

}  // namespace

std::unique_ptr<Workload> MakeForwardWorkload(const BenchGroup& group, const RandomModel& model) {
  return std::make_unique<ForwardWorkload>(group, model);
}

}  // namespace cli
}  // namespace edgeattn
