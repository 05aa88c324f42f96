#include "runtime/mha_forward.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/forward_jobs.h"
#include "runtime/parallel_for_items.h"
#include "simd/attention.h"
#include "simd/quantize.h"

namespace edgeattn {
namespace {

// Query rows per attention work item: a multiple of the core's row block, large enough that an
// item amortises streaming its head's packed keys and values.
constexpr std::size_t kQueryChunk = 64;

// True when two inputs are the very same rows: the same buffer, the same length per batch item
// and the same valid rows in each. Only then may one input's quantized rows serve the other; a
// prefix view of a longer buffer, or the same buffer with other lengths, has other rows.
bool SameRows(const float* a, const BatchRows& a_rows, const float* b, const BatchRows& b_rows) {
  if (a != b || a_rows.length != b_rows.length) return false;
  for (std::size_t i = 0; i < a_rows.batch; ++i) {
    if (a_rows.valid(i) != b_rows.valid(i)) return false;
  }
  return true;
}

}  // namespace

void MhaForward(const MhaProjections& weights, const MhaShape& shape, const MhaOptions& options,
                const float* xq, const float* xk, const float* xv, float* y,
                const KvStore* cache, Executor& executor, Workspace& workspace) {
  const std::size_t d = shape.d_model;
  const std::size_t dk = shape.head_dim();
  const std::size_t kvd = shape.kv_dim();
  const std::size_t group = shape.heads / shape.kv_heads;
  const std::size_t rows_q = shape.batch * shape.lq;
  const std::size_t rows_k = shape.batch * shape.lk;
  const std::size_t kv_count = shape.batch * shape.kv_heads;
  const std::size_t first = cache != nullptr ? cache->first : 0;
  const std::size_t keys_size =
      cache != nullptr ? cache->keys_stride : simd::AttentionPackedKeysSize(shape.lk, dk);
  const std::size_t values_size =
      cache != nullptr ? cache->values_stride : simd::AttentionPackedValuesSize(shape.lk, dk);
  const std::size_t scratch_size = simd::AttentionScratchSize(dk);
  const std::size_t weights_size = shape.lq * shape.lk;  // one head's attention weights
  const bool averaged = options.weights_mode == AttentionWeights::kAveraged;
  const bool int8 = weights.int8;
  const std::size_t block = int8 ? weights.q8.view().block : 0;
  const std::size_t ldq8 = simd::QuantizedRowStride(d);
  const std::size_t blocks = int8 ? simd::QuantBlockCount(d, block) : 0;
  const BatchRows q_rows{shape.batch, shape.lq, options.query_lengths};
  const BatchRows k_rows{shape.batch, shape.lk, options.key_lengths};
  // Inputs that are the same rows as an earlier one (self-attention, key = value) share its
  // quantized rows in int8 mode.
  const bool k_is_q = SameRows(xq, q_rows, xk, k_rows);
  const bool v_is_q = SameRows(xq, q_rows, xv, k_rows);
  const bool v_is_k = xv == xk;  // key and value always have the same shape and lengths

  WorkspaceLayout layout;
  const std::size_t q_at = layout.Add(rows_q * d);
  const std::size_t k_at = layout.Add(rows_k * kvd);
  const std::size_t v_at = layout.Add(rows_k * kvd);
  const std::size_t concat_at = layout.Add(rows_q * d);
  const std::size_t keys_at = layout.Add(cache != nullptr ? 0 : kv_count * keys_size);
  const std::size_t values_at = layout.Add(cache != nullptr ? 0 : kv_count * values_size);
  const std::size_t scratch_at = layout.Add(executor.workers() * scratch_size);
  const std::size_t key_bias_at = layout.Add(options.key_padding != nullptr ? rows_k : 0);
  const std::size_t head_weights_at =
      layout.Add(averaged ? shape.batch * shape.heads * weights_size : 0);
  // int8 only: quantized query, key, value and concat rows. Offsets count floats; the int8
  // rows and the uint32 outlier lists take as many floats as their bytes need.
  struct QuantizedAt {
    std::size_t q, scales, count, channel, value;
  };
  const auto add_quantized = [&](std::size_t rows) {
    if (!int8) return QuantizedAt{0, 0, 0, 0, 0};
    const std::size_t outliers = rows * simd::kMaxOutliersPerRow;
    return QuantizedAt{layout.Add(DivCeil(rows * ldq8, 4)), layout.Add(rows * blocks),
                       layout.Add(rows), layout.Add(outliers), layout.Add(outliers)};
  };
  const auto xq8_at = add_quantized(rows_q);
  const auto xk8_at = add_quantized(k_is_q ? 0 : rows_k);
  const auto xv8_at = add_quantized(v_is_q || v_is_k ? 0 : rows_k);
  const auto concat8_at = add_quantized(rows_q);
  float* base = workspace.Reserve(layout.total());
  float* q = base + q_at;
  float* k = base + k_at;
  float* v = base + v_at;
  float* concat = base + concat_at;
  float* keys = cache != nullptr ? cache->keys : base + keys_at;
  float* values = cache != nullptr ? cache->values : base + values_at;
  float* scratch = base + scratch_at;
  float* key_bias = base + key_bias_at;
  float* head_weights = averaged ? base + head_weights_at : options.weights;
  const auto quantized = [&](const QuantizedAt& at) {
    return QuantizedRows{reinterpret_cast<std::int8_t*>(base + at.q), base + at.scales,
                         reinterpret_cast<std::uint32_t*>(base + at.count),
                         reinterpret_cast<std::uint32_t*>(base + at.channel), base + at.value};
  };

  if (int8) {
    const QuantizedRows xq8 = quantized(xq8_at);
    const QuantizedRows xk8 = k_is_q ? xq8 : quantized(xk8_at);
    const QuantizedRows xv8 = v_is_q ? xq8 : v_is_k ? xk8 : quantized(xv8_at);
    const QuantizeJob inputs[] = {{xq, q_rows, xq8, d, block},
                                  {k_is_q ? nullptr : xk, k_rows, xk8, d, block},
                                  {v_is_q || v_is_k ? nullptr : xv, k_rows, xv8, d, block}};
    RunJobs(executor, inputs);
    const GemmJob projections[] = {
        {nullptr, xq8, q_rows, nullptr, &weights.q8, q, d, d, false},
        {nullptr, xk8, k_rows, nullptr, &weights.k8, k, d, kvd, false},
        {nullptr, xv8, k_rows, nullptr, &weights.v8, v, d, kvd, false}};
    RunJobs(executor, projections);
  } else {
    const GemmJob projections[] = {{xq, {}, q_rows, &weights.q, nullptr, q, d, d, false},
                                   {xk, {}, k_rows, &weights.k, nullptr, k, d, kvd, false},
                                   {xv, {}, k_rows, &weights.v, nullptr, v, d, kvd, false}};
    RunJobs(executor, projections);
  }

  if (options.key_padding != nullptr) {
    for (std::size_t i = 0; i < rows_k; ++i) {
      key_bias[i] = options.key_padding[i] ? -std::numeric_limits<float>::infinity() : 0.0f;
    }
  }
  ParallelForItems(executor, kv_count, [&](std::size_t bg, std::size_t) {
    const std::size_t b = bg / shape.kv_heads;
    const std::size_t offset = b * shape.lk * kvd + bg % shape.kv_heads * dk;
    simd::PackAttentionKeysValues(k + offset, kvd, v + offset, kvd, first, k_rows.valid(b), dk,
                                  keys + bg * keys_size, values + bg * values_size);
  });

  const std::size_t query_chunks = DivCeil(shape.lq, kQueryChunk);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  const std::size_t head_count = shape.batch * shape.heads;
  ParallelForItems(executor, head_count * query_chunks, [&](std::size_t item, std::size_t w) {
    const std::size_t bh = item / query_chunks;
    const std::size_t b = bh / shape.heads;
    const std::size_t bg = b * shape.kv_heads + bh % shape.heads / group;
    const std::size_t q0 = item % query_chunks * kQueryChunk;
    const std::size_t q1 = Min(q0 + kQueryChunk, shape.lq);
    const std::size_t q_valid = Min(q1, q_rows.valid(b));
    const std::size_t lk = k_rows.valid(b);
    const std::size_t offset = b * shape.lq * d + bh % shape.heads * dk;
    simd::AttentionHeadArgs args{q + offset,
                                 d,
                                 keys + bg * keys_size,
                                 values + bg * values_size,
                                 first + lk,
                                 dk,
                                 scale,
                                 concat + offset,
                                 d};
    if (options.attn_mask != nullptr) {
      args.mask.additive = options.attn_mask + (options.mask_per_head ? bh * weights_size : 0);
      args.mask.ld_additive = shape.lk;
    }
    if (options.key_padding != nullptr) args.mask.key_bias = key_bias + b * shape.lk;
    args.mask.causal = options.causal;
    args.mask.causal_offset = options.causal_offset;
    float* head_w = head_weights != nullptr ? head_weights + bh * weights_size : nullptr;
    if (head_w != nullptr) {
      args.weights = head_w;
      args.ldw = shape.lk;
    }
    if (q0 < q_valid) simd::AttentionHeadF32(args, q0, q_valid, scratch + w * scratch_size);
    if (head_w != nullptr) {
      // Keys past the item's length and query rows past its length have zero weight.
      for (std::size_t i = q0; i < q1; ++i) {
        const std::size_t from = i < q_valid ? lk : 0;
        std::memset(head_w + i * shape.lk + from, 0, (shape.lk - from) * sizeof(float));
      }
    }
  });

  if (averaged) {
    ParallelForItems(executor, shape.batch * query_chunks, [&](std::size_t item, std::size_t) {
      const std::size_t b = item / query_chunks;
      const std::size_t q0 = item % query_chunks * kQueryChunk;
      const std::size_t q1 = Min(q0 + kQueryChunk, shape.lq);
      const float heads = static_cast<float>(shape.heads);
      for (std::size_t i = q0; i < q1; ++i) {
        float* out = options.weights + (b * shape.lq + i) * shape.lk;
        const float* in = head_weights + (b * shape.heads * shape.lq + i) * shape.lk;
        for (std::size_t j = 0; j < shape.lk; ++j) out[j] = in[j];
        for (std::size_t h = 1; h < shape.heads; ++h) {
          const float* in_h = in + h * weights_size;
          for (std::size_t j = 0; j < shape.lk; ++j) out[j] += in_h[j];
        }
        for (std::size_t j = 0; j < shape.lk; ++j) out[j] /= heads;
      }
    });
  }

  const bool padded = options.query_lengths != nullptr;
  if (int8) {
    const QuantizedRows concat8 = quantized(concat8_at);
    const QuantizeJob heads[] = {{concat, q_rows, concat8, d, block}};
    RunJobs(executor, heads);
    const GemmJob output[] = {{nullptr, concat8, q_rows, nullptr, &weights.out8, y, d, d, padded}};
    RunJobs(executor, output);
  } else {
    const GemmJob output[] = {{concat, {}, q_rows, &weights.out, nullptr, y, d, d, padded}};
    RunJobs(executor, output);
  }
}

}  // namespace edgeattn
