#include "compare/pair_compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
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

// A new metric of `item` (cleared metrics are reused: the texts are
// assigned into the strings they kept).
vis::Metric* AddMetric(vis::Item* item, std::string_view name, std::string_view text) {
  vis::Metric* m = item->add_metric();
  m->mutable_name()->assign(name.data(), name.size());
  m->mutable_text()->assign(text.data(), text.size());
  return m;
}

// "Requires_grad Consistent": equality of the two requires_grad values
// (absent counts as None).
void AddRequiresGrad(vis::Item* npu, const PairedItem& p) {
  bool same = SamePyStr(p.npu_fields.requires_grad, p.peer_fields.requires_grad);
  vis::Metric* m = AddMetric(npu, "Requires_grad Consistent", same ? "True" : "False");
  m->set_value(same ? 1 : 0);
  m->set_has_value(true);
}

// One row of the statistics table (§6.4): four differences, four relative
// errors, requires_grad consistency, from the NormalizedNumbers of the two
// items. Returns the largest relative error as the precision index reads it
// back from the texts (str2float: "N/A" is 0, "Nan" NaN, which never wins;
// -inf when all are NaN).
double StatisticsRow(vis::Item* npu, const PairedItem& p) {
  struct Cell {
    char text[kPyReprMax + 1];
    size_t size = 0;
    double value = 0;
    bool has_value = false;
    void Set(std::string_view t) { size = std::copy(t.begin(), t.end(), text) - text; }
  };
  Cell diff[4], rel[4];
  double worst = -std::numeric_limits<double>::infinity();
  auto read_back = [&worst](double x) {
    if (x > worst) worst = x;
  };
  for (int k = 0; k < 4; ++k) {
    const StatNumber& a = p.npu_stats[k];
    const StatNumber& b = p.peer_stats[k];
    bool numeric_a = a.kind == StatNumber::kInteger || a.kind == StatNumber::kFloat;
    bool numeric_b = b.kind == StatNumber::kInteger || b.kind == StatNumber::kFloat;
    if (!numeric_a || !numeric_b) {
      diff[k].Set("N/A");
      rel[k].Set("N/A");
      read_back(0);
      continue;
    }
    double d;
    if (a.kind == StatNumber::kInteger && b.kind == StatNumber::kInteger) {
      int64_t di = a.integer - b.integer;
      d = static_cast<double>(di);
      diff[k].size = std::to_chars(diff[k].text, diff[k].text + sizeof(diff[k].text), di).ptr - diff[k].text;
    } else {
      d = a.number - b.number;
      diff[k].size = PyReprTo(d, diff[k].text);
    }
    if (std::isnan(d)) {
      diff[k].Set("Nan");
      rel[k].Set("Nan");
      continue;
    }
    diff[k].value = d;
    diff[k].has_value = std::isfinite(d);
    // msprobe marks infinite differences with a trailing tab.
    if (std::isinf(d)) diff[k].text[diff[k].size++] = '\t';
    if (b.number == 0) {
      rel[k].Set("N/A");
      read_back(0);
      continue;
    }
    double r = std::fabs(d / b.number * 100);
    rel[k].size = PyReprTo(r, rel[k].text);
    rel[k].text[rel[k].size++] = '%';
    rel[k].value = r / 100;
    rel[k].has_value = !std::isnan(r);
    read_back(r / 100);  // the shortest repr reads back as r exactly
  }
  auto add = [npu](std::string_view name, const Cell& c) {
    vis::Metric* m = AddMetric(npu, name, std::string_view(c.text, c.size));
    if (c.has_value) {
      m->set_value(c.value);
      m->set_has_value(true);
    } else if (c.value != 0) {
      m->set_value(c.value);
    }
  };
  for (int k = 0; k < 4; ++k) add(kDiffNames[k], diff[k]);
  for (int k = 0; k < 4; ++k) add(kRelNames[k], rel[k]);
  AddRequiresGrad(npu, p);
  return worst;
}

const vis::Metric* FindMetric(const vis::Item& item, std::string_view name) {
  for (const vis::Metric& m : item.metric()) {
    if (m.name() == name) return &m;
  }
  return nullptr;
}

// The item's state as an index into per-state tables (a foreign file may hold any number).
int StateOf(const vis::Item& item) { return std::clamp<int>(item.state(), 0, 3); }

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

bool IsIgnoredApi(const std::string& name) {
  size_t a = name.find('.');
  if (a == std::string::npos) return false;
  size_t b = name.find('.', a + 1);
  std::string api = name.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
  static const char* const kIgnored[] = {"empty",     "empty_like", "empty_with_format", "new_empty_strided",
                                         "new_empty", "empty_strided"};
  for (const char* k : kIgnored) {
    if (api == k) return true;
  }
  return false;
}

std::string DataName(const vis::Item& item) {
  const vis::Value* v = FindField(item, "data_name");
  if (v == nullptr || v->kind_case() != vis::Value::kText || v->text().empty() || v->text() == "-1") return "";
  return v->text();
}

void TensorRow(vis::Item* npu, const vis::Item& bench, const PairedItem& p, const TensorSource* tensors) {
  std::string npu_name = DataName(*npu), bench_name = DataName(bench);
  TensorMetrics m;
  if (npu_name.empty() || bench_name.empty() || tensors == nullptr) {
    m = UnsupportedTensorMetrics("unsupported");
  } else {
    auto a = tensors->Load(vis::SIDE_NPU, npu_name);
    auto b = tensors->Load(vis::SIDE_BENCH, bench_name);
    m = (a.ok() && b.ok()) ? CompareTensors(*a, *b) : UnsupportedTensorMetrics("unsupported");
  }
  for (auto& metric : m.metric) *npu->add_metric() = metric;
  AddRequiresGrad(npu, p);
}

}  // namespace

ItemPairing PairItemsOf(const vis::NodeDetail& npu, const vis::NodeDetail& bench) {
  // One buffer holds the Bench items by state; most nodes have a handful,
  // which fit on the stack.
  size_t total = bench.input_size() + bench.output_size();
  const vis::Item* local[32];
  std::vector<const vis::Item*> heap;
  if (total > std::size(local)) heap.resize(total);
  const vis::Item** bench_items = heap.empty() ? local : heap.data();
  size_t count[4] = {0, 0, 0, 0};
  for (const auto* items : {&bench.input(), &bench.output()}) {
    for (const vis::Item& it : *items) ++count[StateOf(it)];
  }
  size_t begin[4] = {0, count[0], count[0] + count[1], count[0] + count[1] + count[2]};
  size_t fill[4] = {begin[0], begin[1], begin[2], begin[3]};
  for (const auto* items : {&bench.input(), &bench.output()}) {
    for (const vis::Item& it : *items) bench_items[fill[StateOf(it)]++] = &it;
  }
  ItemPairing out;
  out.items.reserve(npu.input_size() + npu.output_size());
  std::vector<bool> grad_used(count[vis::STATE_PARAMETERS_GRAD], false);
  size_t used[4] = {0, 0, 0, 0};
  for (const auto* items : {&npu.input(), &npu.output()}) {
    for (const vis::Item& it : *items) {
      int s = StateOf(it);
      const vis::Item* positional = used[s] < count[s] ? bench_items[begin[s] + used[s]++] : nullptr;
      const vis::Item* peer = positional;
      if (s == vis::STATE_PARAMETERS_GRAD) {
        peer = nullptr;
        const vis::Item* const* grads = bench_items + begin[s];
        for (size_t k = 0; k < count[s] && peer == nullptr; ++k) {
          if (!grad_used[k] && GradientName(grads[k]->key()) == GradientName(it.key())) {
            grad_used[k] = true;
            peer = grads[k];
          }
        }
      }
      PairedItem& p = out.items.emplace_back();
      p.peer = peer;
      p.positional = positional;
      p.npu_fields = FieldsOf(it);
      NormalizedNumbers(it, p.npu_fields, p.npu_stats.data());
      if (peer != nullptr) {
        p.peer_fields = FieldsOf(*peer);
        NormalizedNumbers(*peer, p.peer_fields, p.peer_stats.data());
      }
    }
  }
  return out;
}

std::vector<const vis::Item*> PairedItems(const vis::NodeDetail& npu, const vis::NodeDetail& bench) {
  std::vector<const vis::Item*> out;
  for (const PairedItem& p : PairItemsOf(npu, bench).items) out.push_back(p.peer);
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
  return ComparePair(mode, node_name, npu, PairItemsOf(*npu, bench), tensors);
}

PairVerdict ComparePair(vis::CompareMode mode, const std::string& node_name, vis::NodeDetail* npu,
                        const ItemPairing& pairing, const TensorSource* tensors) {
  ClearMetrics(npu);
  PairVerdict v;
  if (mode == vis::MODE_STRUCTURE || mode == vis::MODE_NONE) return v;
  const std::vector<PairedItem>& items = pairing.items;
  // A pair without a single compared item gets no index (§6.8).
  if (std::none_of(items.begin(), items.end(), [](const PairedItem& p) { return p.peer != nullptr; })) return v;
  // MODE_STATISTICS (§6.5): the worst relative error among the outputs, 1
  // for a NaN/inf NPU statistic, capped at 1; taken output by output.
  double r = 0;
  bool is_float = false;  // r starts as the int 0; a float only replaces it when larger
  size_t inputs = npu->input_size();
  for (size_t i = 0; i < items.size(); ++i) {
    const PairedItem& p = items[i];
    bool output = i >= inputs;
    vis::Item* a = output ? npu->mutable_output(static_cast<int>(i - inputs)) : npu->mutable_input(static_cast<int>(i));
    switch (mode) {
      case vis::MODE_STATISTICS: {
        // The largest relative error of the row (NaN: not compared).
        double worst = p.peer != nullptr ? StatisticsRow(a, p) : std::nan("");
        if (!output) break;
        const StatNumber &max = p.npu_stats[0], &min = p.npu_stats[1];
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
        bool same = ItemMd5(*a, p.npu_fields) == ItemMd5(*p.peer, p.peer_fields);
        vis::Metric* m = AddMetric(a, "Result", same ? "pass" : "Different");
        m->set_value(same ? 1 : 0);
        m->set_has_value(true);
        AddRequiresGrad(a, p);
        break;
      }
      case vis::MODE_TENSOR:
        if (p.peer != nullptr) TensorRow(a, *p.peer, p, tensors);
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
    double r = 1;
    for (const auto* items : {&npu->input(), &npu->output()}) {
      for (const vis::Item& it : *items) {
        const vis::Metric* m = FindMetric(it, "Result");
        if (m != nullptr && m->text() != "pass") r = 0;
      }
    }
    v.precision_index = r;
    v.has_precision = true;
  } else if (mode == vis::MODE_TENSOR) {
    // §6.7: the drop of the minimum one-thousandth ratio from the inputs to
    // the outputs. A side is "N/A" when an NPU statistic is NaN/inf.
    struct SideValue {
      bool any = false, na = false;
      double min = 1.0;
    };
    auto side = [](const google::protobuf::RepeatedPtrField<vis::Item>& items) {
      SideValue s;
      for (const vis::Item& it : items) {
        vis::Value max_value = NormalizedStat(it, 0), min_value = NormalizedStat(it, 1);
        const vis::Value* max = &max_value;
        if (IsNull(max)) continue;
        const vis::Metric* m = FindMetric(it, "One Thousandth Err Ratio");
        const vis::Value* shape = FindField(it, "shape");
        bool scalar_tensor = shape != nullptr && shape->kind_case() == vis::Value::kJson && shape->json() == "[]";
        if (m != nullptr && !scalar_tensor && m->has_value()) {
          s.any = true;
          s.min = std::min(s.min, m->value());
        }
        if (IsNonFiniteFloat(max) || IsNonFiniteFloat(&min_value)) {
          s.any = true;
          s.na = true;
        }
      }
      return s;
    };
    SideValue in = side(npu->input()), out = side(npu->output());
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
    npu->set_md5_result(v.md5_result);
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
