// A map from StringPool ids to indexes (of dump entries, construct.json
// edges, stacks), kept as a flat array indexed by id. Pool ids are dense
// and most strings of a side that are ever looked up are node names, so
// the array is about as large as a hash map of the same keys, needs no
// allocation per key and a lookup is one load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace graph_ascend {

class IdIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The index of `id`, kNone for none.
  uint32_t Get(uint32_t id) const { return id < index_.size() ? index_[id] : kNone; }
  bool Contains(uint32_t id) const { return Get(id) != kNone; }

  void Set(uint32_t id, uint32_t index) {
    if (id >= index_.size()) index_.resize(id + 1, kNone);  // grows geometrically
    if (index_[id] == kNone) ++size_;
    index_[id] = index;
  }
  // Sets `index` unless `id` has one; returns the index `id` then has.
  uint32_t Insert(uint32_t id, uint32_t index) {
    uint32_t old = Get(id);
    if (old != kNone) return old;
    Set(id, index);
    return index;
  }

  // Room for ids below `ids` without growing.
  void Reserve(size_t ids) { index_.reserve(ids); }
  void Clear() {
    index_.clear();
    size_ = 0;
  }
  // The number of ids that have an index.
  size_t size() const { return size_; }

  // Calls f(id, index) for each id with an index, in id order.
  template <typename F>
  void ForEach(F f) const {
    for (uint32_t id = 0; id < index_.size(); ++id) {
      if (index_[id] != kNone) f(id, index_[id]);
    }
  }

 private:
  std::vector<uint32_t> index_;
  size_t size_ = 0;
};

}  // namespace graph_ascend
