#include "tools/cli/bench/model_set.h"

namespace edgeattn {
namespace cli {
namespace {

// RandomModel's kv_heads: 0 for plain multi-head attention (packed input projections).
std::size_t ModelKvHeads(const BenchGroup& g) { return g.kv_heads == g.heads ? 0 : g.kv_heads; }

bool SameMath(const AttentionMath& a, const AttentionMath& b) {
  return a.score_scale == b.score_scale && a.softcap == b.softcap && a.window == b.window &&
         a.qk_norm == b.qk_norm && a.qk_norm_eps == b.qk_norm_eps && a.rotary == b.rotary &&
         a.rotary_dim == b.rotary_dim && a.rotary_base == b.rotary_base &&
         a.rotary_scaling == b.rotary_scaling;
}

bool SameModel(const RandomModel& m, const BenchGroup& g) {
  return m.config.d_model == g.d_model && m.config.num_heads == g.heads &&
         m.config.num_kv_heads == ModelKvHeads(g) && SameMath(m.config.math, g.math);
}

}  // namespace

ModelSet::ModelSet(const BenchPlan& plan) {
  for (const BenchGroup& g : plan.groups) {
    bool known = false;
    for (const auto& m : models_) known = known || SameModel(*m, g);
    if (known) continue;
    models_.push_back(std::make_unique<RandomModel>(g.d_model, g.heads, 42, ModelKvHeads(g)));
    models_.back()->SetMath(g.math);
    for (const BenchMode& mode : plan.modes) {
      Config config = models_.back()->config;
      config.precision = mode.precision;
      config.projection_kernel = mode.kernel;
      config.int8_block = plan.int8_block;
      const MultiheadAttention check(config, models_.back()->view());
    }
  }
}

const RandomModel& ModelSet::For(const BenchGroup& group) const {
  for (const auto& m : models_) {
    if (SameModel(*m, group)) return *m;
  }
  throw Error("bench: no model built for shape " + group.shape);
}

}  // namespace cli
}  // namespace edgeattn
