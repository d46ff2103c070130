#include "compare/item_view.h"

#include <cmath>

#include "base/py_format.h"
#include "json/json_reader.h"

namespace graph_ascend::compare {
namespace {

// Converts compact JSON to Python repr: true -> True, null -> None,
// "s" -> 's', objects -> {'k': v}.
void JsonToPy(json::JsonReader* r, std::string* out) {
  auto t = r->Peek();
  if (!t.ok()) return;
  switch (*t) {
    case json::JsonType::kObject: {
      if (!r->EnterObject().ok()) return;
      out->push_back('{');
      std::string_view key;
      bool first = true;
      for (;;) {
        auto more = r->NextMember(&key);
        if (!more.ok() || !*more) break;
        if (!first) out->append(", ");
        first = false;
        out->append("'").append(key).append("': ");
        JsonToPy(r, out);
      }
      out->push_back('}');
      return;
    }
    case json::JsonType::kArray: {
      if (!r->EnterArray().ok()) return;
      out->push_back('[');
      bool first = true;
      for (;;) {
        auto more = r->NextElement();
        if (!more.ok() || !*more) break;
        if (!first) out->append(", ");
        first = false;
        JsonToPy(r, out);
      }
      out->push_back(']');
      return;
    }
    case json::JsonType::kString: {
      auto s = r->ReadString();
      if (s.ok()) out->append("'").append(*s).append("'");
      return;
    }
    case json::JsonType::kBool: {
      auto b = r->ReadBool();
      if (b.ok()) out->append(*b ? "True" : "False");
      return;
    }
    case json::JsonType::kNull:
      (void)r->ReadNull();
      out->append("None");
      return;
    case json::JsonType::kNumber: {
      auto n = r->ReadNumber();
      if (n.ok()) out->append(n->is_integer ? std::to_string(n->integer) : PyRepr(n->number));
      return;
    }
  }
}

// JsonToPy for the common case of (nested) arrays of small integers, such
// as shapes, without a reader: "[2, 3]" (or "[2,3]") -> "[2, 3]". False,
// with `out` untouched, for anything else ("-0" prints as 0, long numbers
// may not be integers to the reader).
bool IntegerArrayToPy(std::string_view json, std::string* out) {
  if (json.empty() || json[0] != '[') return false;
  size_t digits = 0;
  bool minus = false, zero = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c >= '0' && c <= '9') {
      if (digits == 0) zero = c == '0';
      if (++digits > 18 || (zero && (minus || digits > 1))) return false;
      continue;
    }
    if (c == '-' && digits == 0 && !minus) {
      minus = true;
      continue;
    }
    if (c == ' ' && i > 0 && json[i - 1] == ',') continue;
    if ((c != '[' && c != ']' && c != ',') || (minus && digits == 0)) return false;
    digits = 0;
    minus = false;
  }
  out->reserve(json.size() + json.size() / 2);
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == ' ') continue;
    out->push_back(json[i]);
    if (json[i] == ',') out->push_back(' ');
  }
  return true;
}

}  // namespace

const vis::Value* FindField(const vis::Item& item, std::string_view name) {
  for (const vis::Field& f : item.field()) {
    if (f.name() == name) return &f.value();
  }
  return nullptr;
}

bool IsNumber(const vis::Value* v) {
  return v != nullptr && (v->kind_case() == vis::Value::kInteger || v->kind_case() == vis::Value::kNumber);
}

double AsDouble(const vis::Value& v) {
  return v.kind_case() == vis::Value::kInteger ? static_cast<double>(v.integer()) : v.number();
}

bool IsNonFiniteFloat(const vis::Value* v) {
  return v != nullptr && v->kind_case() == vis::Value::kNumber && !std::isfinite(v->number());
}

bool IsNull(const vis::Value* v) {
  return v == nullptr || v->kind_case() == vis::Value::kNull || v->kind_case() == vis::Value::KIND_NOT_SET;
}

std::string PyStr(const vis::Value* v) {
  if (IsNull(v)) return "None";
  switch (v->kind_case()) {
    case vis::Value::kBoolean: return v->boolean() ? "True" : "False";
    case vis::Value::kInteger: return std::to_string(v->integer());
    case vis::Value::kNumber: return PyRepr(v->number());
    case vis::Value::kText: return v->text();
    case vis::Value::kJson: {
      std::string out;
      if (IntegerArrayToPy(v->json(), &out)) return out;
      json::JsonReader r(v->json(), "");
      JsonToPy(&r, &out);
      return out;
    }
    default: return "None";
  }
}

namespace {

enum class LeafKind { kTensor, kSize, kSlice, kEllipsis, kRankArg, kProcessGroup, kScalar };

LeafKind KindOf(const vis::Item& item) {
  const vis::Value* dtype = FindField(item, "dtype");
  if (dtype != nullptr && !IsNull(dtype) && !(dtype->kind_case() == vis::Value::kText && dtype->text().empty())) {
    return LeafKind::kTensor;
  }
  const vis::Value* type = FindField(item, "type");
  std::string_view t = type != nullptr && type->kind_case() == vis::Value::kText ? std::string_view(type->text()) : "";
  if (t == "torch.Size") return LeafKind::kSize;
  if (t == "slice") return LeafKind::kSlice;
  if (t == "ellipsis") return LeafKind::kEllipsis;
  std::string_view key = item.key();
  std::string_view last = key.substr(key.rfind('.') + 1);
  if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") return LeafKind::kRankArg;
  if (t == "torch.ProcessGroup") return LeafKind::kProcessGroup;
  return LeafKind::kScalar;
}

}  // namespace

// The field that statistic k of the normalised leaf is read from; null for
// src/dst arguments and process groups, whose statistic is a text (§4.2).
const vis::Value* StatSource(const vis::Item& item, int k, LeafKind* kind) {
  static const char* const kStats[4] = {"Max", "Min", "Mean", "Norm"};
  *kind = KindOf(item);
  switch (*kind) {
    case LeafKind::kTensor:
    case LeafKind::kSize:
    case LeafKind::kSlice: return FindField(item, kStats[k]);
    case LeafKind::kEllipsis:
    case LeafKind::kScalar: return FindField(item, "value");
    default: return nullptr;
  }
}

vis::Value NormalizedStat(const vis::Item& item, int k) {
  LeafKind kind;
  const vis::Value* v = StatSource(item, k, &kind);
  vis::Value out;
  if (kind == LeafKind::kRankArg) {
    out.set_text(PyStr(FindField(item, "value")));
  } else if (kind == LeafKind::kProcessGroup) {
    out.set_text(PyStr(FindField(item, "group_ranks")));
  } else if (v == nullptr) {
    out.set_null(true);
  } else {
    out = *v;
  }
  return out;
}

namespace {

StatNumber NumberOf(const vis::Value* v, LeafKind kind) {
  StatNumber out;
  if (kind == LeafKind::kRankArg || kind == LeafKind::kProcessGroup) {
    out.kind = StatNumber::kOther;
  } else if (IsNull(v)) {
    out.kind = StatNumber::kNull;
  } else if (v->kind_case() == vis::Value::kInteger) {
    out.kind = StatNumber::kInteger;
    out.integer = v->integer();
    out.number = static_cast<double>(v->integer());
  } else if (v->kind_case() == vis::Value::kNumber) {
    out.kind = StatNumber::kFloat;
    out.number = v->number();
  } else {
    out.kind = StatNumber::kOther;
  }
  return out;
}

}  // namespace

StatNumber NormalizedNumber(const vis::Item& item, int k) {
  LeafKind kind;
  const vis::Value* v = StatSource(item, k, &kind);
  return NumberOf(v, kind);
}

void NormalizedNumbers(const vis::Item& item, StatNumber out[4]) {
  LeafKind kind = KindOf(item);
  if (kind == LeafKind::kTensor || kind == LeafKind::kSize || kind == LeafKind::kSlice) {
    const vis::Value* stat[4] = {nullptr, nullptr, nullptr, nullptr};
    for (const vis::Field& f : item.field()) {
      const std::string& name = f.name();
      int k = name == "Max" ? 0 : name == "Min" ? 1 : name == "Mean" ? 2 : name == "Norm" ? 3 : -1;
      if (k >= 0 && stat[k] == nullptr) stat[k] = &f.value();  // the first, as FindField
    }
    for (int k = 0; k < 4; ++k) out[k] = NumberOf(stat[k], kind);
    return;
  }
  const vis::Value* v = kind == LeafKind::kEllipsis || kind == LeafKind::kScalar ? FindField(item, "value") : nullptr;
  out[0] = NumberOf(v, kind);
  for (int k = 1; k < 4; ++k) out[k] = out[0];
}

std::string ItemMd5(const vis::Item& item) {
  const vis::Value* md5 = FindField(item, "md5");
  if (md5 != nullptr && md5->kind_case() == vis::Value::kText && !md5->text().empty()) return md5->text();
  LeafKind kind = KindOf(item);
  if (kind == LeafKind::kRankArg) return PyStr(FindField(item, "value"));
  if (kind == LeafKind::kProcessGroup) return PyStr(FindField(item, "group_ranks"));
  const vis::Value* value = FindField(item, "value");
  if (value == nullptr) return Crc32Hex("");
  return Crc32Hex(PyStr(value));
}

}  // namespace graph_ascend::compare
