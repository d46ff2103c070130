#include "vis/vis_index.h"

#include <algorithm>
#include <cmath>

namespace graph_ascend::vis {

std::vector<uint32_t> SideIndex::Ancestors(uint32_t n) const {
  std::vector<uint32_t> out;
  for (int32_t p = parent[n]; p >= 0; p = parent[p]) {
    out.push_back(static_cast<uint32_t>(p));
    if (out.size() > size()) return {};
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<uint32_t> SideIndex::PreOrder() const {
  std::vector<uint32_t> out;
  if (size() == 0) return out;
  out.reserve(size());
  std::vector<uint32_t> stack{0};
  std::vector<uint8_t> seen(size(), 0);
  while (!stack.empty()) {
    uint32_t n = stack.back();
    stack.pop_back();
    if (seen[n]) continue;
    seen[n] = 1;
    out.push_back(n);
    for (uint32_t i = child_offset[n + 1]; i > child_offset[n]; --i) stack.push_back(children[i - 1]);
  }
  return out;
}

Result<SideIndex> LoadSideIndex(const VisReader& reader, Side side, const std::function<void(double)>& progress) {
  SideIndex idx;
  idx.name_offset.push_back(0);
  idx.child_offset.push_back(0);
  Status st = reader.ReadIndex(
      side,
      [&](NodeIndexChunk& c) -> Status {
        int n = c.name_size();
        auto same = [n](int size) { return size == n; };
        if (!same(c.node_type_size()) || !same(c.parent_size()) || !same(c.child_count_size()) ||
            !same(c.micro_step_size()) || !same(c.precision_index_size()) || !same(c.overflow_level_size()) ||
            !same(c.matched_size()) || !same(c.flags_size())) {
          return Error{reader.path(), "node index chunk at node " + std::to_string(c.first()),
                       "damaged .vis file (columns of different lengths)"};
        }
        if (c.grade_index_size() != 0 && !same(c.grade_index_size())) {
          return Error{reader.path(), "node index chunk at node " + std::to_string(c.first()),
                       "damaged .vis file (grade column of a different length)"};
        }
        uint64_t children = 0;
        for (int i = 0; i < n; ++i) children += c.child_count(i);
        if (children != static_cast<uint64_t>(c.children_size())) {
          return Error{reader.path(), "node index chunk at node " + std::to_string(c.first()),
                       "damaged .vis file (child counts)"};
        }
        int k = 0;
        for (int i = 0; i < n; ++i) {
          idx.names += c.name(i);
          idx.name_offset.push_back(idx.names.size());
          idx.node_type.push_back(static_cast<uint8_t>(c.node_type(i)));
          idx.parent.push_back(c.parent(i));
          for (uint32_t j = 0; j < c.child_count(i); ++j) idx.children.push_back(c.children(k++));
          idx.child_offset.push_back(static_cast<uint32_t>(idx.children.size()));
          idx.micro_step.push_back(c.micro_step(i));
          idx.precision.push_back(c.precision_index(i));
          idx.grade.push_back(c.grade_index_size() ? c.grade_index(i) : std::nan(""));
          idx.overflow.push_back(static_cast<uint8_t>(c.overflow_level(i)));
          idx.matched.push_back(c.matched(i));
          idx.flags.push_back(c.flags(i));
        }
        return Status::Ok();
      },
      progress);
  if (!st.ok()) return st.error();
  uint32_t size = idx.size();
  for (uint32_t n = 0; n < size; ++n) {
    if (idx.parent[n] >= static_cast<int32_t>(size) || idx.parent[n] < -1) {
      return Error{reader.path(), "node " + std::to_string(n), "damaged .vis file (parent out of range)"};
    }
  }
  for (uint32_t c : idx.children) {
    if (c >= size) return Error{reader.path(), "", "damaged .vis file (child out of range)"};
  }
  return idx;
}

}  // namespace graph_ascend::vis
