// One graph file in memory: the model every reader of builder/formats fills
// and every writer reads, whatever the format on disk (docs/FORMAT.md,
// "Foreign formats").
//
// It is the content of a graph-ascend .vis: FileMeta and, per side, the
// hierarchy index (vis::SideIndex), one NodeDetail per node and the
// deduplicated stacks. Foreign readers build a side by name with SideBuilder;
// the .vis reader and writer move it to and from disk as it is.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "vis.pb.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::formats {

struct GraphSide {
  vis::SideIndex index;
  std::vector<vis::NodeDetail> details;             // one per node
  std::vector<std::vector<std::string>> stacks;     // NodeDetail.stack_id indexes this
};

struct GraphFile {
  vis::FileMeta meta;
  GraphSide npu;
  GraphSide bench;  // empty in a build

  bool compare() const { return meta.kind() == vis::GRAPH_COMPARE; }
  GraphSide& side(vis::Side s) { return s == vis::SIDE_NPU ? npu : bench; }
  const GraphSide& side(vis::Side s) const { return s == vis::SIDE_NPU ? npu : bench; }
};

// Reads a whole graph-ascend .vis into memory.
Result<GraphFile> ReadVisFile(const std::string& path);

// Writes `graph` as a graph-ascend .vis (temporary file + rename). Node and
// stack counts of meta are filled in from the sides.
Status WriteVisFile(const GraphFile& graph, const std::string& path);
// The same, moving the node details out of `graph` instead of copying them.
Status WriteVisFile(GraphFile&& graph, const std::string& path);

// For a writer that streams the details itself: writes the index chunks and
// stacks of every side of `graph` and sets their counts in `meta`.
Status WriteIndexAndStacks(const GraphFile& graph, vis::VisWriter* writer, vis::FileMeta* meta);

// One node as a foreign format describes it: by names.
struct ForeignNode {
  std::string name;
  uint32_t node_type = vis::NODE_MODULE;
  std::string parent;                 // "" for the root and orphans
  std::vector<std::string> children;  // in order
  int32_t micro_step = -1;
  double precision = 0;               // NaN when none
  bool precision_float = false;       // written as a float ("1.0")
  uint32_t overflow = vis::OVERFLOW_NONE;
  std::string matched;                // the peer node's name, "" when unmatched
  bool has_data = false;
  bool distributed = false;           // has cross-rank links (also when `detail` holds them)
  vis::NodeDetail detail;             // stack_id set by the reader through Stack()
};

// Collects the nodes of one side by name, then resolves names into indices.
// Node order is the order they were added (the file's order), with the root
// moved first. A node's name must not change after Add(): the builder keys
// its nodes by views of their names (one copy of each name, one hash each).
class SideBuilder {
 public:
  ForeignNode& Add(std::string name);
  // Room for `nodes` nodes (when the reader knows how many), without rehashing.
  void Reserve(size_t nodes) {
    if (nodes * 2 > slots_.size()) Rehash(nodes * 2);
  }
  // The id of a stack, deduplicated.
  int32_t Stack(std::vector<std::string> frames);
  // Gives `stacks` (a finished side's, in order) their ids 0, 1, ... first,
  // so that Stack() of a node read later answers the id that side gave it.
  void KnownStacks(const std::vector<std::vector<std::string>>& stacks) {
    for (const auto& frames : stacks) Stack(frames);
  }
  size_t stack_count() const { return stacks_.size(); }
  // The stacks so far, by id.
  const std::vector<std::vector<std::string>>& stacks() const { return stacks_; }
  size_t size() const { return count_; }

  // Builds the side. `root` names the root ("DefaultModel"); the first node
  // added stands in when no node has that name. Unknown child or parent
  // names are an error naming `file`.
  Result<GraphSide> Finish(const std::string& root, const std::string& file);

  // After Finish(): the index of the node named `name`, -1 when none.
  int64_t IndexOf(std::string_view name) const;
  // After Finish(): the peer name each node was matched to, by node index.
  const std::vector<std::string>& matched_names() const { return matched_names_; }

 private:
  static constexpr uint32_t kChunkBits = 10;
  ForeignNode& node(uint32_t n) { return chunks_[n >> kChunkBits][n & ((1u << kChunkBits) - 1)]; }
  const ForeignNode& node(uint32_t n) const { return chunks_[n >> kChunkBits][n & ((1u << kChunkBits) - 1)]; }
  // The position in the chunks of the node named `name`, -1 when none.
  int64_t Added(std::string_view name) const;
  // The slot of `name` (hash `hash`): its node's, or the empty one it would take.
  size_t Probe(std::string_view name, uint64_t hash) const;
  void Rehash(size_t slots);

  // Nodes in chunks that never move, so the name table needs no copy of a name.
  std::vector<std::unique_ptr<ForeignNode[]>> chunks_;
  uint32_t count_ = 0;
  // The name table, open addressing: a probe compares names only when their
  // hashes agree (the slot keeps the hash's high half; the low bits place it).
  // node is the position in the chunks + 1, 0 for an empty slot.
  struct Slot {
    uint32_t hash = 0;
    uint32_t node = 0;
  };
  std::vector<Slot> slots_;  // a power of two, at most half full
  std::unordered_map<std::string, int32_t> stack_ids_;
  std::vector<std::vector<std::string>> stacks_;
  std::vector<uint32_t> position_;  // after Finish(): position in the chunks -> node index
  std::vector<std::string> matched_names_;
};

// Sets index.matched on both sides from the peer names each builder
// collected. A name that is not a node of the other side is an error naming
// `file`, the node and the name (a damaged link; msprobe writes none).
Status ResolveMatches(const std::string& file, const SideBuilder& npu_builder, GraphSide* npu,
                      const SideBuilder& bench_builder, GraphSide* bench);

}  // namespace graph_ascend::formats
