#include "runtime/mha_forward.h"

#include <cmath>

#include "runtime/parallel_for_items.h"
#include "simd/attention.h"
#include "simd/gemm_f32.h"
#include "simd/gemm_i8.h"
#include "simd/quantize.h"

namespace edgeattn {
namespace {

// Rows of activations per GEMM or quantization work item, and query rows per attention work
// item: small enough that 2-8 workers get balanced shares on the contract shapes, large enough
// that an item amortises re-reading its weight panel or its head's packed keys.
constexpr std::size_t kRowChunk = 64;
constexpr std::size_t kQueryChunk = 64;

std::size_t DivCeil(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
std::size_t Min(std::size_t a, std::size_t b) { return a < b ? a : b; }

// Activations quantized to int8 for the int8 projections, with their float outliers.
struct QuantizedRows {
  std::int8_t* q;
  float* scales;
  std::uint32_t* outlier_count;
  std::uint32_t* outlier_channel;
  float* outlier_value;
  simd::QuantizedRowsView view() const {
    return {q, scales, outlier_count, outlier_channel, outlier_value};
  }
  simd::RowOutliers outliers(std::size_t row0) const {
    return {outlier_count + row0, outlier_channel + row0 * simd::kMaxOutliersPerRow,
            outlier_value + row0 * simd::kMaxOutliersPerRow};
  }
};

// One projection over `rows` rows: C = A W^T + b, as work items of kRowChunk rows x one panel.
struct GemmJob {
  const float* a;           // fp32 input rows (fp32 mode)
  QuantizedRows a8;         // quantized input rows (int8 mode)
  std::size_t rows;
  const PackedProjection* w;
  const PackedProjectionI8* w8;  // non-null in int8 mode
  float* c;
  std::size_t ld;  // lda = ldc = d_model

  std::size_t panels() const {
    return w8 != nullptr ? simd::GemmI8PanelCount(w8->n()) : simd::GemmPanelCount(w->n());
  }
  std::size_t items() const { return DivCeil(rows, kRowChunk) * panels(); }
  void Run(std::size_t item) const {
    const std::size_t row0 = item / panels() * kRowChunk;
    const std::size_t panel = item % panels();
    const std::size_t row1 = Min(row0 + kRowChunk, rows);
    if (w8 != nullptr) {
      simd::GemmI8(a8.view(), row0, row1, w8->view(), panel, panel + 1, c, ld);
    } else {
      simd::GemmF32(a, ld, row0, row1, w->view(), panel, panel + 1, c, ld);
    }
  }
};

// Runs the items of several independent jobs as one parallel phase: every job has items()
// work items and Run(item); the items of all jobs are split between the workers together.
template <class Job, std::size_t kJobs>
void RunJobs(Executor& executor, const Job (&jobs)[kJobs]) {
  std::size_t first_item[kJobs + 1] = {0};
  for (std::size_t j = 0; j < kJobs; ++j) first_item[j + 1] = first_item[j] + jobs[j].items();
  ParallelForItems(executor, first_item[kJobs], [&](std::size_t item, std::size_t) {
    std::size_t j = 0;
    while (item >= first_item[j + 1]) ++j;
    jobs[j].Run(item - first_item[j]);
  });
}

// Quantizes kRowChunk rows of one input per item.
struct QuantizeJob {
  const float* x;  // null: this input is another job's, already quantized (no items)
  std::size_t rows;
  QuantizedRows out;
  std::size_t d;
  std::size_t block;

  std::size_t items() const { return x != nullptr ? DivCeil(rows, kRowChunk) : 0; }
  void Run(std::size_t item) const {
    const std::size_t row0 = item * kRowChunk;
    simd::QuantizeRowsI8(x + row0 * d, d, Min(kRowChunk, rows - row0), d, block,
                         out.q + row0 * simd::QuantizedRowStride(d),
                         out.scales + row0 * simd::QuantBlockCount(d, block), out.outliers(row0));
  }
};

}  // namespace

void MhaForward(const MhaProjections& weights, const MhaShape& shape, const float* xq,
                const float* xk, const float* xv, float* y, Executor& executor,
                Workspace& workspace) {
  const std::size_t d = shape.d_model;
  const std::size_t dk = d / shape.heads;
  const std::size_t rows_q = shape.batch * shape.lq;
  const std::size_t rows_k = shape.batch * shape.lk;
  const std::size_t head_count = shape.batch * shape.heads;
  const std::size_t keys_size = simd::AttentionPackedKeysSize(shape.lk, dk);
  const std::size_t values_size = simd::AttentionPackedValuesSize(shape.lk, dk);
  const std::size_t scratch_size = simd::AttentionScratchSize(dk);
  const bool int8 = weights.int8;
  const std::size_t block = int8 ? weights.q8.view().block : 0;
  const std::size_t ldq8 = simd::QuantizedRowStride(d);
  const std::size_t blocks = int8 ? simd::QuantBlockCount(d, block) : 0;

  WorkspaceLayout layout;
  const std::size_t q_at = layout.Add(rows_q * d);
  const std::size_t k_at = layout.Add(rows_k * d);
  const std::size_t v_at = layout.Add(rows_k * d);
  const std::size_t concat_at = layout.Add(rows_q * d);
  const std::size_t keys_at = layout.Add(head_count * keys_size);
  const std::size_t values_at = layout.Add(head_count * values_size);
  const std::size_t scratch_at = layout.Add(executor.workers() * scratch_size);
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
  // Inputs equal to an earlier one (self-attention, key = value) share its quantized rows.
  const auto xk8_at = add_quantized(xk == xq ? 0 : rows_k);
  const auto xv8_at = add_quantized(xv == xq || xv == xk ? 0 : rows_k);
  const auto concat8_at = add_quantized(rows_q);
  float* base = workspace.Reserve(layout.total());
  float* q = base + q_at;
  float* k = base + k_at;
  float* v = base + v_at;
  float* concat = base + concat_at;
  float* keys = base + keys_at;
  float* values = base + values_at;
  float* scratch = base + scratch_at;
  const auto quantized = [&](const QuantizedAt& at) {
    return QuantizedRows{reinterpret_cast<std::int8_t*>(base + at.q), base + at.scales,
                         reinterpret_cast<std::uint32_t*>(base + at.count),
                         reinterpret_cast<std::uint32_t*>(base + at.channel), base + at.value};
  };

  if (int8) {
    // Identical inputs (self-attention, or key = value) are quantized once and shared.
    const QuantizedRows xq8 = quantized(xq8_at);
    const QuantizedRows xk8 = xk == xq ? xq8 : quantized(xk8_at);
    const QuantizedRows xv8 = xv == xq ? xq8 : xv == xk ? xk8 : quantized(xv8_at);
    const QuantizeJob inputs[] = {{xq, rows_q, xq8, d, block},
                                  {xk == xq ? nullptr : xk, rows_k, xk8, d, block},
                                  {xv == xq || xv == xk ? nullptr : xv, rows_k, xv8, d, block}};
    RunJobs(executor, inputs);
    const GemmJob projections[] = {{nullptr, xq8, rows_q, nullptr, &weights.q8, q, d},
                                   {nullptr, xk8, rows_k, nullptr, &weights.k8, k, d},
                                   {nullptr, xv8, rows_k, nullptr, &weights.v8, v, d}};
    RunJobs(executor, projections);
  } else {
    const GemmJob projections[] = {{xq, {}, rows_q, &weights.q, nullptr, q, d},
                                   {xk, {}, rows_k, &weights.k, nullptr, k, d},
                                   {xv, {}, rows_k, &weights.v, nullptr, v, d}};
    RunJobs(executor, projections);
  }

  ParallelForItems(executor, head_count, [&](std::size_t bh, std::size_t) {
    const std::size_t b = bh / shape.heads;
    const std::size_t h = bh % shape.heads;
    const std::size_t offset = b * shape.lk * d + h * dk;
    simd::PackAttentionKeysValues(k + offset, d, v + offset, d, 0, shape.lk, dk,
                                  keys + bh * keys_size, values + bh * values_size);
  });

  const std::size_t query_chunks = DivCeil(shape.lq, kQueryChunk);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  ParallelForItems(executor, head_count * query_chunks, [&](std::size_t item, std::size_t w) {
    const std::size_t bh = item / query_chunks;
    const std::size_t chunk = item % query_chunks;
    const std::size_t b = bh / shape.heads;
    const std::size_t h = bh % shape.heads;
    const std::size_t offset = b * shape.lq * d + h * dk;
    const simd::AttentionHeadArgs args{q + offset,
                                       d,
                                       keys + bh * keys_size,
                                       values + bh * values_size,
                                       shape.lk,
                                       dk,
                                       scale,
                                       concat + offset,
                                       d};
    const std::size_t q0 = chunk * kQueryChunk;
    simd::AttentionHeadF32(args, q0, Min(q0 + kQueryChunk, shape.lq),
                           scratch + w * scratch_size);
  });

  if (int8) {
    const QuantizedRows concat8 = quantized(concat8_at);
    const QuantizeJob heads[] = {{concat, rows_q, concat8, d, block}};
    RunJobs(executor, heads);
    const GemmJob output[] = {{nullptr, concat8, rows_q, nullptr, &weights.out8, y, d}};
    RunJobs(executor, output);
  } else {
    const GemmJob output[] = {{concat, {}, rows_q, &weights.out, nullptr, y, d}};
    RunJobs(executor, output);
  }
}

}  // namespace edgeattn
