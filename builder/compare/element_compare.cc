#include "compare/element_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <utility>

namespace graph_ascend::compare {
namespace {

constexpr double kEps = 2.220446049250313e-16;
constexpr int kMaxTopK = 1000;
constexpr int kMaxCells = 512;

// Orders the top-k heap: the element that leaves first (the least bad) on top.
struct LessBad {
  bool operator()(const WorstElement& a, const WorstElement& b) const {
    if (a.abs_err != b.abs_err) return a.abs_err > b.abs_err;
    return a.flat < b.flat;  // a later element is less bad at equal error: the first kept
  }
};

Status CheckOptions(const std::vector<int64_t>& shape, const ElementOptions& o) {
  const int rank = static_cast<int>(shape.size());
  auto bad = [](const std::string& what) { return Error{"", "", what}; };
  if (o.top_k < 0 || o.top_k > kMaxTopK) return bad("top_k: between 0 and 1000, not " + std::to_string(o.top_k));
  if (o.max_cells < 1 || o.max_cells > kMaxCells) {
    return bad("max_cells: between 1 and 512, not " + std::to_string(o.max_cells));
  }
  if (o.chunk < 1) return bad("chunk: at least 1 element");
  for (int axis : {o.row_axis, o.col_axis}) {
    if (axis < -1 || axis >= rank) {
      return bad("slice axis " + std::to_string(axis) + " out of range for a " + std::to_string(rank) + "-D tensor");
    }
  }
  if (o.row_axis >= 0 && o.row_axis == o.col_axis) return bad("the slice's row and column axes are the same");
  for (size_t k = 0; k < o.fixed.size() && k < shape.size(); ++k) {
    if (static_cast<int>(k) == o.row_axis || static_cast<int>(k) == o.col_axis) continue;
    if (o.fixed[k] < 0 || o.fixed[k] >= shape[k]) {
      return bad("fixed index " + std::to_string(o.fixed[k]) + " out of range on axis " + std::to_string(k) +
                 " (size " + std::to_string(shape[k]) + ")");
    }
  }
  if (o.mask != ElementOptions::Mask::kNone && (o.mask_axis < 0 || o.mask_axis >= rank)) {
    return bad("mask axis " + std::to_string(o.mask_axis) + " out of range for a " + std::to_string(rank) +
               "-D tensor");
  }
  if (o.mask == ElementOptions::Mask::kLength && o.mask_length < 0) return bad("mask length must be >= 0");
  return Status::Ok();
}

// Rows of axes [0, axis] whose every element equals `value` on both sides
// (the first pass of a value mask; a bit a row).
std::vector<bool> PaddedRows(const TensorFile& npu, const TensorFile& bench, double value, int64_t chunk,
                             int64_t row_len, int64_t rows) {
  std::vector<bool> padded(static_cast<size_t>(rows), true);
  std::vector<double> a(static_cast<size_t>(chunk)), b(static_cast<size_t>(chunk));
  for (int64_t first = 0; first < npu.count(); first += chunk) {
    int64_t n = std::min(chunk, npu.count() - first);
    npu.Read(first, n, a.data());
    bench.Read(first, n, b.data());
    for (int64_t i = 0; i < n; ++i) {
      if (a[i] != value || b[i] != value) padded[static_cast<size_t>((first + i) / row_len)] = false;
    }
    npu.Release(first + n);
    bench.Release(first + n);
  }
  npu.Release();  // the second pass reads (and releases) from the start again
  bench.Release();
  return padded;
}

}  // namespace

void ErrorHistogram::Add(double error) {
  if (!(error > 0)) {
    ++zero;
    return;
  }
  double bin = std::floor((std::log10(error) - kLowExponent) * kPerDecade);
  if (bin < 0) {
    ++below;
  } else if (bin >= static_cast<double>(counts.size())) {
    ++above;
  } else {
    ++counts[static_cast<size_t>(bin)];
  }
}

double RelativeError(double npu, double bench) {
  if (bench == 0) {
    npu += kEps;
    bench += kEps;
  }
  return std::fabs((npu - bench) / bench);
}

Result<ElementComparison> CompareElements(const TensorFile& npu, const TensorFile& bench,
                                          const ElementOptions& options) {
  ElementComparison out;
  out.npu_shape = npu.shape();
  out.bench_shape = bench.shape();
  out.npu_dtype = npu.dtype();
  out.bench_dtype = bench.dtype();
  if (npu.count() != bench.count()) {
    return Error{"", "", "the tensors differ in size (" + std::to_string(npu.count()) + " and " +
                             std::to_string(bench.count()) + " elements): no element-wise comparison"};
  }
  const std::vector<int64_t>& shape = npu.shape();
  GA_RETURN_IF_ERROR(CheckOptions(shape, options));
  const int rank = static_cast<int>(shape.size());
  const int64_t count = npu.count();
  out.elements = static_cast<uint64_t>(count);
  // An empty tensor may have huge other dimensions (0 x 2^40 x 2^40): no products of them below.
  if (count == 0) return out;

  // Mask rows: the sub-tensors at one index of axes [0, mask_axis].
  const bool masking = options.mask != ElementOptions::Mask::kNone;
  int64_t row_len = 1;
  if (masking) {
    for (int k = options.mask_axis + 1; k < rank; ++k) row_len *= shape[k];
    out.rows = row_len > 0 ? static_cast<uint64_t>(count / row_len) : 0;
  }
  std::vector<bool> padded;
  if (options.mask == ElementOptions::Mask::kValue && row_len > 0) {
    padded = PaddedRows(npu, bench, options.mask_value, std::min(options.chunk, std::max<int64_t>(count, 1)), row_len,
                        static_cast<int64_t>(out.rows));
    out.masked_rows = static_cast<uint64_t>(std::count(padded.begin(), padded.end(), true));
  } else if (options.mask == ElementOptions::Mask::kLength && row_len > 0 && shape[options.mask_axis] > 0) {
    int64_t beyond = std::max<int64_t>(0, shape[options.mask_axis] - options.mask_length);
    out.masked_rows = static_cast<uint64_t>(count / row_len / shape[options.mask_axis] * beyond);
  }

  SliceMap& slice = out.slice;
  slice.row_axis = options.row_axis;
  slice.col_axis = options.col_axis;
  slice.rows = options.row_axis >= 0 ? shape[options.row_axis] : 1;
  slice.cols = options.col_axis >= 0 ? shape[options.col_axis] : 1;
  slice.cell_rows = std::max<int64_t>(1, std::min<int64_t>(slice.rows, options.max_cells));
  slice.cell_cols = std::max<int64_t>(1, std::min<int64_t>(slice.cols, options.max_cells));
  const size_t cells = static_cast<size_t>(slice.cell_rows * slice.cell_cols);
  slice.diff.assign(cells, 0.0);
  slice.masked.assign(cells, true);
  std::vector<uint8_t> cell_state(cells, 0);  // 0 nothing yet, 1 only non-finite, 2 finite seen
  auto fixed = [&](int k) { return k < static_cast<int>(options.fixed.size()) ? options.fixed[k] : 0; };

  std::priority_queue<WorstElement, std::vector<WorstElement>, LessBad> worst;
  double sum_abs = 0;
  std::vector<double> a(static_cast<size_t>(std::min(options.chunk, std::max<int64_t>(count, 1))));
  std::vector<double> b(a.size());
  const int64_t chunk = static_cast<int64_t>(a.size());
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  // Axes other than the slice's that are off their fixed index; the element
  // is on the slice when none is.
  int off_slice = 0;
  for (int k = 0; k < rank; ++k) {
    if (k != options.row_axis && k != options.col_axis && idx[k] != fixed(k)) ++off_slice;
  }
  auto on_axis = [&](int k) { return k != options.row_axis && k != options.col_axis; };

  for (int64_t first = 0; first < count; first += chunk) {
    int64_t n = std::min(chunk, count - first);
    npu.Read(first, n, a.data());
    bench.Read(first, n, b.data());
    npu.Release(first + n);
    bench.Release(first + n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t flat = first + i;
      const double x = a[i], y = b[i];
      bool masked = false;
      if (options.mask == ElementOptions::Mask::kLength) {
        masked = idx[options.mask_axis] >= options.mask_length;
      } else if (!padded.empty()) {
        masked = padded[static_cast<size_t>(flat / row_len)];
      }
      size_t cell = SIZE_MAX;
      if (off_slice == 0) {
        int64_t r = options.row_axis >= 0 ? idx[options.row_axis] * slice.cell_rows / slice.rows : 0;
        int64_t c = options.col_axis >= 0 ? idx[options.col_axis] * slice.cell_cols / slice.cols : 0;
        cell = static_cast<size_t>(r * slice.cell_cols + c);
      }
      if (masked) {
        ++out.masked;
      } else {
        if (cell != SIZE_MAX) slice.masked[cell] = false;
        const bool fx = std::isfinite(x), fy = std::isfinite(y);
        if (!fx || !fy) {
          out.npu.nan += std::isnan(x);
          out.npu.pos_inf += x == INFINITY;
          out.npu.neg_inf += x == -INFINITY;
          out.bench.nan += std::isnan(y);
          out.bench.pos_inf += y == INFINITY;
          out.bench.neg_inf += y == -INFINITY;
          bool same = (std::isnan(x) && std::isnan(y)) || (std::isinf(x) && x == y);
          if (!same) {
            if (out.special_mismatch++ == 0) out.first_special_mismatch = flat;
          }
          if (cell != SIZE_MAX && cell_state[cell] == 0) {
            cell_state[cell] = 1;
            slice.diff[cell] = std::numeric_limits<double>::quiet_NaN();
          }
        } else {
          ++out.compared;
          const double diff = x - y, abs_err = std::fabs(diff), rel_err = RelativeError(x, y);
          out.abs_hist.Add(abs_err);
          out.rel_hist.Add(rel_err);
          sum_abs += abs_err;
          out.max_abs = std::max(out.max_abs, abs_err);
          out.max_rel = std::max(out.max_rel, rel_err);
          for (auto [side, v] : {std::pair<SideCounts*, double>{&out.npu, x}, {&out.bench, y}}) {
            if (!side->has_range) {
              side->min = side->max = v;
              side->has_range = true;
            } else {
              side->min = std::min(side->min, v);
              side->max = std::max(side->max, v);
            }
          }
          if (options.top_k > 0) {
            WorstElement w;
            w.flat = flat;
            w.npu = x;
            w.bench = y;
            w.abs_err = abs_err;
            w.rel_err = rel_err;
            if (static_cast<int>(worst.size()) < options.top_k) {
              worst.push(std::move(w));
            } else if (LessBad()(w, worst.top())) {
              worst.pop();
              worst.push(std::move(w));
            }
          }
          if (cell != SIZE_MAX && (cell_state[cell] != 2 || abs_err > std::fabs(slice.diff[cell]))) {
            cell_state[cell] = 2;
            slice.diff[cell] = diff;
          }
        }
      }
      // Next multi-index, keeping off_slice up to date.
      for (int k = rank; k-- > 0;) {
        bool was_off = on_axis(k) && idx[k] != fixed(k);
        if (++idx[k] >= shape[k]) idx[k] = 0;
        bool now_off = on_axis(k) && idx[k] != fixed(k);
        off_slice += static_cast<int>(now_off) - static_cast<int>(was_off);
        if (idx[k] != 0) break;
      }
    }
  }
  npu.Release();
  bench.Release();
  out.mean_abs = out.compared > 0 ? sum_abs / static_cast<double>(out.compared) : 0;
  out.worst.resize(worst.size());
  for (size_t k = out.worst.size(); k-- > 0;) {
    out.worst[k] = worst.top();
    worst.pop();
  }
  for (WorstElement& w : out.worst) {
    w.index.assign(static_cast<size_t>(rank), 0);
    int64_t rest = w.flat;
    for (int k = rank; k-- > 0;) {
      w.index[k] = rest % shape[k];
      rest /= shape[k];
    }
  }
  return out;
}

}  // namespace graph_ascend::compare
