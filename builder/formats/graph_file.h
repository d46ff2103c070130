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
// moved first.
class SideBuilder {
 public:
  ForeignNode& Add(std::string name);
  // Room for `nodes` nodes (when the reader knows how many), without rehashing.
  void Reserve(size_t nodes) {
    nodes_.reserve(nodes);
    added_.reserve(nodes);
  }
  // The id of a stack, deduplicated.
  int32_t Stack(std::vector<std::string> frames);
  size_t size() const { return nodes_.size(); }

  // Builds the side. `root` names the root ("DefaultModel"); the first node
  // added stands in when no node has that name. Unknown child or parent
  // names are an error naming `file`.
  Result<GraphSide> Finish(const std::string& root, const std::string& file);

  // After Finish(): node name -> index, for resolving matches.
  const std::unordered_map<std::string, uint32_t>& by_name() const { return index_of_; }
  // After Finish(): the peer name each node was matched to, by node index.
  const std::vector<std::string>& matched_names() const { return matched_names_; }

 private:
  std::vector<ForeignNode> nodes_;
  std::unordered_map<std::string, uint32_t> added_;
  std::unordered_map<std::string, int32_t> stack_ids_;
  std::vector<std::vector<std::string>> stacks_;
  std::unordered_map<std::string, uint32_t> index_of_;
  std::vector<std::string> matched_names_;
};

// Sets index.matched on both sides from the peer names each builder
// collected. A name missing on the other side leaves the node unmatched.
void ResolveMatches(const SideBuilder& npu_builder, GraphSide* npu, const SideBuilder& bench_builder,
                    GraphSide* bench);

}  // namespace graph_ascend::formats
