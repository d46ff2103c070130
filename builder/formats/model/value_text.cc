#include "formats/model/value_text.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>

#include "base/py_format.h"
#include "compare/item_view.h"

namespace graph_ascend::vis {

using compare::PyStr;

// §10.5's rounding of a decimal text: "^\d{1,20}\.\d{1,20}%?$" with more than 6 decimals
// (the body without its '%').
bool RoundsDecimals(std::string_view s) {
  size_t dot = 0;
  while (dot < s.size() && dot <= 20 && s[dot] != '.') ++dot;
  if (dot == s.size() || dot < 1 || dot > 20) return false;
  std::string_view body = s;
  if (body.back() == '%') body.remove_suffix(1);
  std::string_view intpart = body.substr(0, dot), frac = body.substr(dot + 1);
  auto digits = [](std::string_view x) {
    if (x.empty() || x.size() > 20) return false;
    for (char c : x) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  };
  return frac.size() > 6 && digits(intpart) && digits(frac);
}

// Whether §10.5 leaves a string value as it is (most do: "torch.float32", "[2, 3]", "0.0%").
bool TextKept(std::string_view s) {
  if (s == " ") return false;
  // A quote or "None" anywhere; a decimal only from the first byte on.
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\'' || (s[i] == 'N' && s.substr(i, 4) == "None")) return false;
  }
  return s.empty() || s[0] < '0' || s[0] > '9' || !RoundsDecimals(s);
}

// §10.5 for a string value, into `out` (replaced).
void FormatTextTo(std::string_view s, std::string* out) {
  out->assign(s);
  if (TextKept(s)) return;
  if (out->find('\'') != std::string::npos) out->erase(std::remove(out->begin(), out->end(), '\''), out->end());
  for (size_t at = out->find("None"); at != std::string::npos; at = out->find("None", at + 4)) {
    out->replace(at, 4, "null");
  }
  if (*out == " ") {
    out->assign("null");
    return;
  }
  if (RoundsDecimals(*out)) {
    // Digits only: from_chars and to_chars give what strtod and %.6f give.
    bool percent = out->back() == '%';
    std::string_view body(*out);
    if (percent) body.remove_suffix(1);
    double x = 0;
    std::from_chars(body.data(), body.data() + body.size(), x);
    char buf[kPyFixed6Max];
    out->assign(buf, PyFixed6To(x, buf));
    if (percent) out->push_back('%');
  }
}

std::string FormatText(std::string_view s) {
  std::string out;
  FormatTextTo(s, &out);
  return out;
}

// §10.5 for a float: "{:.6e}" when repr has an exponent, else repr(round(x, 6)); into `out` (replaced).
void FormatFloatTo(double x, std::string* out) {
  char buf[kPyReprMax];
  out->assign(buf, PyRound6OrExp6To(x, buf));
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

MetricForm MetricFormOf(const Metric& m) {
  const std::string& t = m.text();
  if (!m.has_value() || t.empty()) return MetricForm::kText;
  // Most texts are "-?D+(.D+)?(e[+-]?D+)?%?" (strtod reads them up to the '%') or "N/A".
  if (std::string_view(t) == "N/A") return MetricForm::kText;
  auto digits = [&t](size_t* i) {
    size_t from = *i;
    while (*i < t.size() && t[*i] >= '0' && t[*i] <= '9') ++*i;
    return *i > from;
  };
  size_t i = t[0] == '-';
  bool integer = digits(&i), number = integer;
  if (number && i < t.size() && t[i] == '.') integer = false, number = digits(&++i);
  if (number && i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    integer = false, number = digits(&i);
  }
  if (number) {
    if (i == t.size()) return integer ? MetricForm::kInteger : MetricForm::kFloat;
    if (i + 1 == t.size() && t[i] == '%') return MetricForm::kText;
  }
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
  if (!whole) return MetricForm::kText;
  // An integer's text is written as it is.
  return t.find_first_not_of("-0123456789") == std::string::npos ? MetricForm::kInteger : MetricForm::kFloat;
}

void FormatMetricTo(const Metric& m, std::string* out) {
  switch (MetricFormOf(m)) {
    case MetricForm::kText: FormatTextTo(m.text(), out); return;
    case MetricForm::kInteger: out->assign(m.text()); return;
    case MetricForm::kFloat: FormatFloatTo(m.value(), out); return;
  }
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

}  // namespace graph_ascend::vis
