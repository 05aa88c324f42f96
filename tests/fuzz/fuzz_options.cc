// libFuzzer target: forward options and KV-cache decode steps as an app might get them wrong.
// The bytes choose the shape, head grouping, precision, every option (sizes off by a little,
// lengths out of range, mask values including NaN and inf, any weights mode), where query, key,
// value and out lie in one shared buffer (the same rows, prefix views, overlaps, out over the
// query), the attention step's maths (scale, softcap, window, norm, rotary, sinks, positions:
// any value, NaN and inf included), a few decode steps (ragged, reordered, truncated) and
// cross-attention steps against a CrossAttentionMemory; every call must either work or throw
// edgeattn::Error, never touch memory it should not, and a call on aliased views must give bit
// for bit what it gives on separate copies of its inputs.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "edgeattn/edgeattn.hpp"

namespace {

// Reads the fuzz input a byte at a time, zeros past its end.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t Next() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::size_t Below(std::size_t n) { return Next() % n; }
  // A size near `want`: usually right, sometimes a little off or zero.
  std::size_t SizeNear(std::size_t want) {
    switch (Below(8)) {
      case 0: return want + 1;
      case 1: return want > 0 ? want - 1 : 0;
      case 2: return 0;
      default: return want;
    }
  }
  float Value() {
    switch (Below(8)) {
      case 0: return -std::numeric_limits<float>::infinity();
      case 1: return std::numeric_limits<float>::infinity();
      case 2: return std::numeric_limits<float>::quiet_NaN();
      default: return static_cast<float>(static_cast<int>(Next()) - 128) / 16.0f;
    }
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// Counts near `want` values each below `bound` or a little past it.
std::vector<std::size_t> Counts(Bytes& in, std::size_t want, std::size_t bound) {
  std::vector<std::size_t> v(in.SizeNear(want));
  for (std::size_t& x : v) x = in.Below(bound + 2);
  return v;
}

// Decode steps of a batch (uniform or ragged), with per-sequence truncation and beam reordering
// between them: lengths past x or the cache, indices out of range or miscounted.
void DecodeSteps(Bytes& in, const edgeattn::MultiheadAttention& mha, edgeattn::Context& context,
                 std::size_t d) {
  edgeattn::KvCache cache(mha, 1 + in.Below(24), 1 + in.Below(3));
  const std::size_t b = cache.batch();
  for (int step = 0; step < 4; ++step) {
    const std::size_t n = 1 + in.Below(8);
    std::vector<float> x(b * n * d, in.Value()), y(x.size());
    try {
      switch (in.Below(5)) {
        case 0: {
          const std::vector<std::size_t> lengths = Counts(in, b, n);
          mha.Decode(context, {x.data(), b, n, d}, cache, {y.data(), b, n, d},
                     {lengths.data(), lengths.size()});
          break;
        }
        case 1: {
          const std::vector<std::size_t> indices = Counts(in, b, b - 1);
          cache.Reorder({indices.data(), indices.size()});
          break;
        }
        case 2: {
          const std::vector<std::size_t> lengths = Counts(in, b, cache.length());
          cache.Truncate({lengths.data(), lengths.size()});
          break;
        }
        case 3:
          cache.Truncate(in.Below(cache.length() + 2));
          break;
        default:
          mha.Decode(context, {x.data(), b, n, d}, cache, {y.data(), b, n, d});
      }
    } catch (const edgeattn::Error&) {
    }
  }
}

// A cross-attention memory projected from an encoder output (key lengths, a length past the
// memory's) and read by steps whose query items map onto memory items (out of range, miscounted,
// out over the query). A step whose items are the memory's own and whose frames are all valid
// gives bit for bit the cross-attention Forward over the encoder output.
void CrossSteps(Bytes& in, const edgeattn::MultiheadAttention& mha, edgeattn::Context& context,
                std::size_t d) {
  const std::size_t items = 1 + in.Below(2), max_length = 1 + in.Below(20);
  const std::size_t frames = 1 + in.Below(max_length + 2);
  edgeattn::CrossAttentionMemory memory(mha, max_length, items);
  std::vector<float> encoder(items * frames * d);
  for (float& x : encoder) x = in.Value();
  const bool padded = in.Below(2) != 0;
  const std::vector<std::size_t> key_lengths = padded ? Counts(in, items, frames)
                                                      : std::vector<std::size_t>();
  try {
    mha.ProjectMemory(context, {encoder.data(), items, frames, d}, memory,
                      {padded ? key_lengths.data() : nullptr, key_lengths.size()});
  } catch (const edgeattn::Error&) {
  }
  const std::size_t beams = 1 + in.Below(3), n = 1 + in.Below(4);
  std::vector<float> query(beams * n * d), separate(query.size());
  for (float& x : query) x = in.Value();
  const std::vector<float> query_copy = query;
  const bool mapped = in.Below(2) != 0;
  const std::vector<std::size_t> map = mapped ? Counts(in, beams, items - 1)
                                              : std::vector<std::size_t>();
  float* out = in.Below(3) == 0 ? query.data() : separate.data();
  bool decoded = false;
  try {
    mha.DecodeCross(context, {query.data(), beams, n, d}, memory, {out, beams, n, d},
                    {mapped ? map.data() : nullptr, map.size()});
    decoded = true;
    // Forward's cross-attention windows keys by position; a memory's frames have none
    // (docs/attention_step.md), so only unwindowed operators must agree.
    if (mapped || padded || mha.config().math.window != 0) return;
    // Beams that are not the memory's items read its item 0, which it must then be alone in:
    // Forward over that item once per beam (Forward's key batch is its query's).
    std::vector<float> repeated;
    const float* frames_of = encoder.data();
    if (beams != items) {
      if (items != 1) __builtin_trap();
      for (std::size_t b = 0; b < beams; ++b) {
        repeated.insert(repeated.end(), encoder.begin(), encoder.end());
      }
      frames_of = repeated.data();
    }
    std::vector<float> want(query.size());
    edgeattn::Context fresh(1);
    const edgeattn::ConstTensor e{frames_of, beams, frames, d};
    mha.Forward(fresh, {query_copy.data(), beams, n, d}, e, e, {want.data(), beams, n, d});
    if (std::memcmp(want.data(), out, want.size() * sizeof(float)) != 0) __builtin_trap();
  } catch (const edgeattn::Error&) {
    // Forward over the frames a step read must work as the step did: an error there skipped
    // the comparison above, whatever the step gave.
    if (decoded) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  const std::size_t heads = 1 + in.Below(4);
  const std::size_t kv_heads = in.Below(heads + 1);  // 0: num_heads; may not divide
  const std::size_t d = heads * (1 + in.Below(9));
  const std::size_t batch = 1 + in.Below(3), lq = 1 + in.Below(20), lk = 1 + in.Below(20);
  edgeattn::Config config{d, heads};
  config.num_kv_heads = kv_heads;
  config.precision = in.Below(2) ? edgeattn::Precision::kInt8 : edgeattn::Precision::kFp32;
  const std::size_t kvd = (kv_heads == 0 ? heads : kv_heads) * (d / heads);
  std::vector<float> wq(d * d, 0.1f), wkv(kvd * d, -0.2f), wo(d * d, 0.3f);
  edgeattn::WeightsView w;
  w.q_proj_weight = {wq.data(), wq.size()};
  w.k_proj_weight = {wkv.data(), wkv.size()};
  w.v_proj_weight = {wkv.data(), wkv.size()};
  w.out_proj_weight = {wo.data(), wo.size()};
  edgeattn::AttentionMath& m = config.math;
  if (in.Below(2)) m.score_scale = in.Below(2) ? in.Value() : 0.0f;
  if (in.Below(2)) m.softcap = in.Value();
  if (in.Below(2)) m.window = in.Below(2) ? in.Below(30) : edgeattn::kMaxPosition + in.Below(2);
  m.qk_norm = in.Below(4) == 0;
  if (in.Below(4) == 0) m.qk_norm_eps = in.Value();
  m.rotary = static_cast<edgeattn::RotaryLayout>(in.Below(4));  // 3: not a layout
  m.rotary_dim = in.Below(4) == 0 ? in.Below(d / heads + 3) : 0;
  if (in.Below(4) == 0) m.rotary_base = in.Value();
  if (in.Below(4) == 0) m.rotary_scaling = in.Value();
  std::vector<float> sinks, q_norm, k_norm;
  if (in.Below(2)) {
    sinks.resize(in.SizeNear(heads));
    for (float& x : sinks) x = in.Value();
    w.sinks = {sinks.data(), sinks.size()};
  }
  if (in.Below(2)) {
    q_norm.resize(in.SizeNear(d / heads));
    k_norm.resize(in.SizeNear(d / heads));
    for (float& x : q_norm) x = in.Value();
    for (float& x : k_norm) x = in.Value();
    w.q_norm_weight = {q_norm.data(), q_norm.size()};
    w.k_norm_weight = {k_norm.data(), k_norm.size()};
  }
  try {
    const edgeattn::MultiheadAttention mha(config, w);
    // Query, key and value are views at chosen row offsets of one buffer.
    std::vector<float> shared((3 * batch * (lq + lk) + 8) * d);
    for (float& x : shared) x = in.Value();
    const auto view_at = [&](std::size_t rows) {
      return shared.data() + in.Below(shared.size() / d - rows + 1) * d;
    };
    const float* q = view_at(batch * lq);
    const float* k = view_at(batch * lk);
    const float* v = in.Below(2) ? k : view_at(batch * lk);
    std::vector<float> separate_out(batch * lq * d);
    // The output over the query (allowed: inputs are read before it is written) or apart.
    float* out = in.Below(4) == 0 ? const_cast<float*>(q) : separate_out.data();
    const std::vector<float> q_copy(q, q + batch * lq * d);
    const std::vector<float> k_copy(k, k + batch * lk * d), v_copy(v, v + batch * lk * d);

    edgeattn::ForwardOptions o;
    o.is_causal = in.Below(2) != 0;
    std::unique_ptr<bool[]> padding;
    std::vector<float> mask, weights;
    std::vector<std::size_t> q_lengths, k_lengths, positions;
    if (in.Below(2)) {
      const std::size_t n = in.SizeNear(batch * lk);
      padding.reset(new bool[n + 1]);
      for (std::size_t i = 0; i < n; ++i) padding[i] = in.Below(3) == 0;
      o.key_padding_mask = {padding.get(), n};
    }
    if (in.Below(2)) {
      mask.resize(in.SizeNear((in.Below(2) ? batch * heads : 1) * lq * lk));
      for (float& x : mask) x = in.Value();
      o.attn_mask = {mask.data(), mask.size()};
    }
    if (in.Below(2)) {
      q_lengths.resize(in.SizeNear(batch));
      for (std::size_t& x : q_lengths) x = in.Below(lq + 2);
      o.query_lengths = {q_lengths.data(), q_lengths.size()};
    }
    if (in.Below(2)) {
      k_lengths.resize(in.SizeNear(batch));
      for (std::size_t& x : k_lengths) x = in.Below(lk + 2);
      o.key_lengths = {k_lengths.data(), k_lengths.size()};
    }
    if (in.Below(2)) {
      positions.resize(in.SizeNear(lq));
      for (std::size_t& x : positions) {
        x = in.Below(4) == 0 ? edgeattn::kMaxPosition - 1 + in.Below(2) : in.Below(64);
      }
      o.positions = {positions.data(), positions.size()};
      if (lq == lk && in.Below(2)) o.key_positions = o.positions;
    }
    o.need_weights = static_cast<edgeattn::AttentionWeights>(in.Below(4));
    if (in.Below(4) != 0) {
      weights.resize(in.SizeNear(batch * (in.Below(2) ? heads : 1) * lq * lk));
      o.attn_weights = {weights.data(), weights.size()};
    }
    edgeattn::Context context(1 + in.Below(2));
    bool aliased_ran = false;
    try {
      mha.Forward(context, {q, batch, lq, d}, {k, batch, lk, d}, {v, batch, lk, d},
                  {out, batch, lq, d}, o);
      aliased_ran = true;
      std::vector<float> want(batch * lq * d);
      edgeattn::Context fresh(1);
      mha.Forward(fresh, {q_copy.data(), batch, lq, d}, {k_copy.data(), batch, lk, d},
                  {v_copy.data(), batch, lk, d}, {want.data(), batch, lq, d}, o);
      if (std::memcmp(want.data(), out, want.size() * sizeof(float)) != 0) __builtin_trap();
    } catch (const edgeattn::Error&) {
      // The call on separate copies must work where the aliased one did: an error there
      // skipped the comparison above, whatever the aliased call wrote.
      if (aliased_ran) __builtin_trap();
    }
    DecodeSteps(in, mha, context, d);
    CrossSteps(in, mha, context, d);
  } catch (const edgeattn::Error&) {
  }
  return 0;
}
