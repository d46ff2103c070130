#include "compare/grading.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <regex>
#include <string_view>
#include <vector>

#include "compare/item_view.h"
#include "compare/pair_compare.h"

namespace graph_ascend::compare {
namespace {

// Redundant APIs (all rules skipped) and communication APIs whose inputs
// are placeholders (input rows skipped), as msprobe 26 lists them.
constexpr std::string_view kAllIgnored[] = {
    "empty", "empty_like", "numpy", "to", "__setitem__", "empty_with_format", "new_empty_strided", "new_empty",
    "empty_strided"};
constexpr std::string_view kInputIgnored[] = {"_reduce_scatter_base", "_all_gather_base", "all_to_all_single",
                                              "batch_isend_irecv"};
// The APIs whose final index msprobe 26 forces to the best value.
constexpr std::string_view kEmptyFamily[] = {"empty",     "empty_like", "empty_with_format", "new_empty_strided",
                                             "new_empty", "empty_strided"};

template <size_t N>
bool Listed(const std::string_view (&list)[N], std::string_view api) {
  for (std::string_view s : list) {
    if (s.size() == api.size() && memcmp(s.data(), api.data(), s.size()) == 0) return true;
  }
  return false;
}

// The API of a dump name as ApiOfName(name, false) gives it, in place.
std::string_view ApiView(std::string_view name) {
  size_t a = name.find('.');
  if (a == std::string_view::npos) return "";
  size_t b = name.find('.', a + 1);
  return name.substr(a + 1, b == std::string_view::npos ? std::string_view::npos : b - a - 1);
}

enum class Ignore { kNone, kInputs, kAll };

// One row of msprobe's compare table: an NPU item and its Bench item (null
// when the NPU item has no counterpart).
struct Row {
  const ItemView* npu;
  const ItemView* bench;
  bool output;
  uint32_t index;                   // of the NPU item
  const PairMetric* norm_relative;  // the NPU item's NormRelativeErr, or null
};

// msprobe's str2float: "20.0%" -> 0.2; unparsable -> 0; "Nan" -> NaN.
double PercentToFraction(std::string_view s) {
  std::string t(s);
  while (!t.empty() && (t.back() == '%' || t.back() == '\t' || t.back() == ' ')) t.pop_back();
  char* end = nullptr;
  double v = strtod(t.c_str(), &end);
  if (t.empty() || end == t.c_str() || *end != '\0') return 0;
  return v / 100;
}

// A NormRelativeErr text as a fraction (PercentToFraction). Its value, when
// it has one, is that number: the compare stores r / 100 beside
// repr(r) + "%", and repr(r) reads back as r exactly.
double RelativeFraction(const PairMetric& m, std::string_view text) {
  if (m.has_value && !text.empty() && text.back() == '%') return m.value;
  return PercentToFraction(text);
}

// A relative-error cell as msprobe's get_min_or_max_value reads it: "x%"
// strings as fractions; "Nan", "N/A" and other text skipped.
bool RelativeCell(const Row& r, const PairMetrics& metrics, double* out) {
  const PairMetric* m = r.norm_relative;
  if (m == nullptr) return false;
  std::string_view text = metrics.text(*m);
  if (text.empty() || text.back() != '%') return false;
  *out = RelativeFraction(*m, text);
  return true;
}

// The largest |NormRelativeErr| of the input or output rows, from 0.
double MaxRelative(const std::vector<Row>& rows, const PairMetrics& metrics, bool output) {
  double v = 0;
  for (const Row& r : rows) {
    double x;
    if (r.output == output && r.bench != nullptr && RelativeCell(r, metrics, &x) && !std::isnan(x)) {
      v = std::max(v, std::fabs(x));
    }
  }
  return v;
}

// The smallest numeric value of a tensor metric of the input or output rows, from 1.
double MinTensorMetric(const std::vector<Row>& rows, const PairMetrics& metrics, bool output, MetricKind kind) {
  double v = 1.0;
  for (const Row& r : rows) {
    if (r.output != output || r.bench == nullptr) continue;
    const PairMetric* m = metrics.Find(r.index, kind);
    if (m != nullptr && m->has_value && !std::isnan(m->value)) v = std::min(v, m->value);
  }
  return v;
}

bool NonFiniteStat(const ItemView& item, int k) {
  const StatNumber& s = item.stats[k];
  if (s.kind == StatNumber::kFloat) return !std::isfinite(s.number);
  if (s.kind == StatNumber::kOther) {
    std::string scratch;
    ValueView v = NormalizedStat(item, k, &scratch);
    if (v.kind != ValueView::kText) return false;
    std::string t(v.text());
    std::transform(t.begin(), t.end(), t.begin(), ::tolower);
    return t == "inf" || t == "-inf" || t == "nan";
  }
  return false;
}

// NaN/inf (or their text) in the max or min of the normalised leaf.
bool NonFiniteMaxOrMin(const ItemView& item) {
  for (int k = 0; k < 2; ++k) {
    const StatNumber& s = item.stats[k];
    if (s.kind == StatNumber::kFloat && !std::isfinite(s.number)) return true;
    if (s.kind == StatNumber::kOther && NonFiniteStat(item, k)) return true;
  }
  return false;
}

bool IsTensor(const ItemFields& fields) {
  if (fields.type.kind != ValueView::kText) return false;
  std::string_view t = fields.type.text();
  return t.rfind("torch.", 0) == 0 || t.rfind("mindspore.", 0) == 0;
}

// The dtype column: a tensor's dtype, "<class 'int'>" for other leaves.
// `scratch` holds the text when it is built.
std::string_view DtypeOf(const ItemFields& fields, std::string* scratch) {
  const ValueView& dtype = fields.dtype;
  if (!IsNull(dtype)) {
    if (dtype.kind == ValueView::kText) return dtype.text();
    return *scratch = PyStr(dtype);
  }
  const ValueView& type = fields.type;
  if (IsNull(type)) return "";
  *scratch = "<class '";
  if (type.kind == ValueView::kText) {
    scratch->append(type.text());
  } else {
    scratch->append(PyStr(type));
  }
  return scratch->append("'>");
}

// The shape column: a tensor's shape, [] for other leaves.
std::string_view ShapeOf(const ItemFields& fields, std::string* scratch) {
  const ValueView& shape = fields.shape;
  if (IsNull(shape)) return IsTensor(fields) ? "" : "[]";
  if (shape.kind == ValueView::kText) return shape.text();
  return *scratch = PyStr(shape);
}

// Two shapes dumped as the same JSON text: their columns are equal.
bool SameJson(const ValueView& a, const ValueView& b) {
  return a.kind == ValueView::kJson && b.kind == ValueView::kJson && SameText(a.text(), b.text());
}

// requires_grad as msprobe holds it; empty for a false-like value (the rule
// skips those).
std::string_view TruthyRequiresGrad(const ItemFields& fields, std::string* scratch) {
  const ValueView& v = fields.requires_grad;
  if (IsNull(v)) return "";
  if (v.kind == ValueView::kBool) return v.boolean ? "True" : "";
  *scratch = PyStr(v);
  return *scratch == "False" || *scratch == "0" || scratch->empty() ? "" : std::string_view(*scratch);
}

// A bench item of fused weights (qkv, gate_up), whose dtype may differ.
bool FusedWeights(const ItemView& item) { return item.KeyContains("qkv") || item.KeyContains("gate_up"); }

// An md5 cell: the item's md5, "Nan" for a missing bench item.
bool Md5Missing(const std::string& md5) { return md5.empty() || md5 == "N/A" || md5 == "Nan"; }

}  // namespace

std::string ApiOfName(const std::string& name, bool strip_rank) {
  std::string api(ApiView(name));
  if (strip_rank) {
    static const std::regex kRank("_rank\\d+$");
    api = std::regex_replace(api, kRank, "");
  }
  return api;
}

double Grade26(vis::CompareMode mode, const std::string& node_name, const vis::NodeDetail& npu,
               const vis::NodeDetail& bench, bool parallel_merge) {
  if (mode != vis::MODE_STATISTICS && mode != vis::MODE_MD5 && mode != vis::MODE_TENSOR) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  NodeItems a, b;
  ItemsOf(npu, &a);
  ItemsOf(bench, &b);
  ItemPairing pairing;
  PairItems(a, b, &pairing);
  PairMetrics metrics;
  MetricsOf(npu, &metrics);
  return Grade26(mode, node_name, pairing, metrics, parallel_merge);
}

double Grade26(vis::CompareMode mode, std::string_view node_name, const ItemPairing& pairing,
               const PairMetrics& metrics, bool parallel_merge) {
  if (mode != vis::MODE_STATISTICS && mode != vis::MODE_MD5 && mode != vis::MODE_TENSOR) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  // Rows: the items as ComparePair paired them.
  std::span<const ItemView> items = pairing.npu->items();
  thread_local std::vector<Row> rows;
  rows.clear();
  for (uint32_t i = 0; i < items.size(); ++i) {
    const ItemView& it = items[i];
    rows.push_back(
        Row{&it, pairing.items[i].peer, it.state == vis::STATE_OUTPUT, i, metrics.Find(i, MetricKind::kNormRelative)});
  }
  // msprobe 26 grades a pair only when its compare table has a row.
  if (rows.empty()) return std::numeric_limits<double>::quiet_NaN();
  // The exceptions go by the API of the first input row's name, the node's.
  Ignore ignore = Ignore::kNone;
  bool has_input = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return !r.output; });
  std::string_view api = ApiView(node_name);
  if (Listed(kEmptyFamily, api)) return kGradePass;
  std::string stripped;
  if (parallel_merge) api = stripped = ApiOfName(std::string(node_name), true);
  if (has_input && Listed(kAllIgnored, api)) ignore = Ignore::kAll;
  if (has_input && Listed(kInputIgnored, api)) ignore = Ignore::kInputs;
  if (ignore == Ignore::kAll) return kGradePass;

  double grade = kGradePass;
  auto raise = [&grade](double g) { grade = std::max(grade, g); };
  bool has_output = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.output; });
  for (const Row& r : rows) {
    if (ignore == Ignore::kInputs && !r.output) continue;
    if (mode == vis::MODE_MD5) {
      std::string a = ItemMd5(*r.npu), b = r.bench ? ItemMd5(*r.bench) : "Nan";
      if (a != b) raise(Md5Missing(a) || Md5Missing(b) ? kGradeWarning : kGradeError);
      continue;
    }
    // NaN/inf in the NPU's max or min while the bench's are finite.
    if (r.bench != nullptr && NonFiniteMaxOrMin(*r.npu) && !NonFiniteMaxOrMin(*r.bench)) raise(kGradeError);
    if (r.bench == nullptr) {  // shape and dtype differ from the missing bench ("Nan")
      raise(kGradeError);
      continue;
    }
    const ItemFields &fa = r.npu->fields, &fb = r.bench->fields;
    std::string scratch_a, scratch_b;
    std::string_view ra = TruthyRequiresGrad(fa, &scratch_a), rb = TruthyRequiresGrad(fb, &scratch_b);
    if (!ra.empty() && !rb.empty() && !SameText(ra, rb)) raise(kGradeError);
    std::string dtype_a, dtype_b;
    std::string_view da = DtypeOf(fa, &dtype_a), db = DtypeOf(fb, &dtype_b);
    if (!da.empty() && !db.empty() && !SameText(da, db) && !FusedWeights(*r.bench)) raise(kGradeError);
    if (!parallel_merge && !SameJson(fa.shape, fb.shape)) {
      std::string_view sa = ShapeOf(fa, &scratch_a), sb = ShapeOf(fb, &scratch_b);
      if (!sa.empty() && !sb.empty() && !SameText(sa, sb)) raise(kGradeError);
    }
    // A non-tensor scalar argument with a different value.
    if (ignore == Ignore::kNone && !r.output && !IsTensor(fa) && !IsTensor(fb) &&
        da.find("class") != std::string::npos && db.find("class") != std::string::npos &&
        ShapeOf(fa, &scratch_a) == "[]") {
      ValueView va = NormalizedStat(*r.npu, 0, &scratch_a), vb = NormalizedStat(*r.bench, 0, &scratch_b);
      if (!SamePyStr(va, vb)) raise(kGradeError);
    }
  }
  if (mode == vis::MODE_MD5 || ignore != Ignore::kNone || !has_output) return grade;

  if (mode == vis::MODE_STATISTICS) {
    double in = MaxRelative(rows, metrics, false), out = MaxRelative(rows, metrics, true);
    if (in < 0.1) {
      for (const Row& r : rows) {
        if (!r.output || r.bench == nullptr) continue;
        double x = r.norm_relative ? RelativeFraction(*r.norm_relative, metrics.text(*r.norm_relative)) : 0;
        if (std::fabs(x) > 0.5) raise(kGradeError);
      }
    }
    if (in == 0 ? out > 0.1 : out / in > 10) raise(kGradeWarning);
  } else {
    double in_ratio = MinTensorMetric(rows, metrics, false, MetricKind::kThousandth);
    double out_ratio = MinTensorMetric(rows, metrics, true, MetricKind::kThousandth);
    if (in_ratio > 0.9 && out_ratio < 0.1) raise(kGradeError);
    double in_cos = MinTensorMetric(rows, metrics, false, MetricKind::kCosine);
    double out_cos = MinTensorMetric(rows, metrics, true, MetricKind::kCosine);
    if (in_cos > 0.9 && in_cos - out_cos > 0.1) raise(kGradeWarning);
  }
  return grade;
}

}  // namespace graph_ascend::compare
