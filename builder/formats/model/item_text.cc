#include "formats/model/item_text.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "base/py_format.h"
#include "compare/item_view.h"

namespace graph_ascend::vis {
namespace {

using compare::PyStr;

// §10.5 for a string value.
std::string FormatText(std::string s) {
  std::string out = std::move(s);
  if (out.find('\'') != std::string::npos) out.erase(std::remove(out.begin(), out.end(), '\''), out.end());
  for (size_t at = out.find("None"); at != std::string::npos; at = out.find("None", at + 4)) out.replace(at, 4, "null");
  if (out == " ") return "null";
  // "^\d{1,20}\.\d{1,20}%?$" with more than 6 decimals -> 6 decimals.
  size_t dot = out.find('.');
  if (dot == std::string::npos || dot < 1 || dot > 20) return out;
  bool percent = out.back() == '%';
  std::string_view body(out);
  if (percent) body.remove_suffix(1);
  std::string_view intpart = body.substr(0, dot), frac = body.substr(dot + 1);
  auto digits = [](std::string_view x) {
    return !x.empty() && x.size() <= 20 && x.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (digits(intpart) && digits(frac) && frac.size() > 6) {
    // Digits only: from_chars and to_chars give what strtod and %.6f give.
    double x = 0;
    std::from_chars(body.data(), body.data() + body.size(), x);
    char buf[400];
    char* end = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::fixed, 6).ptr;
    return std::string(buf, end) + (percent ? "%" : "");
  }
  return out;
}

// §10.5 for a float.
std::string FormatFloat(double x) {
  std::string r = PyRepr(x);
  if (r.find('e') != std::string::npos && r.size() < 50) return PyExp6(x);
  return PyRound6(x);
}

std::string FormatValue(const Value* v) {
  if (compare::IsNull(v)) return "null";
  switch (v->kind_case()) {
    case Value::kBoolean: return v->boolean() ? "True" : "False";
    case Value::kInteger: return std::to_string(v->integer());
    case Value::kNumber: return FormatFloat(v->number());
    case Value::kText: return FormatText(v->text());
    case Value::kJson: return FormatText(PyStr(v));
    default: return "null";
  }
}

std::string FormatMetric(const Metric& m) {
  // Numbers the reference kept as Python numbers (differences, tensor
  // metrics) are formatted as numbers; everything else ("20.0%", "N/A",
  // "pass", "True") as text.
  const std::string& t = m.text();
  // Whether strtod reads all of t: from_chars reads a subset of what strtod
  // does, at a fraction of the cost; strtod decides the rest.
  double parsed = 0;
  auto [at, ec] = std::from_chars(t.data(), t.data() + t.size(), parsed);
  bool whole = ec == std::errc() && at == t.data() + t.size();
  if (!whole) {
    char* end = nullptr;
    strtod(t.c_str(), &end);
    whole = end != nullptr && *end == '\0';
  }
  bool numeric = m.has_value() && !t.empty() && whole;
  if (!numeric) return FormatText(t);
  if (t.find_first_not_of("-0123456789") == std::string::npos) return t;
  return FormatFloat(m.value());
}

std::string PyTypeName(const Value* v) {
  if (compare::IsNull(v)) return "<class 'NoneType'>";
  switch (v->kind_case()) {
    case Value::kBoolean: return "<class 'bool'>";
    case Value::kInteger: return "<class 'int'>";
    case Value::kNumber: return "<class 'float'>";
    case Value::kText: return "<class 'str'>";
    case Value::kJson: return v->json().size() && v->json()[0] == '{' ? "<class 'dict'>" : "<class 'list'>";
    default: return "<class 'NoneType'>";
  }
}

// An ordered dict of already formatted strings.
class Row {
 public:
  void Set(std::string_view k, std::string v) {
    for (auto& kv : kv_) {
      if (kv.first == k) {
        kv.second = std::move(v);
        return;
      }
    }
    kv_.emplace_back(k, std::move(v));
  }
  bool Has(std::string_view k) const {
    for (auto& kv : kv_) {
      if (kv.first == k) return true;
    }
    return false;
  }
  const std::string* Get(std::string_view k) const {
    for (auto& kv : kv_) {
      if (kv.first == k) return &kv.second;
    }
    return nullptr;
  }
  void Erase(std::string_view k) {
    for (size_t i = 0; i < kv_.size(); ++i) {
      if (kv_[i].first == k) {
        kv_.erase(kv_.begin() + static_cast<long>(i));
        return;
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> kv_;
};

}  // namespace

std::vector<std::pair<std::string, std::string>> FormatItem(const Item& item, CompareMode mode,
                                                            const std::string& node_name) {
  if (item.is_null()) return {{"value", "null"}};
  // §4.2: the leaf, normalised.
  Row row;
  const Value* value = nullptr;
  const Value* type = nullptr;
  const Value* group_ranks = nullptr;
  bool has_dtype = false;
  for (const Field& f : item.field()) {
    if (f.name() == "value") value = &f.value();
    if (f.name() == "type") type = &f.value();
    if (f.name() == "group_ranks") group_ranks = &f.value();
    if (f.name() == "dtype" && !compare::IsNull(&f.value()) &&
        !(f.value().kind_case() == Value::kText && f.value().text().empty())) {
      has_dtype = true;
    }
    row.Set(f.name(), FormatValue(&f.value()));
  }
  const std::string* dn = row.Get("data_name");
  if (dn == nullptr || *dn == "null" || dn->empty()) row.Set("data_name", "-1");
  if (!row.Has("requires_grad")) row.Set("requires_grad", "null");
  static const char* const kStats[] = {"Max", "Min", "Mean", "Norm"};
  for (const char* s : kStats) {
    if (!row.Has(s)) row.Set(s, "null");
  }
  std::string type_text = type != nullptr && type->kind_case() == Value::kText ? type->text() : "";
  std::string last = item.key().substr(item.key().rfind('.') + 1);
  if (!has_dtype) {
    auto stats = [&](const std::string& v) {
      for (const char* s : kStats) row.Set(s, v);
    };
    if (type_text == "torch.Size") {
      row.Set("dtype", "torch.Size");
      row.Set("shape", FormatText(PyStr(value)));
    } else if (type_text == "slice") {
      row.Set("dtype", "slice");
      size_t n = 0;
      if (value != nullptr && value->kind_case() == Value::kJson) {
        int depth = 0;
        for (char c : value->json()) {
          if (c == '[') ++depth;
          else if (c == ']') --depth;
          else if (c == ',' && depth == 1) ++n;
        }
        if (value->json() != "[]") ++n;
      }
      row.Set("shape", "(" + std::to_string(n) + ",)");
    } else if (type_text == "ellipsis") {
      row.Set("dtype", "ellipsis");
      row.Set("shape", "[]");
      stats(FormatValue(value));
    } else if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") {
      row.Set("dtype", FormatText(type_text));
      row.Set("shape", "[]");
      stats(FormatText(PyStr(value)));
      row.Set("md5", FormatText(PyStr(value)));
    } else if (type_text == "torch.ProcessGroup") {
      row.Set("dtype", type_text);
      row.Set("shape", "[]");
      stats(FormatText(PyStr(group_ranks)));
      row.Set("md5", FormatText(PyStr(group_ranks)));
    } else {
      row.Set("dtype", FormatText(PyTypeName(value)));
      row.Set("shape", "[]");
      stats(FormatValue(value));
    }
  }
  if (!row.Has("md5")) row.Set("md5", compare::ItemMd5(item));
  // §10.5: what export removes.
  if (mode != MODE_MD5) row.Erase("md5");
  if (node_name.find("batch_isend_irecv") != std::string::npos) {
    for (const char* k : {"op", "peer", "tag", "group_id"}) row.Erase(k);
  }
  // Metrics were copied into the item before export formats it, so the
  // process-group trim below removes them too.
  for (const Metric& m : item.metric()) row.Set(m.name(), FormatMetric(m));
  if (type_text == "torch.ProcessGroup") {
    Row kept;
    for (const char* k : {"type", "group_ranks", "group_id", "data_name"}) {
      if (const std::string* v = row.Get(k)) kept.Set(k, *v);
    }
    row = kept;
  }
  const std::string* max = row.Get("Max");
  if (max != nullptr && *max == "null") return {{"value", "null"}};
  return row.kv_;
}

}  // namespace graph_ascend::vis
