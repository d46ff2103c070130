// Merging the per-rank graphs of a tensor/pipeline/virtual-pipeline parallel
// run into one graph per data-parallel replica (reference §9).
//
// The ranks' graphs are taken apart into one working forest, merged there
// the way msprobe's GraphMerger merges its node objects (API collections
// across ranks §9.4, PP §9.5, TP §9.6, VPP §9.7), and each merged graph is
// written back as an ordinary graph::Side: its own Graph, a DumpData holding
// the (merged) items of every node it kept, the stacks of every rank it took
// nodes from, and parallel_merge_info for the nodes whose statistics were
// merged. The rest of the pipeline (matching, compare, writing) treats it
// like any other side.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "graph/graph_builder.h"
#include "plan/parallel_params.h"

namespace graph_ascend::merge {

// One rank's graph (graph::BuildSide). All ranks of a run share one StringPool.
struct RankSide {
  int rank = 0;  // from the folder name: rank3 -> 3, rank -> 0
  std::unique_ptr<graph::Side> side;
};

struct MergedSide {
  int rank = 0;  // the main rank, the first of its group
  std::unique_ptr<graph::Side> side;
};

using MergeLog = std::function<void(const std::string&)>;

// Merges the ranks of one step of one run into its dp graphs, in msprobe's
// order (the i-th graph of the npu run is compared with the i-th of the
// bench run). `params` must have passed ValidateParallelParams for
// ranks.size() folders. Takes the ranks.
Result<std::vector<MergedSide>> MergeRanks(std::vector<RankSide> ranks, const ParallelParams& params,
                                           const MergeLog& log = nullptr);

// §9.3 groups from the data, empty when the data names none:
// PP chains from the first isend of each rank (batch_isend_irecv peers, or a
// send/isend "dst"), TP groups from the group_ranks of each rank's first
// reduce_scatter / all_reduce.
RankGroups PpGroupsFromData(const std::vector<RankSide>& ranks);
RankGroups TpGroupsFromData(const std::vector<RankSide>& ranks);

// An API of another rank (§9.4, §9.5): "_rank<r>" appended to the second
// segment, "Torch.matmul.0.forward" -> "Torch.matmul_rank1.0.forward".
// Names with one segment are returned unchanged.
std::string ApiRankName(std::string_view name, int rank);

// "(layers\.|layer\.)\d+\." replaced by "<layers.|layer.><index>." everywhere
// in `name` (§9.5 layer renumbering).
std::string RenumberLayers(std::string_view name, std::string_view index);

}  // namespace graph_ascend::merge
