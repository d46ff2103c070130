// Adding cross-rank links to a written .vis (`graph-ascend link`, after the
// shards of a batch wrote their files without them).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "vis.pb.h"

namespace graph_ascend::vis {

struct NodeLinks {
  std::vector<DistributedLink> links;
  bool is_list = false;  // NodeDetail.distributed_is_list
};

// Per node of one side.
using SideLinks = std::map<uint32_t, NodeLinks>;

// Rewrites the .vis at `path` (temporary file + rename) so that exactly the
// nodes of `npu` and `bench` have links, these: their details carry them,
// their index flags FLAG_DISTRIBUTED, and FileMeta.first_divergence_peers
// lists the peers of the first divergence when it is a communication node,
// as the one-process batch writes them. Details are re-blocked by the
// writer's rule (DetailBlockFull); sections that do not change are copied as
// they are. Running it twice gives the same file.
Status RewriteLinks(const std::string& path, const SideLinks& npu, const SideLinks& bench);

}  // namespace graph_ascend::vis
