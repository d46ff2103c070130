// Read access to the items of a node as the comparison sees them, whether
// they come from a stored detail (vis::Item, the graph service's manual
// matches) or straight from a side's dump arrays (the builder, which then
// fills no NodeDetail for a compared pair). Both give the same views, so
// both give the same metrics. Shared by the comparison, the exporter and
// the service.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/string_pool.h"
#include "dump/dump_data.h"
#include "vis.pb.h"

namespace graph_ascend::compare {

// A field value: a vis::Value, or a dump::Value as vis::FillDetail would
// store it (strings are texts, compact JSON is json). Texts point into the
// item or the pool it was read from.
struct ValueView {
  enum Kind : uint8_t { kAbsent, kNull, kBool, kInteger, kNumber, kText, kJson };
  union {
    bool boolean;
    int64_t integer;
    double number;
    const char* chars;  // kText, kJson
  };
  uint32_t size = 0;  // of the text
  Kind kind = kAbsent;

  ValueView() : integer(0) {}
  std::string_view text() const { return {chars, size}; }
};
// The value of a stored field; kAbsent for null (no such field). A value
// without a kind reads as null.
ValueView ViewOf(const vis::Value* v);
// The value of a dump field (inline: the builder views every field of a
// compared pair).
inline ValueView ViewOf(const dump::Value& v, const StringPool& pool) {
  ValueView out;
  switch (v.kind) {
    case dump::ValueKind::kNull: out.kind = ValueView::kNull; break;
    case dump::ValueKind::kBool:
      out.kind = ValueView::kBool;
      out.boolean = v.boolean;
      break;
    case dump::ValueKind::kInteger:
      out.kind = ValueView::kInteger;
      out.integer = v.integer;
      break;
    case dump::ValueKind::kNumber:
      out.kind = ValueView::kNumber;
      out.number = v.number;
      break;
    case dump::ValueKind::kString:
    case dump::ValueKind::kJson: {
      std::string_view t = pool.Get(v.string);
      out.kind = v.kind == dump::ValueKind::kString ? ValueView::kText : ValueView::kJson;
      out.chars = t.data();
      out.size = static_cast<uint32_t>(t.size());
      break;
    }
  }
  return out;
}

// The fields of an item that the comparison reads, found in one pass over
// its fields (each the first of its name; kAbsent when the item has none).
struct ItemFields {
  ValueView type, dtype, shape, requires_grad, value, group_ranks, md5, data_name;
  ValueView stat[4];  // Max, Min, Mean, Norm
};
ItemFields FieldsOf(const vis::Item& item);

// The number msprobe would compute with: whether statistic k of the
// normalised leaf is an int or a float (never a bool), and its value. Also
// tells NaN/inf floats and null apart.
struct StatNumber {
  enum Kind : uint8_t { kNull, kInteger, kFloat, kOther } kind = kNull;
  int64_t integer = 0;
  double number = 0;
};

// How msprobe normalises a leaf (§4.2).
enum class LeafKind : uint8_t { kTensor, kSize, kSlice, kEllipsis, kRankArg, kProcessGroup, kScalar };

// One item of a node. Its key is key_head + key_tail (a dump item's key is
// its node's name and the item's suffix).
struct ItemView {
  std::string_view key_head, key_tail;
  uint8_t state = 0;  // vis::ItemState, clamped to 0..3 (a foreign file may hold any number)
  LeafKind leaf = LeafKind::kScalar;
  ItemFields fields;
  StatNumber stats[4];  // statistic k of the normalised leaf

  std::string Key() const;
  // Whether the key contains `s`.
  bool KeyContains(std::string_view s) const;
};

ItemView ViewOf(const vis::Item& item);

// The items of one node as a NodeDetail holds them: its input items, then
// its output items. Views point into the detail, or into the dump and pool.
class NodeItems {
 public:
  std::span<const ItemView> items() const { return {storage_.data(), count_}; }
  uint32_t inputs() const { return inputs_; }  // items [0, inputs) are the detail's input list

  // Makes the list `count` items long, the first `inputs` of them inputs,
  // for ItemsOf to fill in; returns them. The storage is kept: a list
  // refilled node after node constructs no views once it is large enough.
  ItemView* Reset(uint32_t count, uint32_t inputs) {
    if (storage_.size() < count) storage_.resize(count);
    count_ = count;
    inputs_ = inputs;
    return storage_.data();
  }

 private:
  std::vector<ItemView> storage_;
  uint32_t count_ = 0;
  uint32_t inputs_ = 0;
};
// Replaces what `out` held (its storage is reused).
void ItemsOf(const vis::NodeDetail& detail, NodeItems* out);

// The items vis::FillDetail would store for the node `node_name` whose dump
// entry is `entry` (null for a node absent from dump.json: no items).
void ItemsOf(const dump::DumpData& dump, const dump::DumpEntry* entry, std::string_view node_name,
             const StringPool& pool, NodeItems* out);

// a == b, at once when they are the same bytes (both sides of a compare
// share one pool, so equal strings of the dump are one string).
inline bool SameText(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.data() == b.data() || a == b);
}

// Null or absent.
bool IsNull(const vis::Value* v);
inline bool IsNull(const ValueView& v) { return v.kind <= ValueView::kNull; }

// Python's str() of the value as msprobe loaded it from JSON:
// None, True, 3, 0.5, 'text' inside containers, [2, 3].
std::string PyStr(const ValueView& v);
std::string PyStr(const vis::Value* v);
// PyStr(a) == PyStr(b), without building the texts when the values are
// alike (same kind, same payload). Inline for the usual dtype, shape and
// requires_grad of a pair: the same pool string, the same boolean.
namespace internal {
bool SamePyStr(const ValueView& a, const ValueView& b);
}  // namespace internal
inline bool SamePyStr(const ValueView& a, const ValueView& b) {
  if (a.kind == b.kind) {
    if ((a.kind == ValueView::kText || a.kind == ValueView::kJson) && a.chars == b.chars && a.size == b.size) {
      return true;
    }
    if (a.kind == ValueView::kBool) return a.boolean == b.boolean;
  }
  return internal::SamePyStr(a, b);
}

// Statistic k (0 Max, 1 Min, 2 Mean, 3 Norm) as msprobe sees it after
// normalising the leaf (§4.2): a tensor's own field; for other leaves the
// value (or its text for src/dst and process groups, written into
// `scratch`); null when absent.
ValueView NormalizedStat(const ItemView& item, int k, std::string* scratch);
vis::Value NormalizedStat(const vis::Item& item, int k);

// The md5 msprobe compares for an item (§4.2): the dumped md5 when present,
// str(value) for src/dst arguments, str(group_ranks) for process groups,
// else CRC-32 of str(value).
std::string ItemMd5(const ItemView& item);
std::string ItemMd5(const vis::Item& item);

}  // namespace graph_ascend::compare
