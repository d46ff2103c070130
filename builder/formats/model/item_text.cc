#include "formats/model/item_text.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "base/py_format.h"
#include "compare/item_view.h"

namespace graph_ascend::vis {
namespace {

using compare::PyStr;

// §10.5 for a string value, into `out` (replaced).
void FormatTextTo(std::string_view s, std::string* out) {
  out->assign(s);
  if (out->find('\'') != std::string::npos) out->erase(std::remove(out->begin(), out->end(), '\''), out->end());
  for (size_t at = out->find("None"); at != std::string::npos; at = out->find("None", at + 4)) {
    out->replace(at, 4, "null");
  }
  if (*out == " ") {
    out->assign("null");
    return;
  }
  // "^\d{1,20}\.\d{1,20}%?$" with more than 6 decimals -> 6 decimals.
  size_t dot = out->find('.');
  if (dot == std::string::npos || dot < 1 || dot > 20) return;
  bool percent = out->back() == '%';
  std::string_view body(*out);
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
    out->assign(buf, end);
    if (percent) out->push_back('%');
  }
}

std::string FormatText(std::string_view s) {
  std::string out;
  FormatTextTo(s, &out);
  return out;
}

// repr(float(D)) for D = "[-]I.FFFFFF" (to_chars' fixed text, 1e-4 <= |D| < 1e16 or 0), without
// reading D back, when D has at most 15 significant digits: distinct decimals of 15 digits or fewer
// are distinct doubles, so D without its trailing zeros is the shortest text of its double, and in
// this range repr writes it without an exponent ("0.0001", "3.0", "-0.0"). False for longer D.
bool RoundedRepr(const char* begin, const char* end, std::string* out) {
  const char* digits = begin + (*begin == '-');
  const char* dot = end - 7;
  const char* last = end;  // past the last fraction digit kept
  while (last > dot + 1 && last[-1] == '0') --last;
  size_t significant;
  if (dot - digits == 1 && *digits == '0') {
    const char* first = dot + 1;  // the fraction's leading zeros are not significant
    while (first < last && *first == '0') ++first;
    significant = static_cast<size_t>(last - first);
  } else {
    significant = static_cast<size_t>((dot - digits) + (last - dot - 1));
  }
  if (significant > 15) return false;
  out->assign(begin, last);
  if (last == dot + 1) out->push_back('0');
  return true;
}

// §10.5 for a float: "{:.6e}" when repr has an exponent, else repr(round(x, 6)); into `out` (replaced).
// Written in place: PyRepr, PyExp6 and PyRound6 give the same text.
void FormatFloatTo(double x, std::string* out) {
  char repr[kPyReprMax];
  size_t n = PyReprTo(x, repr);
  if (std::isfinite(x) && memchr(repr, 'e', n) != nullptr) {
    char buf[64];
    out->assign(buf, std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific, 6).ptr);
    return;
  }
  if (std::isfinite(x)) {
    // Python rounds the exact binary value half-even at 6 decimals: %.6f's correctly rounded
    // decimal D, read back. repr has no exponent here, so x is 0 or 1e-4 <= |x| < 1e16.
    char buf[400];
    char* end = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::fixed, 6).ptr;
    if (RoundedRepr(buf, end, out)) return;
    double rounded = 0;
    std::from_chars(buf, end, rounded);
    n = PyReprTo(rounded, repr);
  }
  out->assign(repr, n);
}

void FormatValueTo(const Value* v, std::string* out) {
  if (compare::IsNull(v)) return out->assign("null"), void();
  switch (v->kind_case()) {
    case Value::kBoolean: out->assign(v->boolean() ? "True" : "False"); return;
    case Value::kInteger: {
      char buf[24];
      out->assign(buf, std::to_chars(buf, buf + sizeof(buf), v->integer()).ptr);
      return;
    }
    case Value::kNumber: FormatFloatTo(v->number(), out); return;
    case Value::kText: FormatTextTo(v->text(), out); return;
    case Value::kJson: FormatTextTo(PyStr(v), out); return;
    default: out->assign("null"); return;
  }
}

void FormatMetricTo(const Metric& m, std::string* out) {
  // Numbers the reference kept as Python numbers (differences, tensor
  // metrics) are formatted as numbers; everything else ("20.0%", "N/A",
  // "pass", "True") as text.
  const std::string& t = m.text();
  // Whether strtod reads all of t: from_chars reads a subset of what strtod
  // does, at a fraction of the cost; strtod decides the rest.
  double parsed = 0;
  auto [at, ec] = std::from_chars(t.data(), t.data() + t.size(), parsed);
  bool whole = ec == std::errc() && at == t.data() + t.size();
  // A decimal read up to a '%' ("20.0%", most of the relative errors): strtod stops there too.
  bool percent = ec == std::errc() && at < t.data() + t.size() && *at == '%';
  if (!whole && !percent) {
    char* end = nullptr;
    strtod(t.c_str(), &end);
    whole = end != nullptr && *end == '\0';
  }
  bool numeric = m.has_value() && !t.empty() && whole;
  if (!numeric) return FormatTextTo(t, out);
  if (t.find_first_not_of("-0123456789") == std::string::npos) return out->assign(t), void();
  FormatFloatTo(m.value(), out);
}

const char* PyTypeName(const Value* v) {
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

}  // namespace

// An ordered dict of formatted strings whose storage outlives it: emptied
// and refilled item after item, its strings keep their buffers.
std::string* ItemText::Slot(std::string_view k) {
  for (size_t i = 0; i < size_; ++i) {
    if (kv_[i].first == k) return &kv_[i].second;
  }
  if (size_ == kv_.size()) kv_.emplace_back();
  kv_[size_].first.assign(k);
  return &kv_[size_++].second;
}

const std::string* ItemText::Get(std::string_view k) const {
  for (size_t i = 0; i < size_; ++i) {
    if (kv_[i].first == k) return &kv_[i].second;
  }
  return nullptr;
}

void ItemText::Erase(std::string_view k) {
  for (size_t i = 0; i < size_; ++i) {
    if (kv_[i].first == k) {
      // The erased pair moves past the end, its buffers kept for the next item.
      std::rotate(kv_.begin() + static_cast<long>(i), kv_.begin() + static_cast<long>(i) + 1,
                  kv_.begin() + static_cast<long>(size_));
      --size_;
      return;
    }
  }
}

void ItemText::KeepOnly(std::initializer_list<std::string_view> keys) {
  // The kept pairs in the order of `keys`, as a new dict filled in that order.
  size_t kept = 0;
  for (std::string_view k : keys) {
    for (size_t i = kept; i < size_; ++i) {
      if (kv_[i].first == k) {
        std::swap(kv_[i], kv_[kept++]);
        break;
      }
    }
  }
  size_ = kept;
}

void FormatItemTo(const Item& item, CompareMode mode, std::string_view node_name, ItemText* row) {
  row->Clear();
  if (item.is_null()) {
    row->Set("value", "null");
    return;
  }
  // §4.2: the leaf, normalised.
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
    FormatValueTo(&f.value(), row->Slot(f.name()));
  }
  const std::string* dn = row->Get("data_name");
  if (dn == nullptr || *dn == "null" || dn->empty()) row->Set("data_name", "-1");
  if (!row->Has("requires_grad")) row->Set("requires_grad", "null");
  static const char* const kStats[] = {"Max", "Min", "Mean", "Norm"};
  for (const char* s : kStats) {
    if (!row->Has(s)) row->Set(s, "null");
  }
  std::string_view type_text =
      type != nullptr && type->kind_case() == Value::kText ? std::string_view(type->text()) : std::string_view();
  std::string_view last = std::string_view(item.key()).substr(item.key().rfind('.') + 1);
  if (!has_dtype) {
    auto stats = [&](const std::string& v) {
      for (const char* s : kStats) row->Set(s, v);
    };
    if (type_text == "torch.Size") {
      row->Set("dtype", "torch.Size");
      FormatTextTo(PyStr(value), row->Slot("shape"));
    } else if (type_text == "slice") {
      row->Set("dtype", "slice");
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
      row->Set("shape", "(" + std::to_string(n) + ",)");
    } else if (type_text == "ellipsis") {
      row->Set("dtype", "ellipsis");
      row->Set("shape", "[]");
      std::string v;
      FormatValueTo(value, &v);
      stats(v);
    } else if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") {
      FormatTextTo(type_text, row->Slot("dtype"));
      row->Set("shape", "[]");
      std::string v = FormatText(PyStr(value));
      stats(v);
      row->Set("md5", v);
    } else if (type_text == "torch.ProcessGroup") {
      row->Set("dtype", type_text);
      row->Set("shape", "[]");
      std::string v = FormatText(PyStr(group_ranks));
      stats(v);
      row->Set("md5", v);
    } else {
      FormatTextTo(PyTypeName(value), row->Slot("dtype"));
      row->Set("shape", "[]");
      std::string v;
      FormatValueTo(value, &v);
      stats(v);
    }
  }
  // §10.5: export removes md5 outside md5 mode (added last when missing, so
  // nothing else moves: it is only computed where it stays).
  if (mode == MODE_MD5) {
    if (!row->Has("md5")) row->Set("md5", compare::ItemMd5(item));
  } else {
    row->Erase("md5");
  }
  if (node_name.find("batch_isend_irecv") != std::string_view::npos) {
    for (const char* k : {"op", "peer", "tag", "group_id"}) row->Erase(k);
  }
  // Metrics were copied into the item before export formats it, so the
  // process-group trim below removes them too.
  for (const Metric& m : item.metric()) FormatMetricTo(m, row->Slot(m.name()));
  if (type_text == "torch.ProcessGroup") row->KeepOnly({"type", "group_ranks", "group_id", "data_name"});
  const std::string* max = row->Get("Max");
  if (max != nullptr && *max == "null") {
    row->Clear();
    row->Set("value", "null");
  }
}

std::vector<std::pair<std::string, std::string>> FormatItem(const Item& item, CompareMode mode,
                                                            const std::string& node_name) {
  ItemText row;
  FormatItemTo(item, mode, node_name, &row);
  return {row.begin(), row.end()};
}

}  // namespace graph_ascend::vis
