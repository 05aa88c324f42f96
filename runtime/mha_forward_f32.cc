#include "runtime/mha_forward_f32.h"

#include <cmath>

#include "runtime/static_partition.h"
#include "simd/attention.h"
#include "simd/gemm_f32.h"

namespace edgeattn {
namespace {

// Rows of activations per GEMM work item, and query rows per attention work item: small enough
// that 2-8 workers get balanced shares on the contract shapes, large enough that a work item
// amortises re-reading its weight panel or its head's packed keys.
constexpr std::size_t kGemmRowChunk = 64;
constexpr std::size_t kQueryChunk = 64;

std::size_t DivCeil(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

struct GemmJob {
  const float* a;
  std::size_t rows;
  const PackedProjection* w;
  float* c;
  std::size_t ld;  // lda = ldc = d_model

  std::size_t items() const { return DivCeil(rows, kGemmRowChunk) * simd::GemmPanelCount(w->n()); }
  void Run(std::size_t item) const {
    const std::size_t panels = simd::GemmPanelCount(w->n());
    const std::size_t row0 = item / panels * kGemmRowChunk;
    const std::size_t panel = item % panels;
    const std::size_t row1 = row0 + kGemmRowChunk < rows ? row0 + kGemmRowChunk : rows;
    simd::GemmF32(a, ld, row0, row1, w->view(), panel, panel + 1, c, ld);
  }
};

// Runs several independent GEMMs as one parallel phase.
template <std::size_t kJobs>
void RunGemms(Executor& executor, const GemmJob (&jobs)[kJobs]) {
  std::size_t first_item[kJobs + 1] = {0};
  for (std::size_t j = 0; j < kJobs; ++j) first_item[j + 1] = first_item[j] + jobs[j].items();
  ParallelForItems(executor, first_item[kJobs], [&](std::size_t item, std::size_t) {
    std::size_t j = 0;
    while (item >= first_item[j + 1]) ++j;
    jobs[j].Run(item - first_item[j]);
  });
}

}  // namespace

void MhaForwardF32(const MhaProjections& weights, const MhaShape& shape, const float* xq,
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

  WorkspaceLayout layout;
  const std::size_t q_at = layout.Add(rows_q * d);
  const std::size_t k_at = layout.Add(rows_k * d);
  const std::size_t v_at = layout.Add(rows_k * d);
  const std::size_t concat_at = layout.Add(rows_q * d);
  const std::size_t keys_at = layout.Add(head_count * keys_size);
  const std::size_t values_at = layout.Add(head_count * values_size);
  const std::size_t scratch_at = layout.Add(executor.workers() * scratch_size);
  float* base = workspace.Reserve(layout.total());
  float* q = base + q_at;
  float* k = base + k_at;
  float* v = base + v_at;
  float* concat = base + concat_at;
  float* keys = base + keys_at;
  float* values = base + values_at;
  float* scratch = base + scratch_at;

  const GemmJob projections[] = {{xq, rows_q, &weights.q, q, d},
                                 {xk, rows_k, &weights.k, k, d},
                                 {xv, rows_k, &weights.v, v, d}};
  RunGemms(executor, projections);

  ParallelForItems(executor, head_count, [&](std::size_t bh, std::size_t) {
    const std::size_t b = bh / shape.heads;
    const std::size_t h = bh % shape.heads;
    const std::size_t offset = b * shape.lk * d + h * dk;
    simd::PackAttentionKeysValues(k + offset, d, v + offset, d, shape.lk, dk,
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
    simd::AttentionHeadArgs args{q + offset,        d,  keys + bh * keys_size,
                                 values + bh * values_size, shape.lk, dk, scale,
                                 concat + offset,   d};
    const std::size_t q0 = chunk * kQueryChunk;
    const std::size_t q1 = q0 + kQueryChunk < shape.lq ? q0 + kQueryChunk : shape.lq;
    simd::AttentionHeadF32(args, q0, q1, scratch + w * scratch_size);
  });

  const GemmJob output[] = {{concat, rows_q, &weights.out, y, d}};
  RunGemms(executor, output);
}

}  // namespace edgeattn
