#include "vis/vis_index.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

const PartialSideIndex::Known* PartialSideIndex::Find(uint32_t index) const {
  auto it = std::lower_bound(known.begin(), known.end(), index,
                             [](const Known& k, uint32_t i) { return k.index < i; });
  return it != known.end() && it->index == index ? &*it : nullptr;
}

SideIndex PartialSideIndex::Dense() const {
  SideIndex idx;
  idx.name_offset.assign(size + 1, 0);
  idx.node_type.assign(size, static_cast<uint8_t>(NODE_MODULE));
  idx.parent.assign(size, -1);
  idx.child_offset.assign(size + 1, 0);
  idx.micro_step.assign(size, -1);
  idx.precision.assign(size, std::numeric_limits<double>::quiet_NaN());
  idx.overflow.assign(size, 0);
  idx.matched.assign(size, -1);
  idx.flags.assign(size, 0);
  size_t k = 0;
  for (uint32_t n = 0; n < size; ++n) {
    const Known* node = k < known.size() && known[k].index == n ? &known[k++] : nullptr;
    if (node != nullptr) {
      idx.names += node->name;
      idx.node_type[n] = node->node_type;
      idx.micro_step[n] = node->micro_step;
      idx.precision[n] = node->precision;
      idx.overflow[n] = node->overflow;
      idx.matched[n] = node->matched;
      idx.flags[n] = node->flags;
      for (uint32_t c : node->children) {
        idx.children.push_back(c);
        if (c < size) idx.parent[c] = static_cast<int32_t>(n);
      }
    }
    idx.name_offset[n + 1] = idx.names.size();
    idx.child_offset[n + 1] = static_cast<uint32_t>(idx.children.size());
  }
  return idx;
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

std::optional<ForestFault> FindForestFault(const SideIndex& idx) {
  uint32_t size = idx.size();
  for (uint32_t n = 0; n < size; ++n) {
    if (idx.parent[n] >= static_cast<int32_t>(size) || idx.parent[n] < -1) {
      return ForestFault{n, "parent out of range"};
    }
  }
  // The children lists and the parents must describe the same forest: every
  // child names its parent, and no parent chain comes back to where it
  // started (readers walk both, and export writes both).
  std::vector<uint8_t> listed(size, 0);
  for (uint32_t n = 0; n < size; ++n) {
    for (uint32_t i = idx.child_offset[n]; i < idx.child_offset[n + 1]; ++i) {
      uint32_t c = idx.children[i];
      if (c >= size) return ForestFault{n, "child out of range"};
      if (listed[c]++ != 0 || idx.parent[c] != static_cast<int32_t>(n)) {
        return ForestFault{c, "child of node " + std::to_string(n) + " listed twice or naming another parent"};
      }
    }
  }
  std::vector<uint8_t> state(size, 0);  // 0 unseen, 1 on the current chain, 2 reaches a root
  std::vector<uint32_t> chain;
  for (uint32_t n = 0; n < size; ++n) {
    chain.clear();
    int32_t at = static_cast<int32_t>(n);
    while (at >= 0 && state[at] == 0) {
      state[at] = 1;
      chain.push_back(static_cast<uint32_t>(at));
      at = idx.parent[at];
    }
    if (at >= 0 && state[at] == 1) {
      return ForestFault{static_cast<uint32_t>(at), "the parents form a cycle"};
    }
    for (uint32_t c : chain) state[c] = 2;
  }
  for (uint32_t n = 0; n < size; ++n) {
    if (idx.parent[n] >= 0 && !listed[n]) {
      return ForestFault{n, "not among its parent's children"};
    }
  }
  return std::nullopt;
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
        for (int i = 0; i < n; ++i) {
          std::string where = "node " + std::to_string(c.first() + static_cast<uint32_t>(i));
          if (!NodeType_IsValid(static_cast<int>(c.node_type(i)))) {
            return Error{reader.path(), where, "damaged .vis file (node type " + std::to_string(c.node_type(i)) + ")"};
          }
          if (c.overflow_level(i) > OVERFLOW_CRITICAL) {
            return Error{reader.path(), where,
                         "damaged .vis file (overflow level " + std::to_string(c.overflow_level(i)) + ")"};
          }
          if (c.matched(i) < -1 || c.micro_step(i) < -1) {
            return Error{reader.path(), where, "damaged .vis file (negative matched node or micro step)"};
          }
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
  if (std::optional<ForestFault> fault = FindForestFault(idx)) {
    return Error{reader.path(), "node " + std::to_string(fault->node), "damaged .vis file (" + fault->what + ")"};
  }
  return idx;
}

}  // namespace graph_ascend::vis
