// The element-level comparison of one tensor pair (the page's tensor view,
// issue 32 point 5): error histograms, the worst elements, a 2-D slice of the
// difference and the NaN/Inf counts, with padded rows masked out. Computed in
// one pass over chunks of both files (two when rows are masked by value), so
// memory is the chunk buffers, the top-k and the slice's cells, whatever the
// tensors' size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compare/tensor_file.h"

namespace graph_ascend::compare {

struct ElementOptions {
  int top_k = 20;                    // at most 1000
  // The slice: the axes drawn as rows and columns (-1: none, for 0-D and 1-D
  // tensors), every other axis held at fixed[axis] (0 when fixed is shorter).
  int row_axis = -1, col_axis = -1;
  std::vector<int64_t> fixed;
  int max_cells = 64;                // per side of the heatmap; larger slices are pooled
  // Masking of padded rows; a row is the sub-tensor at one index of axes
  // [0, mask_axis]. kLength: rows whose index on mask_axis is >= mask_length.
  // kValue: rows whose every element equals mask_value on both sides.
  enum class Mask { kNone, kLength, kValue };
  Mask mask = Mask::kNone;
  int mask_axis = 0;
  int64_t mask_length = 0;
  double mask_value = 0;
  int64_t chunk = 1 << 16;           // elements per read
};

// Counts of log10-spaced error bins: bin i holds errors in
// [10^(lo + i/per_decade), 10^(lo + (i+1)/per_decade)); below and above the
// range, exact zeros and non-finite errors are counted apart.
struct ErrorHistogram {
  static constexpr int kLowExponent = -12, kHighExponent = 4, kPerDecade = 2;
  std::vector<uint64_t> counts = std::vector<uint64_t>((kHighExponent - kLowExponent) * kPerDecade, 0);
  uint64_t zero = 0, below = 0, above = 0;
  void Add(double error);
};

struct SideCounts {
  uint64_t nan = 0, pos_inf = 0, neg_inf = 0;
  double min = 0, max = 0;  // over the finite compared elements
  bool has_range = false;
};

struct WorstElement {
  int64_t flat = 0;
  std::vector<int64_t> index;
  double npu = 0, bench = 0, abs_err = 0, rel_err = 0;
};

// The slice of the difference npu - bench: cells row-major, each the
// difference of largest magnitude among the elements pooled into it; NaN for
// a cell with a non-finite element and no finite one, and `masked` for a cell
// whose elements are all masked.
struct SliceMap {
  int row_axis = -1, col_axis = -1;
  int64_t rows = 1, cols = 1;          // the slice's extent in elements
  int64_t cell_rows = 1, cell_cols = 1;  // the map's (pooling when the slice is larger)
  std::vector<double> diff;
  std::vector<bool> masked;
};

struct ElementComparison {
  std::vector<int64_t> npu_shape, bench_shape;
  std::string npu_dtype, bench_dtype;
  uint64_t elements = 0, masked = 0, compared = 0;  // compared: finite on both sides, not masked
  uint64_t masked_rows = 0, rows = 0;
  SideCounts npu, bench;
  uint64_t special_mismatch = 0;  // NaN or Inf on one side and not the same on the other
  int64_t first_special_mismatch = -1;
  double max_abs = 0, max_rel = 0, mean_abs = 0;
  ErrorHistogram abs_hist, rel_hist;
  std::vector<WorstElement> worst;  // by absolute error, largest first (flat index breaks ties)
  SliceMap slice;
};

// Relative error as msprobe's tensor compare takes it: |a - b| / |b|, both
// shifted by machine epsilon when b == 0.
double RelativeError(double npu, double bench);

// An Error (naming the option) for shapes that differ in element count, axes
// out of range or options out of bounds; the files' own errors were taken at Open.
Result<ElementComparison> CompareElements(const TensorFile& npu, const TensorFile& bench,
                                          const ElementOptions& options);

}  // namespace graph_ascend::compare
