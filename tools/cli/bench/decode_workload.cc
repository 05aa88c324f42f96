// A decode step: n new positions of each of B sequences against a KV cache of cache_len
// positions. Every timed call rolls the cache back to cache_len first, so each sees the same
// cache. The reference is those positions of a causal forward pass over the whole sequence,
// which recomputes every position's keys and values (so "vs ref" also shows what the cache saves).
// Beams (DecodeStep::kBeams): the B sequences share their cached prompt, as beam search's beams
// do, and every call first reorders the cache as beam search keeps its best beams (one forked,
// one dropped); shared prompts make the reorder leave the contents, and so the reference, as
// they were.
#include <algorithm>
#include <limits>

#include "edgeattn/reference.hpp"
#include "tools/cli/bench/workload.h"

namespace edgeattn {
namespace cli {
namespace {

class DecodeRun : public WorkloadRun {
 public:
  DecodeRun(const MultiheadAttention& mha, Context& context, const BenchGroup& g,
            const KvCacheOptions& kv, const std::vector<float>& prefix,
            const std::vector<float>& step)
      : mha_(mha), context_(context), g_(g), step_(step),
        cache_(mha, g.cache_len + g.seq, g.batch, kv), out_(step.size()) {
    // Beam 0 forks into beams 0 and 1, the others shift down and the last is dropped.
    for (std::size_t b = 0; b < g.batch; ++b) beams_.push_back(b == 0 ? 0 : b - 1);
    if (g.cache_len > 0) Prefill(prefix);
  }

  void Call() override {
    cache_.Truncate(g_.cache_len);
    if (g_.step == DecodeStep::kBeams) cache_.Reorder({beams_.data(), beams_.size()});
    mha_.Decode(context_, {step_.data(), g_.batch, g_.seq, g_.d_model}, cache_,
                {out_.data(), g_.batch, g_.seq, g_.d_model});
  }
  const std::vector<float>& output() const override { return out_; }
  std::size_t cache_bytes() const override { return cache_.bytes(); }
  std::size_t cache_bytes_per_position() const override { return cache_.bytes_per_position(); }
  const char* cache_kernel() const override { return cache_.attention_kernel(); }

 private:
  // A context of its own fills the cache, so that the row's scratch memory is the step's; in
  // chunks a windowed cache's ring takes (prefix is [B, cache_len, d]).
  void Prefill(const std::vector<float>& prefix) {
    Context prefill(context_.threads());
    const std::size_t d = g_.d_model, window = mha_.config().math.window;
    const std::size_t chunk = window != 0 ? cache_.slots() - window + 1 : g_.cache_len;
    std::vector<float> in, out;
    for (std::size_t first = 0; first < g_.cache_len; first += chunk) {
      const std::size_t n = std::min(chunk, g_.cache_len - first);
      in.clear();
      for (std::size_t b = 0; b < g_.batch; ++b) {
        const float* rows = prefix.data() + (b * g_.cache_len + first) * d;
        in.insert(in.end(), rows, rows + n * d);
      }
      out.resize(in.size());
      mha_.Decode(prefill, {in.data(), g_.batch, n, d}, cache_, {out.data(), g_.batch, n, d});
    }
  }

  const MultiheadAttention& mha_;
  Context& context_;
  BenchGroup g_;
  const std::vector<float>& step_;
  KvCache cache_;
  std::vector<float> out_;
  std::vector<std::size_t> beams_;
};

class DecodeWorkload : public Workload {
 public:
  DecodeWorkload(const BenchGroup& g, const RandomModel& model)
      : g_(g), model_(model), all_(RandomActivations(g.batch * g.key_len * g.d_model)) {
    // all_ is [B, cache_len + seq, d]: each sequence's cached positions, then its new ones.
    const std::size_t d = g.d_model;
    if (g.step == DecodeStep::kBeams) {
      for (std::size_t b = 1; b < g.batch; ++b) {
        std::copy(all_.begin(), all_.begin() + g.cache_len * d, all_.begin() + b * g.key_len * d);
      }
    }
    for (std::size_t b = 0; b < g.batch; ++b) {
      const float* sequence = all_.data() + b * g.key_len * d;
      prefix_.insert(prefix_.end(), sequence, sequence + g.cache_len * d);
      step_.insert(step_.end(), sequence + g.cache_len * d, sequence + g.key_len * d);
    }
  }

  double flops() const override {
    return DecodeFlops(g_.batch, g_.seq, g_.cache_len, g_.d_model, KvDim());
  }
  double reference_flops() const override {
    return ForwardFlops(g_.batch, g_.seq, g_.key_len, g_.d_model, KvDim());
  }

  void Reference(std::vector<float>* out) const override {
    // New position i (of seq) is at cache_len + i: it sees keys j <= cache_len + i, and with a
    // window those after cache_len + i - window. The mask says so; the rotary positions too.
    const std::size_t window = model_.config.math.window;
    std::vector<float> mask(g_.seq * g_.key_len, 0.0f);
    for (std::size_t i = 0; i < g_.seq; ++i) {
      const std::size_t position = g_.cache_len + i;
      for (std::size_t j = 0; j < g_.key_len; ++j) {
        if (j > position || (window != 0 && position - j >= window)) {
          mask[i * g_.key_len + j] = -std::numeric_limits<float>::infinity();
        }
      }
    }
    std::vector<std::size_t> positions(g_.seq), key_positions(g_.key_len);
    for (std::size_t i = 0; i < g_.seq; ++i) positions[i] = g_.cache_len + i;
    for (std::size_t j = 0; j < g_.key_len; ++j) key_positions[j] = j;
    Config config = model_.config;
    config.math.window = 0;  // in the mask, by position
    ForwardOptions options;
    options.attn_mask = {mask.data(), mask.size()};
    if (config.math.rotary != RotaryLayout::kNone) {
      options.positions = {positions.data(), positions.size()};
      options.key_positions = {key_positions.data(), key_positions.size()};
    }
    const ConstTensor all{all_.data(), g_.batch, g_.key_len, g_.d_model};
    out->resize(step_.size());
    ReferenceForward(config, model_.view(),
                     {step_.data(), g_.batch, g_.seq, g_.d_model}, all, all,
                     {out->data(), g_.batch, g_.seq, g_.d_model}, options);
  }

  std::unique_ptr<WorkloadRun> Start(const MultiheadAttention& mha, Context& context,
                                     const KvCacheOptions& kv) const override {
    return std::make_unique<DecodeRun>(mha, context, g_, kv, prefix_, step_);
  }
  bool has_cache() const override { return true; }

 private:
  std::size_t KvDim() const { return g_.kv_heads * (g_.d_model / g_.heads); }

  BenchGroup g_;
  const RandomModel& model_;
  std::vector<float> all_, prefix_, step_;
};

}  // namespace

std::unique_ptr<Workload> MakeDecodeWorkload(const BenchGroup& group, const RandomModel& model) {
  return std::make_unique<DecodeWorkload>(group, model);
}

}  // namespace cli
}  // namespace edgeattn
