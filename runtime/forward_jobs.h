// The parallel work of a forward call's projection phases: quantizing activations (int8) and
// GEMMs, split into items of kRowChunk rows of one batch item (x one weight panel), so that
// rows past a padded batch item's length cost nothing.
#ifndef EDGEATTN_RUNTIME_FORWARD_JOBS_H_
#define EDGEATTN_RUNTIME_FORWARD_JOBS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "edgeattn/executor.hpp"
#include "runtime/parallel_for_items.h"
#include "runtime/packed_projection.h"
#include "simd/projection_kernel.h"
#include "simd/quantize.h"

namespace edgeattn {

// Rows of activations per GEMM or quantization work item: small enough that 2-8 workers get
// balanced shares on the contract shapes, large enough that an item amortises re-reading its
// weight panel.
inline constexpr std::size_t kRowChunk = 64;

inline std::size_t DivCeil(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
inline std::size_t Min(std::size_t a, std::size_t b) { return a < b ? a : b; }

// The rows of a [batch, length, *] activation, of which the first lengths[b] of each batch
// item are valid (lengths null: all). Work items are chunks of kRowChunk rows of one item.
struct BatchRows {
  std::size_t batch;
  std::size_t length;
  const std::size_t* lengths;

  std::size_t chunks() const { return batch * DivCeil(length, kRowChunk); }
  std::size_t valid(std::size_t b) const { return lengths != nullptr ? lengths[b] : length; }
  // Flat rows [begin, valid_end) of a chunk are valid, [valid_end, end) padding.
  struct Range {
    std::size_t begin, valid_end, end;
  };
  Range chunk(std::size_t c) const {
    const std::size_t per_item = DivCeil(length, kRowChunk);
    const std::size_t b = c / per_item;
    const std::size_t first = (c % per_item) * kRowChunk;
    const std::size_t last = Min(first + kRowChunk, length);
    const std::size_t valid_last = Min(last, valid(b) > first ? valid(b) : first);
    return {b * length + first, b * length + valid_last, b * length + last};
  }
  // The same rows for work that treats every row alike: with no lengths, the items' rows are one
  // run of batch x length rows, so that short items (decode steps, beams) share chunks and a
  // projection reads its weights once per chunk rather than once per item.
  BatchRows Merged() const {
    return lengths != nullptr ? *this : BatchRows{1, batch * length, nullptr};
  }
};

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

// One projection C = A W^T + b over the valid rows, as items of one row chunk x one panel of
// the projection's kernel. With zero_padding, the padding rows of C are set to zero.
struct GemmJob {
  simd::ProjectionInput a;  // the rows the kernel reads (float or quantized)
  BatchRows rows;
  const PackedProjection* w;
  float* c;
  std::size_t ldc;
  bool zero_padding;

  std::size_t items() const { return rows.Merged().chunks() * w->panels(); }
  void Run(std::size_t item) const {
    const BatchRows::Range r = rows.Merged().chunk(item / w->panels());
    const std::size_t panel = item % w->panels();
    if (r.begin < r.valid_end) {
      w->kernel().run(a, r.begin, r.valid_end, w->view(), panel, panel + 1, c, ldc);
    }
    if (zero_padding) {
      const std::size_t width = w->kernel().panel_width;
      const std::size_t col0 = panel * width;
      const std::size_t cols = Min(width, w->n() - col0);
      for (std::size_t row = r.valid_end; row < r.end; ++row) {
        std::memset(c + row * ldc + col0, 0, cols * sizeof(float));
      }
    }
  }
};

// Rows per quantization item: a quarter of a row chunk, so that the single chunk of a short
// sequence still splits between workers. Each row is quantized on its own, so any split gives
// the same bytes.
inline constexpr std::size_t kQuantizeRows = kRowChunk / 4;

// Quantizes kQuantizeRows rows of one row chunk of one input per item.
struct QuantizeJob {
  const float* x;  // null: this input is another job's, already quantized (no items)
  BatchRows rows;
  QuantizedRows out;
  std::size_t d;
  std::size_t block;
  simd::QuantizedBytes bytes;  // as the projections' kernel reads them

  static constexpr std::size_t kItemsPerChunk = kRowChunk / kQuantizeRows;
  std::size_t items() const { return x != nullptr ? rows.chunks() * kItemsPerChunk : 0; }
  void Run(std::size_t item) const {
    const BatchRows::Range r = rows.chunk(item / kItemsPerChunk);
    const std::size_t begin = r.begin + item % kItemsPerChunk * kQuantizeRows;
    const std::size_t end = Min(begin + kQuantizeRows, r.valid_end);
    if (begin >= end) return;
    simd::QuantizeRowsI8(x + begin * d, d, end - begin, d, block,
                         out.q + begin * simd::QuantizedRowStride(d),
                         out.scales + begin * simd::QuantBlockCount(d, block),
                         out.outliers(begin), bytes);
  }
};

// Runs the items of several independent jobs as one parallel phase: every job has items()
// work items and Run(item); the items of all jobs are split between the executor's `workers`
// workers together.
template <class Job, std::size_t kJobs>
void RunJobs(Executor& executor, std::size_t workers, const Job (&jobs)[kJobs]) {
  std::size_t first_item[kJobs + 1] = {0};
  for (std::size_t j = 0; j < kJobs; ++j) first_item[j + 1] = first_item[j] + jobs[j].items();
  ParallelForItems(executor, workers, first_item[kJobs], [&](std::size_t item, std::size_t) {
    std::size_t j = 0;
    while (item >= first_item[j + 1]) ++j;
    jobs[j].Run(item - first_item[j]);
  });
}

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_FORWARD_JOBS_H_
