#include "compare/pair_compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <string_view>
#include <vector>

#include "base/py_format.h"
#include "compare/item_view.h"
#include "compare/tensor_compare.h"

namespace graph_ascend::compare {
namespace {

constexpr std::string_view kDiffNames[4] = {"Max diff", "Min diff", "Mean diff", "L2norm diff"};
constexpr std::string_view kRelNames[4] = {"MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"};
constexpr MetricKind kDiffKinds[4] = {MetricKind::kMaxDiff, MetricKind::kMinDiff, MetricKind::kMeanDiff,
                                      MetricKind::kNormDiff};
constexpr MetricKind kRelKinds[4] = {MetricKind::kMaxRelative, MetricKind::kMinRelative, MetricKind::kMeanRelative,
                                     MetricKind::kNormRelative};

// "Requires_grad Consistent": equality of the two requires_grad values
// (absent counts as None).
void AddRequiresGrad(uint32_t item, const ItemView& npu, const ItemView& peer, PairMetrics* out) {
  bool same = SamePyStr(npu.fields.requires_grad, peer.fields.requires_grad);
  out->Add(item, "Requires_grad Consistent", MetricKind::kRequiresGrad, same ? "True" : "False", same ? 1 : 0, true);
}

// One row of the statistics table (§6.4): four differences, four relative
// errors, requires_grad consistency, from the normalised statistics of the
// two items. Returns the largest relative error as the precision index reads
// it back from the texts (str2float: "N/A" is 0, "Nan" NaN, which never
// wins; -inf when all are NaN).
double StatisticsRow(uint32_t item, const ItemView& npu, const ItemView& peer, PairMetrics* out) {
  PairMetric* diff = out->AddEmpty(item, 8);
  PairMetric* rel = diff + 4;
  // A cell's text, written where the list keeps it.
  auto set = [out](PairMetric* m, std::string_view t) {
    memcpy(out->TextRoom(t.size()), t.data(), t.size());
    out->SetText(m, t.size());
  };
  double worst = -std::numeric_limits<double>::infinity();
  auto read_back = [&worst](double x) {
    if (x > worst) worst = x;
  };
  for (int k = 0; k < 4; ++k) {
    diff[k].name = kDiffNames[k];
    diff[k].kind = kDiffKinds[k];
    diff[k].value = 0;
    diff[k].has_value = false;
    rel[k].name = kRelNames[k];
    rel[k].kind = kRelKinds[k];
    rel[k].value = 0;
    rel[k].has_value = false;
    const StatNumber& a = npu.stats[k];
    const StatNumber& b = peer.stats[k];
    bool numeric_a = a.kind == StatNumber::kInteger || a.kind == StatNumber::kFloat;
    bool numeric_b = b.kind == StatNumber::kInteger || b.kind == StatNumber::kFloat;
    if (!numeric_a || !numeric_b) {
      set(&diff[k], "N/A");
      set(&rel[k], "N/A");
      read_back(0);
      continue;
    }
    double d;
    char* text = out->TextRoom(kPyReprMax + 1);
    size_t size;
    if (a.kind == StatNumber::kInteger && b.kind == StatNumber::kInteger) {
      int64_t di = a.integer - b.integer;
      d = static_cast<double>(di);
      size = std::to_chars(text, text + kPyReprMax, di).ptr - text;
    } else {
      d = a.number - b.number;
      size = PyReprTo(d, text);
    }
    if (std::isnan(d)) {
      set(&diff[k], "Nan");
      set(&rel[k], "Nan");
      continue;
    }
    // msprobe marks infinite differences with a trailing tab.
    if (std::isinf(d)) text[size++] = '\t';
    out->SetText(&diff[k], size);
    // The value a vis::Metric holds: set with has_value, else only when not zero.
    diff[k].value = d;
    diff[k].has_value = std::isfinite(d);
    if (b.number == 0) {
      set(&rel[k], "N/A");
      read_back(0);
      continue;
    }
    double r = std::fabs(d / b.number * 100);
    text = out->TextRoom(kPyReprMax + 1);
    size = PyReprTo(r, text);
    text[size++] = '%';
    out->SetText(&rel[k], size);
    rel[k].value = r / 100;
    rel[k].has_value = !std::isnan(r);
    read_back(r / 100);  // the shortest repr reads back as r exactly
  }
  AddRequiresGrad(item, npu, peer, out);
  return worst;
}

// The name of a parameter gradient item below its node:
// "M.parameters_grad.0.weight.0" -> "weight.0".
std::string_view GradientName(std::string_view key) {
  static constexpr std::string_view kGrad = ".parameters_grad";
  size_t at = key.rfind(kGrad);
  if (at == std::string_view::npos) return key;
  std::string_view rest = key.substr(at + kGrad.size());
  if (!rest.empty() && rest[0] == '.') rest.remove_prefix(1);
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits > 0 && digits < rest.size() && rest[digits] == '.') rest.remove_prefix(digits + 1);
  return rest;
}

bool IsIgnoredApi(std::string_view name) {
  size_t a = name.find('.');
  if (a == std::string_view::npos) return false;
  size_t b = name.find('.', a + 1);
  std::string_view api = name.substr(a + 1, b == std::string_view::npos ? std::string_view::npos : b - a - 1);
  static constexpr std::string_view kIgnored[] = {"empty",     "empty_like",   "empty_with_format", "new_empty_strided",
                                                  "new_empty", "empty_strided"};
  return std::find(std::begin(kIgnored), std::end(kIgnored), api) != std::end(kIgnored);
}

std::string DataName(const ItemView& item) {
  const ValueView& v = item.fields.data_name;
  if (v.kind != ValueView::kText || v.size == 0 || v.text() == "-1") return "";
  return std::string(v.text());
}

// The constant a tensor metric's name is made from (the list keeps views of names).
std::string_view TensorMetricName(const std::string& name) {
  for (const char* n : kTensorMetricNames) {
    if (name == n) return n;
  }
  return "";
}

void TensorRow(uint32_t item, const ItemView& npu, const ItemView& bench, const TensorSource* tensors,
               PairMetrics* out) {
  std::string npu_name = DataName(npu), bench_name = DataName(bench);
  TensorMetrics m;
  if (npu_name.empty() || bench_name.empty() || tensors == nullptr) {
    m = UnsupportedTensorMetrics("unsupported");
  } else {
    auto a = tensors->Load(vis::SIDE_NPU, npu_name);
    auto b = tensors->Load(vis::SIDE_BENCH, bench_name);
    m = (a.ok() && b.ok()) ? CompareTensors(*a, *b) : UnsupportedTensorMetrics("unsupported");
  }
  for (const vis::Metric& metric : m.metric) {
    out->Add(item, TensorMetricName(metric.name()), MetricKindOf(metric.name()), metric.text(), metric.value(),
             metric.has_value());
  }
  AddRequiresGrad(item, npu, bench, out);
}

}  // namespace

void PairItems(const NodeItems& npu, const NodeItems& bench, ItemPairing* out) {
  // One buffer holds the Bench items by state; most nodes have a handful,
  // which fit on the stack.
  size_t total = bench.items().size();
  const ItemView* local[32];
  std::vector<const ItemView*> heap;
  if (total > std::size(local)) heap.resize(total);
  const ItemView** bench_items = heap.empty() ? local : heap.data();
  size_t count[4] = {0, 0, 0, 0};
  for (const ItemView& it : bench.items()) ++count[it.state];
  size_t begin[4] = {0, count[0], count[0] + count[1], count[0] + count[1] + count[2]};
  size_t fill[4] = {begin[0], begin[1], begin[2], begin[3]};
  for (const ItemView& it : bench.items()) bench_items[fill[it.state]++] = &it;
  out->npu = &npu;
  out->items.resize(npu.items().size());
  std::vector<bool> grad_used;
  size_t used[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < npu.items().size(); ++i) {
    const ItemView& it = npu.items()[i];
    int s = it.state;
    const ItemView* positional = used[s] < count[s] ? bench_items[begin[s] + used[s]++] : nullptr;
    const ItemView* peer = positional;
    if (s == vis::STATE_PARAMETERS_GRAD) {
      peer = nullptr;
      if (grad_used.empty()) grad_used.assign(count[s], false);
      std::string key = it.Key();
      std::string_view name = GradientName(key);
      const ItemView* const* grads = bench_items + begin[s];
      for (size_t k = 0; k < count[s] && peer == nullptr; ++k) {
        if (!grad_used[k] && GradientName(grads[k]->Key()) == name) {
          grad_used[k] = true;
          peer = grads[k];
        }
      }
    }
    out->items[i] = PairedItem{peer, positional};
  }
}

std::vector<const vis::Item*> PairedItems(const vis::NodeDetail& npu, const vis::NodeDetail& bench) {
  NodeItems a, b;
  ItemsOf(npu, &a);
  ItemsOf(bench, &b);
  ItemPairing pairing;
  PairItems(a, b, &pairing);
  std::vector<const vis::Item*> out;
  for (const PairedItem& p : pairing.items) {
    if (p.peer == nullptr) {
      out.push_back(nullptr);
      continue;
    }
    int k = static_cast<int>(p.peer - b.items().data());
    out.push_back(k < bench.input_size() ? &bench.input(k) : &bench.output(k - bench.input_size()));
  }
  return out;
}

void ClearMetrics(vis::NodeDetail* detail) {
  for (auto* items : {detail->mutable_input(), detail->mutable_output()}) {
    for (vis::Item& it : *items) it.clear_metric();
  }
  detail->clear_md5_result();
}

PairVerdict ComparePair(vis::CompareMode mode, const std::string& node_name, vis::NodeDetail* npu,
                        const vis::NodeDetail& bench, const TensorSource* tensors) {
  NodeItems a, b;
  ItemsOf(*npu, &a);
  ItemsOf(bench, &b);
  ItemPairing pairing;
  PairItems(a, b, &pairing);
  PairMetrics metrics;
  PairVerdict v = ComparePair(mode, node_name, pairing, tensors, &metrics);
  StoreMetrics(metrics, npu);
  return v;
}

PairVerdict ComparePair(vis::CompareMode mode, std::string_view node_name, const ItemPairing& pairing,
                        const TensorSource* tensors, PairMetrics* metrics) {
  const NodeItems& npu = *pairing.npu;
  metrics->Reset(static_cast<uint32_t>(npu.items().size()));
  PairVerdict v;
  if (mode == vis::MODE_STRUCTURE || mode == vis::MODE_NONE) return v;
  const std::vector<PairedItem>& items = pairing.items;
  // A pair without a single compared item gets no index (§6.8).
  if (std::none_of(items.begin(), items.end(), [](const PairedItem& p) { return p.peer != nullptr; })) return v;
  // MODE_STATISTICS (§6.5): the worst relative error among the outputs, 1
  // for a NaN/inf NPU statistic, capped at 1; taken output by output.
  double r = 0;
  bool is_float = false;  // r starts as the int 0; a float only replaces it when larger
  bool all_pass = true;   // MODE_MD5
  for (uint32_t i = 0; i < items.size(); ++i) {
    const PairedItem& p = items[i];
    const ItemView& a = npu.items()[i];
    bool output = i >= npu.inputs();
    switch (mode) {
      case vis::MODE_STATISTICS: {
        // The largest relative error of the row (NaN: not compared).
        double worst = p.peer != nullptr ? StatisticsRow(i, a, *p.peer, metrics) : std::nan("");
        if (!output) break;
        const StatNumber &max = a.stats[0], &min = a.stats[1];
        if (max.kind == StatNumber::kNull) break;
        // The four relative errors in turn: r only grows, so the largest
        // decides (Python max(): NaN never wins).
        if (worst > r) {
          r = worst;
          is_float = true;
        }
        bool bad_max = max.kind == StatNumber::kFloat && !std::isfinite(max.number);
        bool bad_min = min.kind == StatNumber::kFloat && !std::isfinite(min.number);
        if (bad_max || bad_min) {
          r = 1;
          is_float = false;
        }
        break;
      }
      case vis::MODE_MD5: {
        if (p.peer == nullptr) break;
        bool same = ItemMd5(a) == ItemMd5(*p.peer);
        all_pass &= same;
        metrics->Add(i, "Result", MetricKind::kResult, same ? "pass" : "Different", same ? 1 : 0, true);
        AddRequiresGrad(i, a, *p.peer, metrics);
        break;
      }
      case vis::MODE_TENSOR:
        if (p.peer != nullptr) TensorRow(i, a, *p.peer, tensors, metrics);
        break;
      default: break;
    }
  }

  if (mode == vis::MODE_STATISTICS) {
    if (r > 1) {
      r = 1;
      is_float = false;
    }
    v.precision_index = r;
    v.is_float = is_float;
    v.has_precision = true;
  } else if (mode == vis::MODE_MD5) {
    // §6.6: 1 when every compared item is equal, else 0.
    v.precision_index = all_pass ? 1 : 0;
    v.has_precision = true;
  } else if (mode == vis::MODE_TENSOR) {
    // §6.7: the drop of the minimum one-thousandth ratio from the inputs to
    // the outputs. A side is "N/A" when an NPU statistic is NaN/inf.
    struct SideValue {
      bool any = false, na = false;
      double min = 1.0;
    };
    auto side = [&](uint32_t first, uint32_t end) {
      SideValue s;
      std::string max_text, min_text;
      for (uint32_t i = first; i < end; ++i) {
        const ItemView& it = npu.items()[i];
        ValueView max = NormalizedStat(it, 0, &max_text);
        if (IsNull(max)) continue;
        ValueView min = NormalizedStat(it, 1, &min_text);
        const PairMetric* m = metrics->Find(i, MetricKind::kThousandth);
        const ValueView& shape = it.fields.shape;
        bool scalar_tensor = shape.kind == ValueView::kJson && shape.text() == "[]";
        if (m != nullptr && !scalar_tensor && m->has_value) {
          s.any = true;
          s.min = std::min(s.min, m->value);
        }
        auto nonfinite = [](const ValueView& x) { return x.kind == ValueView::kNumber && !std::isfinite(x.number); };
        if (nonfinite(max) || nonfinite(min)) {
          s.any = true;
          s.na = true;
        }
      }
      return s;
    };
    SideValue in = side(0, npu.inputs()), out = side(npu.inputs(), static_cast<uint32_t>(npu.items().size()));
    double r = 0;
    if (out.any && out.na) {
      r = 1;
    } else if (in.any && in.na) {
      r = 0;
    } else if (in.any && out.any) {
      r = in.min - out.min;
      v.is_float = r > 0 && r <= 1;
    }
    v.precision_index = std::clamp(r, 0.0, 1.0);
    v.has_precision = true;
  }
  if (v.has_precision && IsIgnoredApi(node_name)) {
    v.precision_index = mode == vis::MODE_MD5 ? 1 : 0;
    v.is_float = false;
  }
  if (mode == vis::MODE_MD5) {
    v.md5_result = v.precision_index == 1 ? "pass" : "Different";
    metrics->md5_result = v.precision_index == 1 ? "pass" : "Different";
  }
  return v;
}

int BucketOf(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend, double p) {
  if (std::isnan(p)) return -1;
  int last_numeric = -1;
  for (int i = 0; i < legend.size(); ++i) {
    if (!legend[i].unmatched()) last_numeric = i;
  }
  for (int i = 0; i < legend.size(); ++i) {
    const vis::ColorBucket& b = legend[i];
    if (b.unmatched()) continue;
    if (b.lo() == b.hi()) {
      if (p == b.lo()) return i;
      continue;
    }
    if (p >= b.lo() && (p < b.hi() || (i == last_numeric && p == b.hi()))) return i;
  }
  return -1;
}

int UnmatchedBucket(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend) {
  for (int i = 0; i < legend.size(); ++i) {
    if (legend[i].unmatched()) return i;
  }
  return -1;
}

int NodeBucket(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend, int unmatched_bucket,
               bool matched, bool npu_collection, double value) {
  if (npu_collection && !std::isnan(value)) return BucketOf(legend, value);
  if (!matched) return unmatched_bucket;
  return BucketOf(legend, value);
}

}  // namespace graph_ascend::compare
