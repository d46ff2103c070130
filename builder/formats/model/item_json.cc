#include "formats/model/item_json.h"

#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/py_format.h"
#include "compare/item_view.h"
#include "formats/model/item_text.h"
#include "formats/model/value_text.h"
#include "json/json_reader.h"

namespace graph_ascend::vis {
namespace {

using compare::PyStr;

// A text's bytes that matter here, a word at a time (the short texts of an item in one or two
// words: the last word read again, or padded with 'a' under eight bytes).
struct TextBytes {
  bool escaped = false;  // JSON needs an escape: a control character, '"', '\\', non-ASCII
  bool quote_or_n = false;  // a '\'' or an 'N' ("None"), which §10.5 changes
};

TextBytes LookAt(std::string_view s) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto zero_byte = [](uint64_t w) { return (w - kOnes) & ~w; };
  uint64_t escaped = 0, quote_or_n = 0;
  auto look = [&](uint64_t w) {
    escaped |= zero_byte(w ^ (kOnes * '"')) | zero_byte(w ^ (kOnes * '\\')) | ((w - kOnes * 0x20) & ~w) | w;
    quote_or_n |= zero_byte(w ^ (kOnes * '\'')) | zero_byte(w ^ (kOnes * 'N'));
  };
  const char* p = s.data();
  size_t n = s.size();
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      uint64_t w;
      memcpy(&w, p + i, 8);
      look(w);
    }
    uint64_t w;
    memcpy(&w, p + n - 8, 8);
    look(w);
  } else if (n >= 4) {
    uint32_t a, b;
    memcpy(&a, p, 4);
    memcpy(&b, p + n - 4, 4);
    look(a | uint64_t{b} << 32);
  } else if (n > 0) {
    uint64_t w = kOnes * 'a';
    w = (w & ~uint64_t{0xffffff}) | static_cast<unsigned char>(p[0]) |
        uint64_t{static_cast<unsigned char>(p[n / 2])} << 8 | uint64_t{static_cast<unsigned char>(p[n - 1])} << 16;
    look(w);
  }
  return {(escaped & kHigh) != 0, (quote_or_n & kHigh) != 0};
}

// Appends to a string through a buffer on the stack: an item is many pieces of a few bytes
// ("Max", "\": \"", "0.123456"), cheaper gathered than appended one by one.
class Gathered {
 public:
  explicit Gathered(std::string* out) : out_(out) {}
  ~Gathered() { Flush(); }
  Gathered(const Gathered&) = delete;
  Gathered& operator=(const Gathered&) = delete;

  void Put(std::string_view s) {
    if (s.size() > kSize - n_) {
      Flush();
      if (s.size() > kSize) return out_->append(s), void();
    }
    memcpy(buf_ + n_, s.data(), s.size());
    n_ += s.size();
  }
  // `s` as a JSON string, ASCII escapes.
  void Quoted(std::string_view s) { Quoted(s, LookAt(s).escaped); }
  // The same, `escaped` being LookAt(s).escaped.
  void Quoted(std::string_view s, bool escaped) {
    if (!escaped && s.size() + 2 <= kSize) {
      if (s.size() + 2 > kSize - n_) Flush();
      buf_[n_] = '"';
      memcpy(buf_ + n_ + 1, s.data(), s.size());
      buf_[n_ + 1 + s.size()] = '"';
      n_ += s.size() + 2;
      return;
    }
    Flush();
    json::AppendQuoted(s, out_, true);
  }
  // PyRound6OrExp6To's text of x, quoted (it needs no escape).
  void QuotedFloat(double x) {
    if (kPyReprMax + 2 > kSize - n_) Flush();
    buf_[n_] = '"';
    size_t n = PyRound6OrExp6To(x, buf_ + n_ + 1);
    buf_[n_ + 1 + n] = '"';
    n_ += n + 2;
  }
  void Flush() {
    out_->append(buf_, n_);
    n_ = 0;
  }

 private:
  static constexpr size_t kSize = 4096;
  std::string* out_;
  char buf_[kSize];
  size_t n_ = 0;
};

// FormatTextTo's text, quoted; `scratch` holds it on the way when it is not `s`.
void PutText(std::string_view s, Gathered* out, std::string* scratch) {
  // TextKept's test, from the one look: no quote nor "None", not " ", no decimal to round.
  TextBytes bytes = LookAt(s);
  bool decimal = !s.empty() && s[0] >= '0' && s[0] <= '9' && RoundsDecimals(s);
  if (!bytes.quote_or_n && s != " " && !decimal) return out->Quoted(s, bytes.escaped);
  FormatTextTo(s, scratch);
  out->Quoted(*scratch);
}

// FormatValueTo's text, quoted.
void PutValue(const Value& v, Gathered* out, std::string* scratch) {
  switch (v.kind_case()) {
    case Value::kNumber: return out->QuotedFloat(v.number());
    case Value::kText: return PutText(v.text(), out, scratch);
    case Value::kJson: return PutText(PyStr(&v), out, scratch);
    default: break;
  }
  FormatValueTo(&v, scratch);
  out->Quoted(*scratch);
}

// FormatMetricTo's text, quoted.
void PutMetric(const Metric& m, Gathered* out, std::string* scratch) {
  switch (MetricFormOf(m)) {
    case MetricForm::kText: return PutText(m.text(), out, scratch);
    case MetricForm::kInteger: return out->Quoted(m.text());
    case MetricForm::kFloat: return out->QuotedFloat(m.value());
  }
}

// The keys FormatItemTo adds when the item lacks them, in the order it adds them.
enum DefaultKey { kDataName, kRequiresGrad, kMax, kMin, kMean, kNorm, kMd5, kNoDefault };

DefaultKey DefaultKeyOf(std::string_view k) {
  switch (k.size()) {
    case 3: return k == "Max" ? kMax : k == "Min" ? kMin : k == "md5" ? kMd5 : kNoDefault;
    case 4: return k == "Mean" ? kMean : k == "Norm" ? kNorm : kNoDefault;
    case 9: return k == "data_name" ? kDataName : kNoDefault;
    case 13: return k == "requires_grad" ? kRequiresGrad : kNoDefault;
    default: return kNoDefault;
  }
}

// How FormatItemTo's pairs of an item follow from its fields, when they do in one pass.
enum class Pass {
  kNone,  // FormatItemTo's way
  // The fields in order, less the ones erased, then the defaults added, then the metrics:
  // an item with a dtype (no §4.2 leaf rule applies).
  kFields,
  // The same, but for §4.2's plain argument (no dtype; not a torch.Size, slice, ellipsis,
  // process group, nor a rank argument): every statistic its value's text, its dtype
  // Python's type name and its shape "[]", in place or added after the defaults.
  kArgument,
};

// The Pass of `item`: every field and metric name once, no metric named as a default,
// "dtype" or "shape", and not a process group. Sets *max and *value to its "Max" and
// "value" fields (null when none).
Pass PassOf(const Item& item, const Field** max, const Field** value) {
  if (item.is_null()) return Pass::kNone;
  constexpr int kMaxNames = 48;
  const std::string* names[kMaxNames];  // left uninitialised: [0, count) are set
  int count = 0;
  uint64_t sizes = 0;  // bit s: a name of s bytes (s < 64) was seen
  auto once = [&](const std::string& name) {
    if (count == kMaxNames) return false;
    uint64_t bit = uint64_t{1} << (name.size() & 63);
    if (sizes & bit) {
      for (int i = 0; i < count; ++i) {
        if (*names[i] == name) return false;
      }
    }
    sizes |= bit;
    names[count++] = &name;
    return true;
  };
  bool has_dtype = false;
  std::string_view type;
  *max = *value = nullptr;
  for (const Field& f : item.field()) {
    const std::string& name = f.name();
    if (!once(name)) return Pass::kNone;
    std::string_view n = name;
    const Value& v = f.value();
    if (n == "dtype") {
      has_dtype = !compare::IsNull(&v) && !(v.kind_case() == Value::kText && v.text().empty());
    } else if (n == "type") {
      if (v.kind_case() == Value::kText) type = v.text();
    } else if (n == "Max") {
      *max = &f;
    } else if (n == "value") {
      *value = &f;
    }
  }
  if (type == "torch.ProcessGroup") return Pass::kNone;
  for (const Metric& m : item.metric()) {
    std::string_view n = m.name();
    if (!once(m.name()) || DefaultKeyOf(n) != kNoDefault || n == "dtype" || n == "shape") return Pass::kNone;
  }
  if (has_dtype) return Pass::kFields;
  std::string_view key = item.key();
  std::string_view last = key.substr(key.rfind('.') + 1);
  if (type == "torch.Size" || type == "slice" || type == "ellipsis" || last == "src" || last == "dst" ||
      last == "group_src" || last == "group_dst") {
    return Pass::kNone;
  }
  return Pass::kArgument;
}

// Whether FormatValueTo writes "null" for `v`.
bool FormatsAsNull(const Value& v, std::string* scratch) {
  switch (v.kind_case()) {
    case Value::kBoolean:
    case Value::kInteger:
    case Value::kNumber: return false;
    default: FormatValueTo(&v, scratch); return *scratch == "null";
  }
}

}  // namespace

void AppendItemJson(const Item& item, CompareMode mode, std::string_view node_name, std::string* out) {
  thread_local ItemText row;  // the rest: its strings keep their buffers from item to item
  thread_local std::string scratch, stat, type_name;
  const Field* max = nullptr;
  const Field* value = nullptr;
  const Pass pass = PassOf(item, &max, &value);
  if (pass == Pass::kNone) {
    FormatItemTo(item, mode, node_name, &row);
    out->push_back('{');
    bool first = true;
    for (const auto& [k, v] : row) {
      if (!first) out->append(", ");
      first = false;
      json::AppendQuoted(k, out, true);
      out->append(": ");
      json::AppendQuoted(v, out, true);
    }
    out->push_back('}');
    return;
  }
  // A null Max (missing, or an argument's null value) makes the item {"value": "null"}
  // whatever else it holds.
  const bool argument = pass == Pass::kArgument;
  bool null_max;
  if (argument) {
    null_max = value == nullptr;
    if (!null_max) {
      FormatValueTo(&value->value(), &stat);
      null_max = stat == "null";
      FormatTextTo(PyTypeName(&value->value()), &type_name);
    }
  } else {
    null_max = max == nullptr || FormatsAsNull(max->value(), &scratch);
  }
  if (null_max) {
    out->append("{\"value\": \"null\"}");
    return;
  }
  const bool md5 = mode == MODE_MD5;
  const bool batch = node_name.find("batch_isend_irecv") != std::string_view::npos;
  Gathered text(out);
  text.Put("{");
  bool first = true;
  auto key = [&](std::string_view k) {
    if (!first) text.Put(", ");
    first = false;
    text.Quoted(k);
    text.Put(": ");
  };
  uint32_t present = 0;  // bit k: default key k is a field
  bool has_dtype = false, has_shape = false;
  for (const Field& f : item.field()) {
    std::string_view name = f.name();
    DefaultKey d = DefaultKeyOf(name);
    if (d != kNoDefault) present |= 1u << d;
    if (d == kMd5 && !md5) continue;
    if (batch && (name == "op" || name == "peer" || name == "tag" || name == "group_id")) continue;
    key(name);
    if (d == kDataName) {
      const Value& v = f.value();
      std::string_view s = v.text();
      if (v.kind_case() != Value::kText || !TextKept(s)) {
        FormatValueTo(&v, &scratch);
        s = scratch;
      }
      text.Quoted(s == "null" || s.empty() ? "-1" : s);
    } else if (argument && d >= kMax && d <= kNorm) {
      text.Quoted(stat);
    } else if (argument && name == "dtype") {
      has_dtype = true;
      text.Quoted(type_name);
    } else if (argument && name == "shape") {
      has_shape = true;
      text.Put("\"[]\"");
    } else {
      PutValue(f.value(), &text, &scratch);
    }
  }
  if (!(present & (1u << kDataName))) key("data_name"), text.Put("\"-1\"");
  if (!(present & (1u << kRequiresGrad))) key("requires_grad"), text.Put("\"null\"");
  static const char* const kStats[] = {"Max", "Min", "Mean", "Norm"};
  for (int d = kMax; d <= kNorm; ++d) {  // an argument's are its value, a tensor's Max is a field
    if (present & (1u << d)) continue;
    key(kStats[d - kMax]);
    if (argument) {
      text.Quoted(stat);
    } else {
      text.Put("\"null\"");
    }
  }
  if (argument && !has_dtype) key("dtype"), text.Quoted(type_name);
  if (argument && !has_shape) key("shape"), text.Put("\"[]\"");
  if (md5 && !(present & (1u << kMd5))) key("md5"), text.Quoted(compare::ItemMd5(item));
  for (const Metric& m : item.metric()) {
    key(m.name());
    PutMetric(m, &text, &scratch);
  }
  text.Put("}");
}

}  // namespace graph_ascend::vis
