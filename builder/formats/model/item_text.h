// An item as msprobe's formats hold it (reference §4.2 normalisation, §10.5
// formatting): what the JSON .vis writer and the .vis.db writer both write.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vis.pb.h"

namespace graph_ascend::vis {

// An item's formatted pairs in order, its storage reused from item to item
// (FormatItemTo refills it without allocating once its strings have grown).
class ItemText {
 public:
  using Pair = std::pair<std::string, std::string>;
  void Clear() { size_ = 0; }
  size_t size() const { return size_; }
  std::vector<Pair>::const_iterator begin() const { return kv_.begin(); }
  std::vector<Pair>::const_iterator end() const { return kv_.begin() + static_cast<long>(size_); }
  // The value of `k`, to be overwritten: the pair's in place, else a new pair at the end.
  std::string* Slot(std::string_view k);
  void Set(std::string_view k, std::string_view v) { Slot(k)->assign(v); }
  bool Has(std::string_view k) const { return Get(k) != nullptr; }
  const std::string* Get(std::string_view k) const;
  void Erase(std::string_view k);
  // Only the pairs of `keys` that are present, in the order of `keys`.
  void KeepOnly(std::initializer_list<std::string_view> keys);

 private:
  std::vector<Pair> kv_;  // [0, size_) in use; the rest kept for their buffers
  size_t size_ = 0;
};

// FormatItem into `row` (emptied first).
void FormatItemTo(const Item& item, CompareMode mode, std::string_view node_name, ItemText* row);

// One item as msprobe exports it: ordered key/value strings; a single
// ("value", "null") for null items.
std::vector<std::pair<std::string, std::string>> FormatItem(const Item& item, CompareMode mode,
                                                            const std::string& node_name);

}  // namespace graph_ascend::vis
