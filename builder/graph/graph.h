// One side's model graph (reference §5): a tree of modules, APIs and API
// collections, stored column-wise. Node 0 is the root "DefaultModel". Node
// order is msprobe's node_map order (§5.11), which the .vis keeps.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/string_pool.h"
#include "dump/dump_data.h"

namespace graph_ascend::graph {

// msprobe's NodeOp values, as written to node_type.
enum class NodeOp : uint8_t { kModule = 0, kApi = 1, kApiCollection = 9 };

// §5.2 with the dots of the patterns taken literally (the reference's
// unescaped regex dot is a bug, docs/COMPATIBILITY.md).
NodeOp ClassifyNode(std::string_view name);
bool IsModuleName(std::string_view name);

inline constexpr int32_t kNoNode = -1;

// Deduplicated call stacks of one graph: each is a range of line ids.
struct StackTable {
  std::vector<uint32_t> lines;
  struct Range {
    uint32_t first;
    uint32_t count;
  };
  std::vector<Range> stacks;
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash;

  // The id of the stack made of `lines` (added if new).
  int32_t Intern(const uint32_t* lines, size_t n);
};

class Graph {
 public:
  explicit Graph(StringPool* pool) : pool_(pool) {}

  StringPool* pool() const { return pool_; }
  uint32_t size() const { return static_cast<uint32_t>(name.size()); }
  std::string_view Name(uint32_t node) const { return pool_->Get(name[node]); }
  int32_t Find(uint32_t name_id) const {
    return name_id < node_by_name_.size() ? node_by_name_[name_id] : kNoNode;
  }
  int32_t Find(std::string_view s) const {
    int64_t id = pool_->Find(s);
    return id < 0 ? kNoNode : Find(static_cast<uint32_t>(id));
  }

  // Room for `nodes` nodes in every column, so that AddNode never copies.
  void Reserve(size_t nodes);
  uint32_t AddNode(uint32_t name_id, NodeOp op);
  // Appends `child` as the last child of `parent`.
  void AppendChild(uint32_t parent, uint32_t child);
  // Replaces the children of `parent` by `children` (their parent is set).
  void SetChildren(uint32_t parent, const std::vector<uint32_t>& children);

  // Moves the graph to pool `to`: `id` maps every id of the current pool to
  // the same string's id in `to`.
  void Reintern(const std::vector<uint32_t>& id, StringPool* to);

  std::vector<uint32_t> Children(uint32_t node) const;
  // Root first, parent last; empty for the root and for orphans' roots.
  std::vector<uint32_t> Ancestors(uint32_t node) const;
  uint32_t Depth(uint32_t node) const;

  // Columns, one entry per node.
  std::vector<uint32_t> name;
  std::vector<NodeOp> op;
  std::vector<int32_t> parent;
  std::vector<int32_t> first_child;
  std::vector<int32_t> last_child;
  std::vector<int32_t> next_sibling;
  std::vector<uint32_t> child_count;
  std::vector<int32_t> entry;       // dump entry, kNoNode when absent from dump.json
  std::vector<int32_t> stack;       // into stacks, kNoNode for none
  std::vector<int32_t> micro_step;  // kNoNode for none
  std::vector<double> precision;    // NaN for none
  std::vector<uint8_t> precision_float;  // 1: msprobe would hold a float ("1.0")
  std::vector<double> grade;        // msprobe 26's 0 / 0.5 / 1, NaN for none
  std::vector<dump::OverflowLevel> overflow;
  std::vector<int32_t> matched;     // node on the other side, kNoNode
  std::vector<uint8_t> md5_pass;    // md5 mode: 1 pass, 0 different, 2 none

  StackTable stacks;
  uint32_t micro_steps = 1;

 private:
  StringPool* pool_;
  // Per pool id, the node of that name (the last added), kNoNode for none:
  // pool ids are dense, and a flat array is several times smaller and faster
  // than a hash map at a million nodes.
  std::vector<int32_t> node_by_name_;
};

}  // namespace graph_ascend::graph
