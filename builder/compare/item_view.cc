#include "compare/item_view.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

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

// The slot of `fields` that a field named `name` fills, or null.
ValueView* SlotOf(ItemFields* fields, std::string_view n) {
  switch (n.size()) {
    case 3: return n == "Max" ? &fields->stat[0] : n == "Min" ? &fields->stat[1] : n == "md5" ? &fields->md5 : nullptr;
    case 4:
      return n == "type" ? &fields->type : n == "Mean" ? &fields->stat[2] : n == "Norm" ? &fields->stat[3] : nullptr;
    case 5:
      return n == "dtype" ? &fields->dtype : n == "shape" ? &fields->shape : n == "value" ? &fields->value : nullptr;
    case 9: return n == "data_name" ? &fields->data_name : nullptr;
    case 11: return n == "group_ranks" ? &fields->group_ranks : nullptr;
    case 13: return n == "requires_grad" ? &fields->requires_grad : nullptr;
    default: return nullptr;
  }
}

ValueView TextView(ValueView::Kind kind, std::string_view s) {
  ValueView v;
  v.kind = kind;
  v.chars = s.data();
  v.size = static_cast<uint32_t>(s.size());
  return v;
}

bool IsRankArgName(std::string_view last) {
  return last == "src" || last == "dst" || last == "group_src" || last == "group_dst";
}

// Whether the last dot-separated part of the key names a src/dst argument.
bool RankArgKey(const ItemView& item) {
  std::string_view tail = item.key_tail;
  size_t dot = tail.rfind('.');
  if (dot != std::string_view::npos) return IsRankArgName(tail.substr(dot + 1));
  std::string_view head = item.key_head;
  head = head.substr(head.rfind('.') + 1);
  if (tail.empty()) return IsRankArgName(head);
  return IsRankArgName(std::string(head).append(tail));
}

LeafKind KindOf(const ItemView& item) {
  const ItemFields& fields = item.fields;
  const ValueView& dtype = fields.dtype;
  if (!IsNull(dtype) && !(dtype.kind == ValueView::kText && dtype.size == 0)) return LeafKind::kTensor;
  std::string_view t = fields.type.kind == ValueView::kText ? fields.type.text() : std::string_view();
  if (t == "torch.Size") return LeafKind::kSize;
  if (t == "slice") return LeafKind::kSlice;
  if (t == "ellipsis") return LeafKind::kEllipsis;
  if (RankArgKey(item)) return LeafKind::kRankArg;
  if (t == "torch.ProcessGroup") return LeafKind::kProcessGroup;
  return LeafKind::kScalar;
}

StatNumber NumberOf(const ValueView& v, LeafKind kind) {
  StatNumber out;
  if (kind == LeafKind::kRankArg || kind == LeafKind::kProcessGroup) {
    out.kind = StatNumber::kOther;
  } else if (IsNull(v)) {
    out.kind = StatNumber::kNull;
  } else if (v.kind == ValueView::kInteger) {
    out.kind = StatNumber::kInteger;
    out.integer = v.integer;
    out.number = static_cast<double>(v.integer);
  } else if (v.kind == ValueView::kNumber) {
    out.kind = StatNumber::kFloat;
    out.number = v.number;
  } else {
    out.kind = StatNumber::kOther;
  }
  return out;
}

bool StatsFromFields(LeafKind kind) {
  return kind == LeafKind::kTensor || kind == LeafKind::kSize || kind == LeafKind::kSlice;
}

// The leaf kind and statistics of an item whose key, state and fields are set.
[[gnu::always_inline]] inline void Normalize(ItemView* item) {
  item->leaf = KindOf(*item);
  if (StatsFromFields(item->leaf)) {
    for (int k = 0; k < 4; ++k) item->stats[k] = NumberOf(item->fields.stat[k], item->leaf);
    return;
  }
  bool valued = item->leaf == LeafKind::kEllipsis || item->leaf == LeafKind::kScalar;
  item->stats[0] = NumberOf(valued ? item->fields.value : ValueView(), item->leaf);
  for (int k = 1; k < 4; ++k) item->stats[k] = item->stats[0];
}

void SetItem(const vis::Item& item, ItemView* out) {
  *out = ItemView();
  out->key_head = item.key();
  out->state = static_cast<uint8_t>(std::clamp<int>(item.state(), 0, 3));
  out->fields = FieldsOf(item);
  Normalize(out);
}

}  // namespace

ValueView ViewOf(const vis::Value* v) {
  ValueView out;
  if (v == nullptr) return out;
  switch (v->kind_case()) {
    case vis::Value::kBoolean:
      out.kind = ValueView::kBool;
      out.boolean = v->boolean();
      return out;
    case vis::Value::kInteger:
      out.kind = ValueView::kInteger;
      out.integer = v->integer();
      return out;
    case vis::Value::kNumber:
      out.kind = ValueView::kNumber;
      out.number = v->number();
      return out;
    case vis::Value::kText: return TextView(ValueView::kText, v->text());
    case vis::Value::kJson: return TextView(ValueView::kJson, v->json());
    default: out.kind = ValueView::kNull; return out;
  }
}

ItemFields FieldsOf(const vis::Item& item) {
  ItemFields out;
  for (const vis::Field& f : item.field()) {
    ValueView* slot = SlotOf(&out, f.name());
    if (slot != nullptr && slot->kind == ValueView::kAbsent) *slot = ViewOf(&f.value());  // the first of its name
  }
  return out;
}

std::string ItemView::Key() const { return std::string(key_head).append(key_tail); }

bool ItemView::KeyContains(std::string_view s) const {
  if (key_head.find(s) != std::string_view::npos || key_tail.find(s) != std::string_view::npos) return true;
  if (key_head.empty() || key_tail.empty() || s.size() < 2) return false;
  // Across the seam of the two parts.
  size_t n = s.size() - 1;
  std::string seam(key_head.substr(key_head.size() - std::min(n, key_head.size())));
  seam.append(key_tail.substr(0, n));
  return seam.find(s) != std::string::npos;
}

ItemView ViewOf(const vis::Item& item) {
  ItemView out;
  SetItem(item, &out);
  return out;
}

void ItemsOf(const vis::NodeDetail& detail, NodeItems* out) {
  ItemView* items = out->Reset(static_cast<uint32_t>(detail.input_size() + detail.output_size()),
                               static_cast<uint32_t>(detail.input_size()));
  size_t k = 0;
  for (const vis::Item& it : detail.input()) SetItem(it, &items[k++]);
  for (const vis::Item& it : detail.output()) SetItem(it, &items[k++]);
}

void ItemsOf(const dump::DumpData& dump, const dump::DumpEntry* entry, std::string_view node_name,
             const StringPool& pool, NodeItems* out) {
  uint32_t count = entry == nullptr ? 0 : entry->input_count + entry->output_count;
  ItemView* items = out->Reset(count, entry == nullptr ? 0 : entry->input_count);
  for (uint32_t k = 0; k < count; ++k) {
    const dump::DumpItem& it = dump.items[entry->first_item + k];
    ItemView& v = items[k];
    // All kAbsent (zero); the rest of the view is set below.
    static_assert(std::is_trivially_copyable_v<ItemFields> && ValueView::kAbsent == 0);
    memset(static_cast<void*>(&v.fields), 0, sizeof(v.fields));
    v.key_head = (it.flags & dump::kItemFullKey) ? std::string_view() : node_name;
    v.key_tail = pool.Get(it.key);
    v.state = static_cast<uint8_t>(std::min<int>(static_cast<int>(it.state), 3));
    for (uint32_t f = 0; f < it.field_count; ++f) {
      const dump::Field& in = dump.fields[it.first_field + f];
      ValueView* slot = SlotOf(&v.fields, pool.Get(in.name));
      if (slot != nullptr && slot->kind == ValueView::kAbsent) *slot = ViewOf(in.value, pool);
    }
    Normalize(&v);
  }
}

bool IsNull(const vis::Value* v) {
  return v == nullptr || v->kind_case() == vis::Value::kNull || v->kind_case() == vis::Value::KIND_NOT_SET;
}

std::string PyStr(const ValueView& v) {
  switch (v.kind) {
    case ValueView::kBool: return v.boolean ? "True" : "False";
    case ValueView::kInteger: return std::to_string(v.integer);
    case ValueView::kNumber: return PyRepr(v.number);
    case ValueView::kText: return std::string(v.text());
    case ValueView::kJson: {
      std::string out;
      if (IntegerArrayToPy(v.text(), &out)) return out;
      json::JsonReader r(v.text(), "");
      JsonToPy(&r, &out);
      return out;
    }
    default: return "None";
  }
}

std::string PyStr(const vis::Value* v) { return PyStr(ViewOf(v)); }

bool internal::SamePyStr(const ValueView& a, const ValueView& b) {
  bool null_a = IsNull(a), null_b = IsNull(b);
  if (null_a && null_b) return true;
  if (!null_a && !null_b && a.kind == b.kind) {
    switch (a.kind) {
      case ValueView::kBool: return a.boolean == b.boolean;
      case ValueView::kInteger: return a.integer == b.integer;
      case ValueView::kText: return SameText(a.text(), b.text());
      case ValueView::kJson:
        if (SameText(a.text(), b.text())) return true;
        break;  // "[2,3]" and "[2, 3]" print alike
      case ValueView::kNumber: {
        // repr round-trips: distinct doubles print differently, but for
        // NaNs ("nan") and the zeros ("0.0" and "-0.0" are distinct bits).
        double x = a.number, y = b.number;
        if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
        return x == y && std::signbit(x) == std::signbit(y);
      }
      default: break;
    }
  }
  return PyStr(a) == PyStr(b);
}

ValueView NormalizedStat(const ItemView& item, int k, std::string* scratch) {
  ValueView v;
  switch (item.leaf) {
    case LeafKind::kRankArg: *scratch = PyStr(item.fields.value); return TextView(ValueView::kText, *scratch);
    case LeafKind::kProcessGroup:
      *scratch = PyStr(item.fields.group_ranks);
      return TextView(ValueView::kText, *scratch);
    case LeafKind::kTensor:
    case LeafKind::kSize:
    case LeafKind::kSlice: v = item.fields.stat[k]; break;
    default: v = item.fields.value; break;
  }
  if (v.kind == ValueView::kAbsent) v.kind = ValueView::kNull;
  return v;
}

vis::Value NormalizedStat(const vis::Item& item, int k) {
  std::string scratch;
  ValueView v = NormalizedStat(ViewOf(item), k, &scratch);
  vis::Value out;
  switch (v.kind) {
    case ValueView::kBool: out.set_boolean(v.boolean); break;
    case ValueView::kInteger: out.set_integer(v.integer); break;
    case ValueView::kNumber: out.set_number(v.number); break;
    case ValueView::kText: out.set_text(std::string(v.text())); break;
    case ValueView::kJson: out.set_json(std::string(v.text())); break;
    default: out.set_null(true); break;
  }
  return out;
}

std::string ItemMd5(const ItemView& item) {
  const ItemFields& fields = item.fields;
  if (fields.md5.kind == ValueView::kText && fields.md5.size > 0) return std::string(fields.md5.text());
  if (item.leaf == LeafKind::kRankArg) return PyStr(fields.value);
  if (item.leaf == LeafKind::kProcessGroup) return PyStr(fields.group_ranks);
  if (fields.value.kind == ValueView::kAbsent) return Crc32Hex("");
  return Crc32Hex(PyStr(fields.value));
}

std::string ItemMd5(const vis::Item& item) { return ItemMd5(ViewOf(item)); }

}  // namespace graph_ascend::compare
