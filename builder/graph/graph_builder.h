// Building one side's graph from its dump directory (reference §5).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "dump/code_mapping_stacks.h"
#include "dump/dump_data.h"
#include "graph/graph.h"

namespace graph_ascend::graph {

struct BuildOptions {
  bool complete_stack = false;  // -cs: keep whole stacks (§5.6)
  bool overflow_check = false;  // -oc: compute overflow levels while reading (§7)
  // msprobe 26: a backward node whose construct.json parent is not its
  // module's parent (an in-place layer fired no backward hook) takes the
  // backward twin of its forward node's parent (graph_visualize).
  bool backward_inplace = false;
  std::function<void(size_t done, size_t total)> progress;  // bytes of dump.json parsed
  // Threads that read a side's large dump.json (BuildSidePair gives each side
  // half); what is built does not depend on it.
  int threads = 1;
  // A code_mapping result as the stack source of a static-graph dump
  // (dump/code_mapping_stacks.h): Cell nodes without a stack take their
  // kernels' code lines, and stack.json may be absent. It must give at least
  // one node a stack. BuildSidePair gives the bench side bench_code_mapping.
  std::shared_ptr<const dump::CodeMapping> code_mapping;
  std::shared_ptr<const dump::CodeMapping> bench_code_mapping;
};

// Everything of one side: the parsed files and the graph. The strings are
// interned in a pool shared by both sides of a compare, so that equal names
// have equal ids across sides.
struct Side {
  std::string dir;  // the dump directory
  StringPool* pool = nullptr;
  dump::DumpData dump;
  dump::ConstructData construct;
  dump::StackData stacks;
  std::unique_ptr<Graph> graph;
  // BuildOptions::code_mapping: its file and the number of nodes it gave a stack.
  std::string code_mapping_path;
  size_t code_mapping_nodes = 0;
  // What was repaired while building (construct.json cycles), for the user.
  std::vector<Error> warnings;

  // Cross-rank communication links (§8), filled in batch mode. Links of a
  // node form a list through `next`, starting at distributed_first[node].
  struct DistributedLink {
    std::string type;        // send / receive / send_receive
    int32_t rank;
    std::string peer_node;
    std::string peer_index;  // str() of the peer's precision index or overflow level
    int32_t next;
  };
  std::vector<DistributedLink> distributed;
  std::vector<int32_t> distributed_first;  // per node, or empty
  std::unordered_set<uint32_t> distributed_is_list;

  // Parallel merge (§9.6): the notes of each node whose statistics were
  // merged across ranks, in msprobe's words.
  std::unordered_map<uint32_t, std::vector<std::string>> parallel_merge_info;
};

// Reads dump.json, construct.json and stack.json from `dir` and builds the
// graph: root, hierarchy with backward-parent repair, orphan parents put
// under the root, API collections, parameters_grad nodes, simplified stacks.
Result<std::unique_ptr<Side>> BuildSide(const std::string& dir, StringPool* pool, const BuildOptions& options);

// BuildSide for both sides of a compare, reading the two directories in
// parallel. `options.progress` is called from the calling thread only, for
// the NPU side.
struct SidePair {
  std::unique_ptr<Side> npu;
  std::unique_ptr<Side> bench;
};
Result<SidePair> BuildSidePair(const std::string& npu_dir, const std::string& bench_dir, StringPool* pool,
                               const BuildOptions& options);

// Simplifies a stack for node `name` (§5.6): returns the [first, count) part
// of `lines` to keep.
std::pair<size_t, size_t> SimplifyStack(std::string_view name, const std::vector<std::string_view>& lines);

// Splits the root's children into micro steps (§5.10) and returns their
// number (>= 1); sets micro_step on the root's children.
uint32_t AssignMicroSteps(Graph* graph);

}  // namespace graph_ascend::graph
