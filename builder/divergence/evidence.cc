// The evidence of one compared pair (EvidenceOf, DtypeFloor): what its inputs
// and outputs say about where the pair diverges, item by item. The ranking
// over a whole graph is in divergence.cc.
#include "divergence/divergence.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "compare/item_view.h"

namespace graph_ascend::divergence {
namespace {

// The metrics of a compared NPU item that the evidence reads, found in one
// pass (each the first of its kind; null when absent).
struct ItemMetrics {
  const compare::PairMetric* relative[4] = {nullptr, nullptr, nullptr, nullptr};  // Max/Min/Mean/NormRelativeErr
  const compare::PairMetric* result = nullptr;
  const compare::PairMetric* thousandth = nullptr;     // One Thousandth Err Ratio
  const compare::PairMetric* requires_grad = nullptr;  // Requires_grad Consistent
};

ItemMetrics MetricsOf(const compare::PairMetrics& metrics, uint32_t item) {
  using compare::MetricKind;
  ItemMetrics out;
  for (const compare::PairMetric* m = metrics.begin(item); m != metrics.end(item); ++m) {
    const compare::PairMetric** slot = nullptr;
    switch (m->kind) {
      case MetricKind::kMaxRelative: slot = &out.relative[0]; break;
      case MetricKind::kMinRelative: slot = &out.relative[1]; break;
      case MetricKind::kMeanRelative: slot = &out.relative[2]; break;
      case MetricKind::kNormRelative: slot = &out.relative[3]; break;
      case MetricKind::kResult: slot = &out.result; break;
      case MetricKind::kThousandth: slot = &out.thousandth; break;
      case MetricKind::kRequiresGrad: slot = &out.requires_grad; break;
      default: break;
    }
    if (slot != nullptr && *slot == nullptr) *slot = m;  // the first, as a search by name
  }
  return out;
}

// The mode's error of one compared item; negative when the item says nothing.
double ItemError(vis::CompareMode mode, const compare::PairMetrics& metrics, const ItemMetrics& item) {
  switch (mode) {
    case vis::MODE_STATISTICS: {
      double r = -1;
      for (const compare::PairMetric* m : item.relative) {
        if (m != nullptr && m->has_value && std::isfinite(m->value)) r = std::max(r, std::fabs(m->value));
      }
      return r;
    }
    case vis::MODE_MD5: {
      const compare::PairMetric* m = item.result;
      return m == nullptr ? -1 : (metrics.text(*m) == "pass" ? 0 : 1);
    }
    case vis::MODE_TENSOR: {
      const compare::PairMetric* m = item.thousandth;
      return m == nullptr || !m->has_value ? -1 : std::clamp(1 - m->value, 0.0, 1.0);
    }
    default: return -1;
  }
}

// NaN/inf in the max or min of an NPU item.
bool NonFinite(const compare::ItemView& item) {
  for (int k = 0; k < 2; ++k) {
    const compare::StatNumber& s = item.stats[k];
    if (s.kind == compare::StatNumber::kFloat && !std::isfinite(s.number)) return true;
  }
  return false;
}

// A dtype by its framework-free name: "torch.float32" and MindSpore's
// "Float32" are both "float32".
std::string DtypeName(const std::string& dtype) {
  std::string d = dtype.substr(dtype.rfind('.') == std::string::npos ? 0 : dtype.rfind('.') + 1);
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return std::tolower(c); });
  return d;
}

// PyStr of a value; a text is read in place.
std::string_view PyText(const compare::ValueView& v, std::string* scratch) {
  if (v.kind == compare::ValueView::kText) return v.text();
  return *scratch = compare::PyStr(v);
}

double NumberOf(const compare::StatNumber& s, bool* ok) {
  if (s.kind == compare::StatNumber::kFloat) return s.number;
  if (s.kind == compare::StatNumber::kInteger) return static_cast<double>(s.integer);
  *ok = false;
  return 0;
}

// The change of an item's statistics against the tensor's scale (docs/
// DIVERGENCE.md): Max, Min and Mean over max |Max|, |Min| of both sides,
// the Norm over the larger Norm; -1 when Max or Min is missing. `scale`
// gets the scale. Inf/NaN: 1 when the sides differ.
double ScaledChange(const compare::ItemView& a, const compare::ItemView& b, double* scale) {
  bool ok = true;
  double s[4], t[4];
  for (int k = 0; k < 2; ++k) {
    s[k] = NumberOf(a.stats[k], &ok);
    t[k] = NumberOf(b.stats[k], &ok);
  }
  *scale = 0;
  if (!ok) return -1;
  if (!std::isfinite(s[0]) || !std::isfinite(s[1]) || !std::isfinite(t[0]) || !std::isfinite(t[1])) {
    bool same = (s[0] == t[0] || (std::isnan(s[0]) && std::isnan(t[0]))) &&
                (s[1] == t[1] || (std::isnan(s[1]) && std::isnan(t[1])));
    return same ? 0 : 1;
  }
  *scale = std::max({std::fabs(s[0]), std::fabs(s[1]), std::fabs(t[0]), std::fabs(t[1])});
  if (*scale == 0) return 0;
  double c = std::max(std::fabs(s[0] - t[0]), std::fabs(s[1] - t[1])) / *scale;
  bool mean_ok = true;
  double ma = NumberOf(a.stats[2], &mean_ok), mb = NumberOf(b.stats[2], &mean_ok);
  if (mean_ok && std::isfinite(ma) && std::isfinite(mb)) c = std::max(c, std::fabs(ma - mb) / *scale);
  bool norm_ok = true;
  double na = NumberOf(a.stats[3], &norm_ok), nb = NumberOf(b.stats[3], &norm_ok);
  double nmax = std::max(std::fabs(na), std::fabs(nb));
  if (norm_ok && std::isfinite(na) && std::isfinite(nb) && nmax > 0) c = std::max(c, std::fabs(na - nb) / nmax);
  return c;
}

// The precision bit and the relative unit in the last place of a dtype name.
uint8_t PrecisionOf(std::string_view dtype, double* ulp) {
  std::string d(dtype);
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return std::tolower(c); });
  *ulp = 0;
  if (d.find("bfloat16") != std::string::npos || d.find("bf16") != std::string::npos) {
    *ulp = 0x1p-7;
    return kPrecisionBf16;
  }
  if (d.find("float16") != std::string::npos || d.find("half") != std::string::npos) {
    *ulp = 0x1p-10;
    return kPrecisionFp16;
  }
  if (d.find("float64") != std::string::npos || d.find("double") != std::string::npos) {
    *ulp = 0x1p-52;
    return kPrecisionFp64;
  }
  if (d.find("float") != std::string::npos) {
    *ulp = 0x1p-23;
    return kPrecisionFp32;
  }
  if (d.find("int") != std::string::npos || d.find("bool") != std::string::npos) return kPrecisionInt;
  return 0;
}

// A tensor (not a scalar argument such as eps, a dim or a process group).
bool IsTensor(const compare::ItemFields& fields) {
  if (fields.type.kind == compare::ValueView::kText) {
    std::string_view t = fields.type.text();
    return t.ends_with("Tensor") || t.find("Tensor") != std::string_view::npos;  // mostly "torch.Tensor"
  }
  std::string scratch;
  return PyText(fields.type, &scratch).find("Tensor") != std::string_view::npos;
}

// "" when dtype, shape and requires_grad agree, else what differs.
std::string ChangeOf(const compare::ItemFields& a, const compare::ItemFields& b, const compare::PairMetrics& metrics,
                     const ItemMetrics& item) {
  if (!compare::SamePyStr(a.dtype, b.dtype)) {
    std::string x = compare::PyStr(a.dtype), y = compare::PyStr(b.dtype);
    if (DtypeName(x) != DtypeName(y)) return "dtype " + x + " vs " + y;
  }
  if (!compare::SamePyStr(a.shape, b.shape)) {
    return "shape " + compare::PyStr(a.shape) + " vs " + compare::PyStr(b.shape);
  }
  // requires_grad counts when both sides dumped it (MindSpore tensors have none).
  const compare::PairMetric* m = item.requires_grad;
  bool both =
      a.requires_grad.kind != compare::ValueView::kAbsent && b.requires_grad.kind != compare::ValueView::kAbsent;
  if (m != nullptr && metrics.text(*m) == "False" && both) {
    return "requires_grad " + compare::PyStr(a.requires_grad) + " vs " + compare::PyStr(b.requires_grad);
  }
  return "";
}

// The element count of a dumped shape ("[1, 2, 6, 8]"), or -1 when it does not read as one.
long long ElementsOf(const std::string& shape) {
  long long n = 1;
  bool digit = false;
  long long v = 0;
  for (char c : shape) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      digit = true;
      if (v > (1LL << 40)) return -1;
    } else if (c == ',' || c == ']' || c == ')') {
      if (digit) n *= v;
      v = 0;
      digit = false;
    } else if (c != '[' && c != '(' && c != ' ') {
      return -1;
    }
  }
  return n;
}

// Whether two shapes hold the same number of elements: the same data in another layout for the
// statistics (PyTorch's matmul backward sees [2, 6, 8] where MindSpore's sees [1, 2, 6, 8]).
bool SameElements(const compare::ValueView& a, const compare::ValueView& b) {
  long long x = ElementsOf(compare::PyStr(a)), y = ElementsOf(compare::PyStr(b));
  return x >= 0 && x == y;
}

// "input.0" / "output.1" of an item key (its part after the node name).
std::string ItemLabel(const compare::ItemView& it) {
  std::string k = it.Key();
  for (const char* part : {".input.", ".output.", ".parameters.", ".parameters_grad."}) {
    size_t p = k.rfind(part);
    if (p != std::string::npos) return k.substr(p + 1);
  }
  return k;
}

}  // namespace

double DtypeFloor(vis::CompareMode mode, const std::string& dtype) {
  std::string d = dtype;
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return std::tolower(c); });
  bool tensor = mode == vis::MODE_TENSOR;
  if (d.find("bfloat16") != std::string::npos || d.find("bf16") != std::string::npos) return tensor ? 0.5 : 8e-3;
  if (d.find("float16") != std::string::npos || d.find("half") != std::string::npos) return tensor ? 0.1 : 1e-3;
  if (d.find("float64") != std::string::npos || d.find("double") != std::string::npos) return tensor ? 1e-6 : 1e-12;
  if (d.find("int") != std::string::npos || d.find("bool") != std::string::npos) return 0;
  return tensor ? 1e-3 : 1e-5;  // float32 and anything unnamed
}

Evidence EvidenceOf(vis::CompareMode mode, const vis::NodeDetail& npu, const vis::NodeDetail& bench) {
  compare::NodeItems a, b;
  compare::ItemsOf(npu, &a);
  compare::ItemsOf(bench, &b);
  compare::ItemPairing pairing;
  compare::PairItems(a, b, &pairing);
  compare::PairMetrics metrics;
  compare::MetricsOf(npu, &metrics);
  return EvidenceOf(mode, pairing, metrics);
}

Evidence EvidenceOf(vis::CompareMode mode, const compare::ItemPairing& pairing, const compare::PairMetrics& metrics) {
  Evidence e;
  // The floor of the last dtype this thread looked up (mostly one dtype throughout).
  thread_local std::string floor_dtype;
  thread_local vis::CompareMode floor_mode = vis::MODE_NONE;
  thread_local double floor_of_dtype = -1;
  auto floor_of = [mode](std::string_view dtype) {
    if (floor_of_dtype < 0 || mode != floor_mode || dtype != floor_dtype) {
      floor_dtype.assign(dtype.data(), dtype.size());
      floor_mode = mode;
      floor_of_dtype = DtypeFloor(mode, floor_dtype);
    }
    return floor_of_dtype;
  };
  // The last dtype's precision (mostly one dtype throughout).
  thread_local std::string precision_dtype;
  thread_local uint8_t precision_bit = 0;
  thread_local double precision_ulp = 0;
  auto precision_of = [](std::string_view dtype, double* ulp) {
    if (dtype != precision_dtype) {
      precision_dtype.assign(dtype.data(), dtype.size());
      precision_bit = PrecisionOf(precision_dtype, &precision_ulp);
    }
    *ulp = precision_ulp;
    return precision_bit;
  };
  double weighted_input = 0, unweighted_input = 0, output_scale = 0;
  std::span<const compare::ItemView> items = pairing.npu->items();
  // States where the NPU side dumped an item the Bench side has no k-th of
  // (MindSpore's dense backward lists the weight's and the input's gradients,
  // PyTorch's linear backward one tensor): the lists are laid out differently,
  // so a k-th pair whose shapes differ is two different tensors, not a change.
  uint32_t uneven = 0;
  for (uint32_t i = 0; i < items.size(); ++i) {
    if (pairing.items[i].positional == nullptr && items[i].state < 32) uneven |= 1u << items[i].state;
  }
  for (uint32_t i = 0; i < items.size(); ++i) {
    const compare::ItemView& a = items[i];
    const compare::PairedItem& p = pairing.items[i];
    int s = a.state;
    // Parameter gradients pair by parameter name, as ComparePair computed
    // their metrics (msprobe lists them in arrival order); the rest k-th
    // with k-th.
    const compare::ItemView* peer = s == vis::STATE_PARAMETERS_GRAD ? p.peer : p.positional;
    if (peer == nullptr) continue;
    const compare::ItemView& b = *peer;
    if (s == vis::STATE_PARAMETERS) {  // weights: neither what flows in nor what comes out
      e.has_parameters = true;
      std::string scratch;
      double ulp;
      e.precision |= precision_of(PyText(a.fields.dtype, &scratch), &ulp);
      continue;
    }
    const compare::ItemFields& fa = a.fields;
    const compare::ItemFields& fb = b.fields;
    bool input = s == vis::STATE_INPUT;
    ItemMetrics item = MetricsOf(metrics, i);
    double err = ItemError(mode, metrics, item);
    std::string change = ChangeOf(fa, fb, metrics, item);
    // Inf/NaN that the bench shows as well is not where the runs part (msprobe 26's InfNanErrChecker sets
    // it aside too): a run compared with itself, or two runs that overflow alike, do not diverge there.
    bool nonfinite = NonFinite(a) && !NonFinite(b);
    if (err >= 0 || !change.empty()) e.compared = true;
    if (input && !IsTensor(fa) && !IsTensor(fb)) {
      // A scalar argument (eps, a dim) that differs is this node's own
      // difference, not something flowing in from upstream.
      if ((err > 0 || !change.empty()) && e.note.empty()) {
        e.note = ItemLabel(a) + " argument " + compare::PyStr(fa.value) + " vs " + compare::PyStr(fb.value);
      }
      continue;
    }
    double scale = 0;
    double scaled = mode == vis::MODE_STATISTICS ? ScaledChange(a, b, &scale) : -1;
    bool shape_changed = !change.empty() && !change.starts_with("dtype ");
    bool reshaped = shape_changed && !compare::SamePyStr(fa.shape, fb.shape);
    // For the noise rule a statistic does not see the layout: the same element count is no shape change.
    if (reshaped && mode == vis::MODE_STATISTICS && SameElements(fa.shape, fb.shape)) shape_changed = false;
    {
      std::string scratch_a, scratch_b;
      double ua, ub;
      e.precision |= precision_of(PyText(fa.dtype, &scratch_a), &ua);
      e.precision |= precision_of(PyText(fb.dtype, &scratch_b), &ub);
      // A cast's rounding is the change itself: no floor where the dtypes differ.
      if (!input && ua == ub) e.ulp = std::max(e.ulp, ua);
    }
    if (reshaped && s < 32 && (uneven >> s & 1u)) continue;
    if (input) {
      if (scaled >= 0) {
        weighted_input += scaled * scale;
        unweighted_input = std::max(unweighted_input, scaled);
      }
      e.input_shape_changed |= shape_changed;
    } else {
      if (scaled >= 0) e.output_change = std::max(e.output_change, scaled);
      output_scale = std::max(output_scale, scale);
      e.output_shape_changed |= shape_changed;
    }
    if (input) {
      if (err >= 0) {
        e.has_input = true;
        e.input_error = std::max(e.input_error, err);
      }
      e.input_changed |= !change.empty();
      e.input_nonfinite |= nonfinite;
    } else {
      if (err >= 0) {
        e.has_output = true;
        e.output_error = std::max(e.output_error, err);
      }
      if (!change.empty() && !e.output_changed)
        e.note = ItemLabel(a) + " " + change + (e.note.empty() ? "" : "; " + e.note);
      e.output_changed |= !change.empty();
      e.output_nonfinite |= nonfinite;
      std::string scratch_a, scratch_b;
      std::string_view da = PyText(fa.dtype, &scratch_a), db = PyText(fb.dtype, &scratch_b);
      double floor_a = floor_of(da);
      double floor_b = compare::SameText(db, da) ? floor_a : floor_of(db);
      e.floor = std::max({e.floor, floor_a, floor_b});
    }
  }
  // What the inputs' changes can do to the output: relative changes pass
  // through a product or a linear map (the largest), absolute ones add up
  // through a sum (each change times its scale, over the output's scale:
  // a residual add of a small branch onto a large stream). The smaller of
  // the two bounds.
  e.input_change = output_scale > 0 ? std::min(unweighted_input, weighted_input / output_scale) : unweighted_input;
  e.input_change_max = unweighted_input;
  if (mode == vis::MODE_MD5) e.floor = 0;
  return e;
}

}  // namespace graph_ascend::divergence
