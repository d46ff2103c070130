#include "vis/detail_wire.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace graph_ascend::vis {
namespace {

// Wire types of the tags written here.
constexpr uint32_t kVarint = 0, kFixed64 = 1, kDelimited = 2;

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// int32 and enum fields: a negative value is written as its 64-bit sign extension.
uint64_t Int32Bits(int32_t v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }

uint64_t DoubleBits(double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof(bits));
  return bits;
}

bool IsAscii(const std::string& s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t any = 0;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    any |= w;
  }
  for (; n > 0; ++p, --n) any |= static_cast<unsigned char>(*p);
  return (any & 0x8080808080808080ull) == 0;
}

// Sizes. Every field number here is below 16: tags take one byte. A string
// that is not plain ASCII makes `ascii` false (the caller leaves the detail to
// protobuf).
struct Sizer {
  bool ascii = true;

  size_t String(const std::string& s) {
    ascii = ascii && IsAscii(s);
    return 1 + VarintSize(s.size()) + s.size();
  }
  size_t Optional(const std::string& s) { return s.empty() ? 0 : String(s); }
  static size_t Delimited(size_t body) { return 1 + VarintSize(body) + body; }

  size_t Value(const vis::Value& v) {
    switch (v.kind_case()) {
      case Value::kNull:
      case Value::kBoolean: return 2;
      case Value::kInteger: return 1 + VarintSize(static_cast<uint64_t>(v.integer()));
      case Value::kNumber: return 9;
      case Value::kText: return String(v.text());
      case Value::kJson: return String(v.json());
      case Value::KIND_NOT_SET: return 0;
    }
    return 0;
  }
  size_t Field(const vis::Field& f) {
    size_t n = Optional(f.name());
    if (f.has_value()) n += Delimited(Value(f.value()));
    return n;
  }
  size_t Metric(const vis::Metric& m) {
    size_t n = Optional(m.name()) + Optional(m.text());
    if (DoubleBits(m.value()) != 0) n += 9;
    if (m.has_value()) n += 2;
    return n;
  }
  size_t Item(const vis::Item& it) {
    size_t n = Optional(it.key());
    if (it.state() != 0) n += 1 + VarintSize(Int32Bits(it.state()));
    if (it.is_null()) n += 2;
    for (const vis::Field& f : it.field()) n += Delimited(Field(f));
    for (const vis::Metric& m : it.metric()) n += Delimited(Metric(m));
    return n;
  }
  size_t Link(const DistributedLink& l) {
    size_t n = Optional(l.communications_type());
    if (l.rank() != 0) n += 1 + VarintSize(Int32Bits(l.rank()));
    return n + Optional(l.peer_node()) + Optional(l.peer_index());
  }
};

// Writes into a buffer sized by Sizer.
struct Writer {
  uint8_t* p;

  void Tag(uint32_t field, uint32_t type) { *p++ = static_cast<uint8_t>(field << 3 | type); }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
  }
  void Fixed64(uint32_t field, double v) {
    Tag(field, kFixed64);
    uint64_t bits = DoubleBits(v);
    for (int i = 0; i < 8; ++i) *p++ = static_cast<uint8_t>(bits >> (8 * i));
  }
  void String(uint32_t field, const std::string& s) {
    Tag(field, kDelimited);
    Varint(s.size());
    memcpy(p, s.data(), s.size());
    p += s.size();
  }
  void Optional(uint32_t field, const std::string& s) {
    if (!s.empty()) String(field, s);
  }
  void Bool(uint32_t field, bool b) {
    Tag(field, kVarint);
    *p++ = b ? 1 : 0;
  }

  void Value(const vis::Value& v) {
    switch (v.kind_case()) {
      case Value::kNull: Bool(1, v.null()); break;
      case Value::kBoolean: Bool(2, v.boolean()); break;
      case Value::kInteger:
        Tag(3, kVarint);
        Varint(static_cast<uint64_t>(v.integer()));
        break;
      case Value::kNumber: Fixed64(4, v.number()); break;
      case Value::kText: String(5, v.text()); break;
      case Value::kJson: String(6, v.json()); break;
      case Value::KIND_NOT_SET: break;
    }
  }
  void Field(const vis::Field& f) {
    Optional(1, f.name());
    if (f.has_value()) {
      Sizer s;
      Tag(2, kDelimited);
      Varint(s.Value(f.value()));
      Value(f.value());
    }
  }
  void Metric(const vis::Metric& m) {
    Optional(1, m.name());
    Optional(2, m.text());
    if (DoubleBits(m.value()) != 0) Fixed64(3, m.value());
    if (m.has_value()) Bool(4, true);
  }
  void Item(const vis::Item& it) {
    Optional(1, it.key());
    if (it.state() != 0) {
      Tag(2, kVarint);
      Varint(Int32Bits(it.state()));
    }
    if (it.is_null()) Bool(3, true);
    for (const vis::Field& f : it.field()) {
      Sizer s;
      Tag(4, kDelimited);
      Varint(s.Field(f));
      Field(f);
    }
    for (const vis::Metric& m : it.metric()) {
      Sizer s;
      Tag(5, kDelimited);
      Varint(s.Metric(m));
      Metric(m);
    }
  }
  void Link(const DistributedLink& l) {
    Optional(1, l.communications_type());
    if (l.rank() != 0) {
      Tag(2, kVarint);
      Varint(Int32Bits(l.rank()));
    }
    Optional(3, l.peer_node());
    Optional(4, l.peer_index());
  }
};

}  // namespace

bool AppendDetailWire(const NodeDetail& d, int field, std::string* out, size_t* size) {
  if (!d.suggestions().empty()) return false;
  // The items' sizes, computed once: each is needed for its length prefix.
  thread_local std::vector<size_t> item_sizes;
  item_sizes.clear();
  Sizer s;
  size_t n = 0;
  for (const auto* items : {&d.input(), &d.output()}) {
    for (const Item& it : *items) {
      item_sizes.push_back(s.Item(it));
      n += Sizer::Delimited(item_sizes.back());
    }
  }
  if (d.stack_id() != 0) n += 1 + VarintSize(Int32Bits(d.stack_id()));
  for (const DistributedLink& l : d.distributed()) n += Sizer::Delimited(s.Link(l));
  if (d.distributed_is_list()) n += 2;
  for (const std::string& line : d.parallel_merge_info()) n += s.String(line);
  n += s.Optional(d.md5_result());
  if (!s.ascii) return false;

  size_t at = out->size();
  out->resize(at + 1 + VarintSize(n) + n);
  Writer w{reinterpret_cast<uint8_t*>(out->data() + at)};
  w.Tag(static_cast<uint32_t>(field), kDelimited);
  w.Varint(n);
  size_t k = 0;
  for (uint32_t number : {1u, 2u}) {
    for (const Item& it : number == 1 ? d.input() : d.output()) {
      w.Tag(number, kDelimited);
      w.Varint(item_sizes[k++]);
      w.Item(it);
    }
  }
  if (d.stack_id() != 0) {
    w.Tag(3, kVarint);
    w.Varint(Int32Bits(d.stack_id()));
  }
  for (const DistributedLink& l : d.distributed()) {
    Sizer ls;
    w.Tag(5, kDelimited);
    w.Varint(ls.Link(l));
    w.Link(l);
  }
  if (d.distributed_is_list()) w.Bool(6, true);
  for (const std::string& line : d.parallel_merge_info()) w.String(7, line);
  w.Optional(8, d.md5_result());
  *size = n;
  return true;
}

}  // namespace graph_ascend::vis
