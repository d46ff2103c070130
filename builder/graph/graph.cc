#include "graph/graph.h"
#include "base/strings.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace graph_ascend::graph {

bool IsModuleName(std::string_view name) {
  return StartsWith(name, "Module.") || StartsWith(name, "Cell.") || StartsWith(name, "optimizer") ||
         StartsWith(name, "clip_grad");
}

NodeOp ClassifyNode(std::string_view name) {
  // No dump names one; a merged dump read back does (graph/dump_export.h).
  if (StartsWith(name, "Apis_Between_Modules")) return NodeOp::kApiCollection;
  if (IsModuleName(name)) return NodeOp::kModule;
  static const std::string_view kApis[] = {"Tensor.", "Torch.", "Functional.", "NPU.",  "VF.",     "Distributed.",
                                           "Aten.",   "Mint.",  "Primitive.",  "Jit.", "MintFunctional."};
  for (std::string_view p : kApis) {
    if (StartsWith(name, p)) return NodeOp::kApi;
  }
  return NodeOp::kModule;
}

int32_t StackTable::Intern(const uint32_t* l, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ l[i]) * 1099511628211ull;
  h ^= n;
  auto& bucket = by_hash[h];
  for (uint32_t id : bucket) {
    const Range& r = stacks[id];
    if (r.count == n && std::equal(l, l + n, lines.begin() + r.first)) return static_cast<int32_t>(id);
  }
  uint32_t id = static_cast<uint32_t>(stacks.size());
  stacks.push_back(Range{static_cast<uint32_t>(lines.size()), static_cast<uint32_t>(n)});
  lines.insert(lines.end(), l, l + n);
  bucket.push_back(id);
  return static_cast<int32_t>(id);
}

void Graph::Reserve(size_t nodes) {
  name.reserve(nodes);
  op.reserve(nodes);
  parent.reserve(nodes);
  first_child.reserve(nodes);
  last_child.reserve(nodes);
  next_sibling.reserve(nodes);
  child_count.reserve(nodes);
  entry.reserve(nodes);
  stack.reserve(nodes);
  micro_step.reserve(nodes);
  precision.reserve(nodes);
  precision_float.reserve(nodes);
  grade.reserve(nodes);
  overflow.reserve(nodes);
  matched.reserve(nodes);
  md5_pass.reserve(nodes);
}

uint32_t Graph::AddNode(uint32_t name_id, NodeOp node_op) {
  uint32_t n = size();
  name.push_back(name_id);
  op.push_back(node_op);
  parent.push_back(kNoNode);
  first_child.push_back(kNoNode);
  last_child.push_back(kNoNode);
  next_sibling.push_back(kNoNode);
  child_count.push_back(0);
  entry.push_back(kNoNode);
  stack.push_back(kNoNode);
  micro_step.push_back(kNoNode);
  precision.push_back(std::numeric_limits<double>::quiet_NaN());
  precision_float.push_back(0);
  grade.push_back(std::numeric_limits<double>::quiet_NaN());
  overflow.push_back(dump::OverflowLevel::kNone);
  matched.push_back(kNoNode);
  md5_pass.push_back(2);
  if (name_id >= node_by_name_.size()) node_by_name_.resize(name_id + 1, kNoNode);  // grows geometrically
  node_by_name_[name_id] = static_cast<int32_t>(n);
  return n;
}

void Graph::AppendChild(uint32_t p, uint32_t child) {
  parent[child] = static_cast<int32_t>(p);
  next_sibling[child] = kNoNode;
  if (last_child[p] == kNoNode) {
    first_child[p] = static_cast<int32_t>(child);
  } else {
    next_sibling[last_child[p]] = static_cast<int32_t>(child);
  }
  last_child[p] = static_cast<int32_t>(child);
  ++child_count[p];
}

void Graph::SetChildren(uint32_t p, const std::vector<uint32_t>& children) {
  first_child[p] = last_child[p] = kNoNode;
  child_count[p] = 0;
  for (uint32_t c : children) AppendChild(p, c);
}

void Graph::Reintern(const std::vector<uint32_t>& id, StringPool* to) {
  for (uint32_t& n : name) n = id[n];
  node_by_name_.assign(to->size(), kNoNode);
  for (uint32_t n = 0; n < size(); ++n) node_by_name_[name[n]] = static_cast<int32_t>(n);
  // A stack's hash is of its line ids: the table is rebuilt with the new ones.
  std::vector<uint32_t> lines;
  lines.swap(stacks.lines);
  std::vector<StackTable::Range> ranges;
  ranges.swap(stacks.stacks);
  stacks.by_hash.clear();
  for (uint32_t& l : lines) l = id[l];
  for (const StackTable::Range& r : ranges) stacks.Intern(lines.data() + r.first, r.count);
  pool_ = to;
}

std::vector<uint32_t> Graph::Children(uint32_t node) const {
  std::vector<uint32_t> out;
  out.reserve(child_count[node]);
  for (int32_t c = first_child[node]; c != kNoNode; c = next_sibling[c]) out.push_back(static_cast<uint32_t>(c));
  return out;
}

std::vector<uint32_t> Graph::Ancestors(uint32_t node) const {
  std::vector<uint32_t> out;
  for (int32_t p = parent[node]; p != kNoNode; p = parent[p]) {
    out.push_back(static_cast<uint32_t>(p));
    if (out.size() > size()) return {};  // a cycle; cannot happen with AppendChild
  }
  std::reverse(out.begin(), out.end());
  return out;
}

uint32_t Graph::Depth(uint32_t node) const {
  uint32_t d = 0;
  for (int32_t p = parent[node]; p != kNoNode; p = parent[p]) ++d;
  return d;
}

}  // namespace graph_ascend::graph
