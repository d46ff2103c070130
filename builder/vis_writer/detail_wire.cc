#include "vis_writer/detail_wire.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "vis_writer/wire_bytes.h"

namespace graph_ascend::vis {
namespace {

using wire::Copy;
using wire::DoubleBits;
using wire::Int32Bits;
using wire::kDelimited;
using wire::kFixed64;
using wire::kVarint;
using wire::OrView;
using wire::VarintSize;

void OrBytes(const std::string& s, uint64_t* any) { OrView(s, any); }

// Sizes, computed once per detail in the order Writer needs them: an item's
// size, then per field its size and its value's, then per metric its size.
// Every field number here is below 16: tags take one byte. The bytes of every
// string are OR-ed into `any`: a high bit means a string that is not plain
// ASCII (the caller leaves the detail to protobuf).
struct Sizer {
  uint64_t any = 0;
  std::vector<size_t>* sizes;

  size_t String(const std::string& s) {
    OrBytes(s, &any);
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
    size_t at = sizes->size();
    sizes->push_back(0);
    size_t n = Optional(f.name());
    if (f.has_value()) {
      size_t v = Value(f.value());
      sizes->push_back(v);
      n += Delimited(v);
    }
    (*sizes)[at] = n;
    return n;
  }
  size_t Metric(const vis::Metric& m) {
    size_t n = Optional(m.name()) + Optional(m.text());
    if (DoubleBits(m.value()) != 0) n += 9;
    if (m.has_value()) n += 2;
    sizes->push_back(n);
    return n;
  }
  size_t Item(const vis::Item& it) {
    size_t at = sizes->size();
    sizes->push_back(0);
    size_t n = Optional(it.key());
    if (it.state() != 0) n += 1 + VarintSize(Int32Bits(it.state()));
    if (it.is_null()) n += 2;
    for (const vis::Field& f : it.field()) n += Delimited(Field(f));
    for (const vis::Metric& m : it.metric()) n += Delimited(Metric(m));
    if (it.has_key_suffix()) n += String(it.key_suffix());
    (*sizes)[at] = n;
    return n;
  }
  size_t Link(const DistributedLink& l) {
    size_t n = Optional(l.communications_type());
    if (l.rank() != 0) n += 1 + VarintSize(Int32Bits(l.rank()));
    n += Optional(l.peer_node()) + Optional(l.peer_index());
    sizes->push_back(n);
    return n;
  }
};

// Writes into a buffer of the size Sizer gave, taking the sizes it recorded in order.
struct Writer {
  uint8_t* p;
  const size_t* size;

  void Tag(uint32_t field, uint32_t type) { *p++ = static_cast<uint8_t>(field << 3 | type); }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
  }
  void Length(uint32_t field) {
    Tag(field, kDelimited);
    Varint(*size++);
  }
  void Fixed64(uint32_t field, double v) {
    Tag(field, kFixed64);
    uint64_t bits = DoubleBits(v);
    for (int i = 0; i < 8; ++i) *p++ = static_cast<uint8_t>(bits >> (8 * i));
  }
  void String(uint32_t field, const std::string& s) {
    Tag(field, kDelimited);
    Varint(s.size());
    p = Copy(p, s.data(), s.size());
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
      Length(2);
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
      Length(4);
      Field(f);
    }
    for (const vis::Metric& m : it.metric()) {
      Length(5);
      Metric(m);
    }
    if (it.has_key_suffix()) String(6, it.key_suffix());  // present even when empty
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
  thread_local std::vector<size_t> sizes;
  sizes.clear();
  Sizer s{0, &sizes};
  size_t n = 0;
  for (const auto* items : {&d.input(), &d.output()}) {
    for (const Item& it : *items) n += Sizer::Delimited(s.Item(it));
  }
  if (d.stack_id() != 0) n += 1 + VarintSize(Int32Bits(d.stack_id()));
  for (const DistributedLink& l : d.distributed()) n += Sizer::Delimited(s.Link(l));
  if (d.distributed_is_list()) n += 2;
  for (const std::string& line : d.parallel_merge_info()) n += s.String(line);
  n += s.Optional(d.md5_result());
  if ((s.any & 0x8080808080808080ull) != 0) return false;

  size_t at = out->size();
  out->resize(at + 1 + VarintSize(n) + n);
  Writer w{reinterpret_cast<uint8_t*>(out->data() + at), sizes.data()};
  w.Tag(static_cast<uint32_t>(field), kDelimited);
  w.Varint(n);
  for (const Item& it : d.input()) {
    w.Length(1);
    w.Item(it);
  }
  for (const Item& it : d.output()) {
    w.Length(2);
    w.Item(it);
  }
  if (d.stack_id() != 0) {
    w.Tag(3, kVarint);
    w.Varint(Int32Bits(d.stack_id()));
  }
  for (const DistributedLink& l : d.distributed()) {
    w.Length(5);
    w.Link(l);
  }
  if (d.distributed_is_list()) w.Bool(6, true);
  for (const std::string& line : d.parallel_merge_info()) w.String(7, line);
  w.Optional(8, d.md5_result());
  *size = n;
  return true;
}

void AppendDetail(const NodeDetail& d, int field, std::string* out, size_t* size) {
  if (AppendDetailWire(d, field, out, size)) return;
  *size = d.ByteSizeLong();
  size_t at = out->size();
  out->resize(at + 1 + VarintSize(*size) + *size);
  Writer w{reinterpret_cast<uint8_t*>(out->data() + at), nullptr};
  w.Tag(static_cast<uint32_t>(field), kDelimited);
  w.Varint(*size);
  d.SerializeWithCachedSizesToArray(w.p);
}

namespace {

uint32_t IndexFlags(const graph::Side& side, uint32_t n) {
  const graph::Graph& g = *side.graph;
  uint32_t flags = 0;
  if (g.entry[n] != graph::kNoNode) flags |= FLAG_HAS_DATA;
  if (g.precision_float[n]) flags |= FLAG_PRECISION_FLOAT;
  if (n < side.distributed_first.size() && side.distributed_first[n] != graph::kNoNode) flags |= FLAG_DISTRIBUTED;
  return flags;
}

double GradeOf(const graph::Graph& g, uint32_t n) { return n < g.grade.size() ? g.grade[n] : std::nan(""); }

// One packed repeated field: its values' bytes gathered first, since the
// length goes before them, into a buffer of the most they can take.
class Packed {
 public:
  explicit Packed(size_t max) : bytes_(new uint8_t[max]), p_(bytes_.get()) {}

  void Varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<uint8_t>(v);
  }
  void Int32(int32_t v) { Varint(Int32Bits(v)); }
  void Double(double v) {
    uint64_t bits = DoubleBits(v);
    for (int i = 0; i < 8; ++i) *p_++ = static_cast<uint8_t>(bits >> (8 * i));
  }
  void Bytes(std::string_view s) { p_ = Copy(p_, s.data(), s.size()); }
  size_t size() const { return p_ - bytes_.get(); }
  std::string_view view() const { return {reinterpret_cast<const char*>(bytes_.get()), size()}; }
  // Appends the field (tag, length, values) to `out`; nothing when empty.
  void AppendTo(uint32_t field, std::string* out) const {
    if (size() == 0) return;
    Packed head(20);
    head.Varint(field << 3 | kDelimited);
    head.Varint(size());
    out->append(head.view()).append(view());
  }
  // The bytes AppendTo appends.
  size_t FieldSize(uint32_t field) const {
    return size() == 0 ? 0 : VarintSize(field << 3 | kDelimited) + VarintSize(size()) + size();
  }

 private:
  std::unique_ptr<uint8_t[]> bytes_;
  uint8_t* p_;
};

}  // namespace

NodeIndexChunk IndexChunkOf(const graph::Side& side, uint32_t first, uint32_t end) {
  const graph::Graph& g = *side.graph;
  NodeIndexChunk c;
  c.set_first(first);
  for (uint32_t n = first; n < end; ++n) {
    std::string_view name = g.Name(n);
    c.add_name(name.data(), name.size());
    c.add_node_type(static_cast<uint32_t>(g.op[n]));
    c.add_parent(g.parent[n]);
    c.add_child_count(g.child_count[n]);
    for (int32_t ch = g.first_child[n]; ch != graph::kNoNode; ch = g.next_sibling[ch]) {
      c.add_children(static_cast<uint32_t>(ch));
    }
    c.add_micro_step(g.micro_step[n]);
    c.add_precision_index(g.precision[n]);
    c.add_grade_index(GradeOf(g, n));
    c.add_overflow_level(static_cast<uint32_t>(g.overflow[n]));
    c.add_matched(g.matched[n]);
    c.add_flags(IndexFlags(side, n));
  }
  return c;
}

bool AppendIndexChunkWire(const graph::Side& side, uint32_t first, uint32_t end, std::string* out) {
  const graph::Graph& g = *side.graph;
  uint64_t any = 0;
  size_t name_bytes = 0, children = 0;
  for (uint32_t n = first; n < end; ++n) {
    std::string_view name = g.Name(n);
    OrView(name, &any);
    name_bytes += name.size();
    for (int32_t ch = g.first_child[n]; ch != graph::kNoNode; ch = g.next_sibling[ch]) ++children;
  }
  if ((any & 0x8080808080808080ull) != 0) return false;
  // The most bytes each field can take: a varint takes up to 10 bytes (a
  // negative int32 is written as 64 bits).
  size_t count = end - first;
  Packed head(20), names(name_bytes + 6 * count), node_type(10 * count), parent(10 * count), child_count(10 * count),
      child(10 * children), micro_step(10 * count), precision(8 * count), overflow(10 * count), matched(10 * count),
      flags(10 * count), grade(8 * count);
  if (first != 0) {
    head.Varint(1 << 3 | kVarint);
    head.Varint(first);
  }
  for (uint32_t n = first; n < end; ++n) {
    std::string_view name = g.Name(n);
    names.Varint(2 << 3 | kDelimited);
    names.Varint(name.size());
    names.Bytes(name);
    node_type.Varint(static_cast<uint32_t>(g.op[n]));
    parent.Int32(g.parent[n]);
    child_count.Varint(g.child_count[n]);
    for (int32_t ch = g.first_child[n]; ch != graph::kNoNode; ch = g.next_sibling[ch]) {
      child.Varint(static_cast<uint32_t>(ch));
    }
    micro_step.Int32(g.micro_step[n]);
    precision.Double(g.precision[n]);
    overflow.Varint(static_cast<uint32_t>(g.overflow[n]));
    matched.Int32(g.matched[n]);
    flags.Varint(IndexFlags(side, n));
    grade.Double(GradeOf(g, n));
  }
  // Reserved once: a chunk takes megabytes, which growing would copy and fault in again.
  out->reserve(out->size() + head.size() + names.size() + node_type.FieldSize(3) + parent.FieldSize(4) +
               child_count.FieldSize(5) + child.FieldSize(6) + micro_step.FieldSize(7) + precision.FieldSize(8) +
               overflow.FieldSize(9) + matched.FieldSize(10) + flags.FieldSize(11) + grade.FieldSize(120));
  out->append(head.view()).append(names.view());
  node_type.AppendTo(3, out);
  parent.AppendTo(4, out);
  child_count.AppendTo(5, out);
  child.AppendTo(6, out);
  micro_step.AppendTo(7, out);
  precision.AppendTo(8, out);
  overflow.AppendTo(9, out);
  matched.AppendTo(10, out);
  flags.AppendTo(11, out);
  grade.AppendTo(120, out);
  return true;
}

}  // namespace graph_ascend::vis
