#include "merge/statistics.h"

#include <cmath>

#include "base/py_format.h"

namespace graph_ascend::merge {
namespace {

using dump::Value;
using dump::ValueKind;

// Python's bool, int and float are numbers; null, strings and lists are not.
bool IsNumber(const Value& v) {
  return v.kind == ValueKind::kInteger || v.kind == ValueKind::kNumber || v.kind == ValueKind::kBool;
}

bool IsInt(const Value& v) { return v.kind == ValueKind::kInteger || v.kind == ValueKind::kBool; }

int64_t AsInt(const Value& v) { return v.kind == ValueKind::kBool ? (v.boolean ? 1 : 0) : v.integer; }

double AsDouble(const Value& v) { return IsInt(v) ? static_cast<double>(AsInt(v)) : v.number; }

Value FloatValue(double d) {
  Value v;
  v.kind = ValueKind::kNumber;
  v.number = d;
  return v;
}

// a > b between Python numbers.
bool Greater(const Value& a, const Value& b) {
  if (IsInt(a) && IsInt(b)) return AsInt(a) > AsInt(b);
  return AsDouble(a) > AsDouble(b);
}

std::string Join(const std::vector<Value>& values, std::string_view sep, std::string_view suffix = "") {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += sep;
    out += PyStr(values[i]);
    out += suffix;
  }
  return out;
}

}  // namespace

const char* StatName(Stat s) {
  switch (s) {
    case Stat::kMax:
      return "Max";
    case Stat::kMin:
      return "Min";
    case Stat::kMean:
      return "Mean";
    case Stat::kNorm:
      return "Norm";
  }
  return "";
}

std::string PyStr(const Value& v) {
  switch (v.kind) {
    case ValueKind::kBool:
      return v.boolean ? "True" : "False";
    case ValueKind::kInteger:
      return std::to_string(v.integer);
    case ValueKind::kNumber:
      return PyRepr(v.number);
    default:
      return "None";
  }
}

bool SameValue(const Value& main, const Value& other, bool uncertainty) {
  if (!IsNumber(main) || !IsNumber(other)) return true;
  if (IsInt(main) && IsInt(other) && AsInt(main) == AsInt(other)) return true;
  double a = AsDouble(main), b = AsDouble(other);
  if (!uncertainty) return a == b;
  double diff = std::abs(a - b);
  if (std::isnan(diff)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(diff)) return std::isinf(a) && std::isinf(b);
  return a == 0 ? diff < 1e-6 : std::abs(diff / a) < 1e-6;
}

bool MergeStat(Stat stat, std::string_view key, const std::vector<Value>& values, Value* merged,
               std::vector<std::string>* formulas) {
  if (values.size() < 2) return false;
  for (const Value& v : values) {
    if (!IsNumber(v)) return false;
  }
  std::string head = std::string("The ") + StatName(stat) + " value merging method for " + std::string(key) + " is: ";
  Value result;
  switch (stat) {
    case Stat::kMax:
    case Stat::kMin: {
      // max(current, other) keeps `current` unless `other` is strictly
      // greater (smaller), as Python's max/min do, NaN included.
      result = values[0];
      for (size_t i = 1; i < values.size(); ++i) {
        bool take = stat == Stat::kMax ? Greater(values[i], result) : Greater(result, values[i]);
        if (take) result = values[i];
      }
      formulas->push_back(head + (stat == Stat::kMax ? "max(" : "min(") + Join(values, ", ") + ") = " + PyStr(result));
      break;
    }
    case Stat::kMean: {
      // Integers add exactly until the first float; true division gives a float.
      bool is_int = true;
      int64_t isum = 0;
      double fsum = 0;
      for (const Value& v : values) {
        if (is_int && IsInt(v)) {
          isum += AsInt(v);
        } else {
          if (is_int) fsum = static_cast<double>(isum);
          is_int = false;
          fsum += AsDouble(v);
        }
      }
      double n = static_cast<double>(values.size());
      result = FloatValue(is_int ? static_cast<double>(isum) / n : fsum / n);
      formulas->push_back(head + "(" + Join(values, " + ") + ") / " + std::to_string(values.size()) + " = " +
                          PyStr(result));
      break;
    }
    case Stat::kNorm: {
      double sum = 0;
      for (const Value& v : values) sum += std::pow(AsDouble(v), 2.0);
      result = FloatValue(std::pow(sum, 0.5));
      formulas->push_back(head + "(" + Join(values, " + ", " ** 2") + ") ** 0.5 = " + PyStr(result));
      break;
    }
  }
  *merged = result;
  return true;
}

}  // namespace graph_ascend::merge
