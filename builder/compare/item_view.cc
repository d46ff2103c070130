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

ItemFields FieldsOf(const vis::Item& item) {
  ItemFields out;
  for (const vis::Field& f : item.field()) {
    std::string_view n = f.name();
    const vis::Value** slot = nullptr;
    switch (n.size()) {
      case 3: slot = n == "Max" ? &out.stat[0] : n == "Min" ? &out.stat[1] : n == "md5" ? &out.md5 : nullptr; break;
      case 4: slot = n == "type" ? &out.type : n == "Mean" ? &out.stat[2] : n == "Norm" ? &out.stat[3] : nullptr; break;
      case 5: slot = n == "dtype" ? &out.dtype : n == "shape" ? &out.shape : n == "value" ? &out.value : nullptr; break;
      case 11: slot = n == "group_ranks" ? &out.group_ranks : nullptr; break;
      case 13: slot = n == "requires_grad" ? &out.requires_grad : nullptr; break;
      default: break;
    }
    if (slot != nullptr && *slot == nullptr) *slot = &f.value();  // the first, as FindField
  }
  return out;
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

bool SamePyStr(const vis::Value* a, const vis::Value* b) {
  bool null_a = IsNull(a), null_b = IsNull(b);
  if (null_a && null_b) return true;
  if (!null_a && !null_b && a->kind_case() == b->kind_case()) {
    switch (a->kind_case()) {
      case vis::Value::kBoolean: return a->boolean() == b->boolean();
      case vis::Value::kInteger: return a->integer() == b->integer();
      case vis::Value::kText: return a->text() == b->text();
      case vis::Value::kJson:
        if (a->json() == b->json()) return true;
        break;  // "[2,3]" and "[2, 3]" print alike
      case vis::Value::kNumber: {
        // repr round-trips: distinct doubles print differently, but for
        // NaNs ("nan") and the zeros ("0.0" and "-0.0" are distinct bits).
        double x = a->number(), y = b->number();
        if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
        return x == y && std::signbit(x) == std::signbit(y);
      }
      default: break;
    }
  }
  return PyStr(a) == PyStr(b);
}

namespace {

enum class LeafKind { kTensor, kSize, kSlice, kEllipsis, kRankArg, kProcessGroup, kScalar };

LeafKind KindOf(const vis::Item& item, const ItemFields& fields) {
  const vis::Value* dtype = fields.dtype;
  if (dtype != nullptr && !IsNull(dtype) && !(dtype->kind_case() == vis::Value::kText && dtype->text().empty())) {
    return LeafKind::kTensor;
  }
  const vis::Value* type = fields.type;
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
const vis::Value* StatSource(const vis::Item& item, const ItemFields& fields, int k, LeafKind* kind) {
  *kind = KindOf(item, fields);
  switch (*kind) {
    case LeafKind::kTensor:
    case LeafKind::kSize:
    case LeafKind::kSlice: return fields.stat[k];
    case LeafKind::kEllipsis:
    case LeafKind::kScalar: return fields.value;
    default: return nullptr;
  }
}

vis::Value NormalizedStat(const vis::Item& item, int k) {
  ItemFields fields = FieldsOf(item);
  LeafKind kind;
  const vis::Value* v = StatSource(item, fields, k, &kind);
  vis::Value out;
  if (kind == LeafKind::kRankArg) {
    out.set_text(PyStr(fields.value));
  } else if (kind == LeafKind::kProcessGroup) {
    out.set_text(PyStr(fields.group_ranks));
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
  const vis::Value* v = StatSource(item, FieldsOf(item), k, &kind);
  return NumberOf(v, kind);
}

void NormalizedNumbers(const vis::Item& item, StatNumber out[4]) { NormalizedNumbers(item, FieldsOf(item), out); }

void NormalizedNumbers(const vis::Item& item, const ItemFields& fields, StatNumber out[4]) {
  LeafKind kind = KindOf(item, fields);
  if (kind == LeafKind::kTensor || kind == LeafKind::kSize || kind == LeafKind::kSlice) {
    for (int k = 0; k < 4; ++k) out[k] = NumberOf(fields.stat[k], kind);
    return;
  }
  const vis::Value* v = kind == LeafKind::kEllipsis || kind == LeafKind::kScalar ? fields.value : nullptr;
  out[0] = NumberOf(v, kind);
  for (int k = 1; k < 4; ++k) out[k] = out[0];
}

std::string ItemMd5(const vis::Item& item) { return ItemMd5(item, FieldsOf(item)); }

std::string ItemMd5(const vis::Item& item, const ItemFields& fields) {
  const vis::Value* md5 = fields.md5;
  if (md5 != nullptr && md5->kind_case() == vis::Value::kText && !md5->text().empty()) return md5->text();
  LeafKind kind = KindOf(item, fields);
  if (kind == LeafKind::kRankArg) return PyStr(fields.value);
  if (kind == LeafKind::kProcessGroup) return PyStr(fields.group_ranks);
  if (fields.value == nullptr) return Crc32Hex("");
  return Crc32Hex(PyStr(fields.value));
}

}  // namespace graph_ascend::compare
