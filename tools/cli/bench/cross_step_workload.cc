// A cross-attention decoder step: n new positions of each of B sequences attend to an encoder
// output of key_len frames (key = value, as in Whisper, T5 and Marian). Two rows per shape: the
// step against a CrossAttentionMemory projected once before the timed calls (xmem), and the same
// step as a cross-attention Forward that projects the frames again on every call (xproj). Both
// compute the same outputs, and the reference is the float cross-attention over the frames.
#include "edgeattn/reference.hpp"
#include "tools/cli/bench/workload.h"

namespace edgeattn {
namespace cli {
namespace {

class CrossStepRun : public WorkloadRun {
 public:
  CrossStepRun(const MultiheadAttention& mha, Context& context, const BenchGroup& g,
               const std::vector<float>& query, const std::vector<float>& encoder)
      : mha_(mha), context_(context), g_(g), query_(query), encoder_(encoder), out_(query.size()) {
    if (g.step == DecodeStep::kCrossMemory) {
      memory_ = std::make_unique<CrossAttentionMemory>(mha, g.key_len, g.batch);
      // A context of its own projects the frames, so that the row's scratch memory is the step's.
      Context projection(context.threads());
      mha.ProjectMemory(projection, Encoder(), *memory_);
    }
  }

  void Call() override {
    const ConstTensor query{query_.data(), g_.batch, g_.seq, g_.d_model};
    const Tensor out{out_.data(), g_.batch, g_.seq, g_.d_model};
    if (memory_ != nullptr) {
      mha_.DecodeCross(context_, query, *memory_, out);
    } else {
      mha_.Forward(context_, query, Encoder(), Encoder(), out);
    }
  }
  const std::vector<float>& output() const override { return out_; }
  std::size_t cache_bytes() const override { return memory_ != nullptr ? memory_->bytes() : 0; }

 private:
  ConstTensor Encoder() const { return {encoder_.data(), g_.batch, g_.key_len, g_.d_model}; }

  const MultiheadAttention& mha_;
  Context& context_;
  BenchGroup g_;
  const std::vector<float>& query_;
  const std::vector<float>& encoder_;
  std::unique_ptr<CrossAttentionMemory> memory_;
  std::vector<float> out_;
};

class CrossStepWorkload : public Workload {
 public:
  CrossStepWorkload(const BenchGroup& g, const RandomModel& model)
      : g_(g),
        model_(model),
        query_(RandomActivations(g.batch * g.seq * g.d_model)),
        encoder_(RandomActivations(g.batch * g.key_len * g.d_model, 8)) {}

  // The memory's step projects the query and output rows only; the re-projecting one also the
  // key_len frames' keys and values.
  double flops() const override {
    const double projected = g_.step == DecodeStep::kCrossMemory ? 0.0 : g_.key_len;
    const double d = static_cast<double>(g_.d_model);
    return static_cast<double>(g_.batch) *
           (4.0 * g_.seq * d * d + 4.0 * projected * d * d + 4.0 * double(g_.seq) * g_.key_len * d);
  }
  double reference_flops() const override {
    return ForwardFlops(g_.batch, g_.seq, g_.key_len, g_.d_model);
  }

  void Reference(std::vector<float>* out) const override {
    const ConstTensor encoder{encoder_.data(), g_.batch, g_.key_len, g_.d_model};
    out->resize(query_.size());
    ReferenceForward(model_.config, model_.view(), {query_.data(), g_.batch, g_.seq, g_.d_model},
                     encoder, encoder, {out->data(), g_.batch, g_.seq, g_.d_model});
  }

  std::unique_ptr<WorkloadRun> Start(const MultiheadAttention& mha, Context& context,
                                     const KvCacheOptions&) const override {
    return std::make_unique<CrossStepRun>(mha, context, g_, query_, encoder_);
  }

 private:
  BenchGroup g_;
  const RandomModel& model_;
  std::vector<float> query_, encoder_;
};

}  // namespace

std::unique_ptr<Workload> MakeCrossStepWorkload(const BenchGroup& group, const RandomModel& model) {
  return std::make_unique<CrossStepWorkload>(group, model);
}

}  // namespace cli
}  // namespace edgeattn
