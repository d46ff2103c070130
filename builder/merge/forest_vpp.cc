// The virtual-pipeline merge (§9.7): model chunks folded into one graph.
#include "merge/forest.h"

#include <algorithm>

#include "base/strings.h"

namespace graph_ascend::merge::internal {

// ------------------------------------------------------------------ §9.7

void Forest::MergeVppData(uint16_t main) {
  std::string last_chunk = std::to_string(params_.vpp - 1);
  std::vector<uint32_t> stack;
  const std::vector<uint32_t>& top = children_[root_[main]];
  for (auto it = top.rbegin(); it != top.rend(); ++it) {
    std::vector<std::string_view> seg = SplitDots(Name(*it));
    if (seg.size() >= 2 && (seg[1] == "0" || seg[1] == last_chunk)) stack.push_back(*it);
  }
  while (!stack.empty()) {
    uint32_t cur = stack.back();
    stack.pop_back();
    if (pp_merged_[cur] || pp_index_[cur] != kNoPpIndex || op_[cur] != NodeOp::kModule) continue;
    bool forward = EndsWithForwardCall(Name(cur));
    for (auto it = children_[cur].rbegin(); it != children_[cur].rend(); ++it) stack.push_back(*it);
    int32_t target = Lookup(main, ReplaceChunk(Name(cur), last_chunk));
    if (target == kNoNode) continue;
    ReplaceItems(cur, static_cast<uint32_t>(target), forward, true);
  }
}

void Forest::MergeVppChunks(uint16_t main) {
  uint32_t root = root_[main];
  std::vector<uint32_t> stack;
  for (auto it = children_[root].rbegin(); it != children_[root].rend(); ++it) {
    std::vector<std::string_view> seg = SplitDots(Name(*it));
    if (seg.size() >= 2 && seg[1] == "0") stack.push_back(*it);
  }
  // The parents of merged layers, by name, in first-seen order.
  std::vector<uint32_t> parents;
  std::unordered_map<uint32_t, size_t> parent_at;
  while (!stack.empty()) {
    uint32_t cur = stack.back();
    stack.pop_back();
    int32_t up = parent_[cur];
    bool tagged_new = pp_index_[cur] != kNoPpIndex && up != kNoNode && !parent_at.count(name_[up]);
    if ((pp_merged_[cur] || tagged_new) && up != kNoNode) {
      auto [it, inserted] = parent_at.emplace(name_[up], parents.size());
      if (inserted) {
        parents.push_back(static_cast<uint32_t>(up));
      } else {
        parents[it->second] = static_cast<uint32_t>(up);
      }
      continue;
    }
    if (pp_merged_[cur] || tagged_new) continue;
    for (auto it = children_[cur].rbegin(); it != children_[cur].rend(); ++it) stack.push_back(*it);
  }
  for (uint32_t p : parents) {
    bool forward = EndsWithForwardCall(Name(p));
    for (int chunk = 1; chunk < params_.vpp; ++chunk) {
      int32_t target = Lookup(main, ReplaceChunk(Name(p), std::to_string(chunk)));
      if (target == kNoNode) continue;
      std::vector<uint32_t> moved = children_[target];
      if (forward) {
        children_[p].insert(children_[p].end(), moved.begin(), moved.end());
      } else {
        moved.insert(moved.end(), children_[p].begin(), children_[p].end());
        children_[p] = std::move(moved);
      }
      for (uint32_t s : children_[target]) parent_[s] = static_cast<int32_t>(p);
      // The other chunk's ancestors leave the graph.
      std::vector<uint32_t> chain;
      for (int32_t a = parent_[target]; a != kNoNode; a = parent_[a]) chain.push_back(static_cast<uint32_t>(a));
      std::reverse(chain.begin(), chain.end());
      if (chain.size() < 2) continue;
      for (size_t i = 1; i < chain.size(); ++i) node_map_[main].erase(name_[chain[i]]);
      uint32_t top_name = name_[chain[1]];
      std::vector<uint32_t>& top = children_[root];
      top.erase(std::remove_if(top.begin(), top.end(), [&](uint32_t x) { return name_[x] == top_name; }), top.end());
    }
    SortLayers(main, children_[p], forward);
  }
}

void Forest::SortLayers(uint16_t main, const std::vector<uint32_t>& list_in, bool forward) {
  std::vector<uint32_t> list = list_in;
  if (!forward) std::reverse(list.begin(), list.end());
  int index = -1;
  auto rename = [&](uint32_t n, const std::string& name) {
    node_map_[main].erase(name_[n]);
    Rename(n, name);
    node_map_[main][name_[n]] = n;
  };
  for (uint32_t node : list) {
    std::string name(Name(node));
    LayersMatch m;
    bool matched = FindLayers(name, 0, &m);
    if (matched) ++index;
    std::vector<std::string_view> seg = SplitDots(name);
    if (seg.size() < 2 || seg[1] == "0") continue;
    std::string prefix;
    std::string renamed;
    if (matched) {
      prefix = ReplaceChunk(name.substr(0, m.digits) + std::to_string(index) + ".", "0");
      renamed = prefix + name.substr(m.end);
    } else {
      renamed = ReplaceChunk(name, "0");
    }
    rename(node, renamed);
    std::vector<uint32_t> stack = children_[node];
    while (!stack.empty()) {
      uint32_t cur = stack.back();
      stack.pop_back();
      if (op_[cur] != NodeOp::kModule) continue;
      for (auto it = children_[cur].rbegin(); it != children_[cur].rend(); ++it) stack.push_back(*it);
      std::string cur_name(Name(cur));
      LayersMatch cm;
      rename(cur, FindLayers(cur_name, 0, &cm) ? prefix + cur_name.substr(cm.end) : ReplaceChunk(cur_name, "0"));
    }
  }
}

}  // namespace graph_ascend::merge::internal
