// Linking communication operators across the ranks of one step (reference
// §8): a send on rank 0 with the recv on rank 1 it talks to, an all_reduce
// with the all_reduce of every other rank of its group. Only annotates
// nodes (Side::distributed); nothing else changes.
//
// Two steps, so that ranks built by different processes (shards) link as
// one process does: ScanRank keeps what the linker needs of one rank's
// communication nodes (a RankComm, small), LinkComm pairs them up. LinkRanks
// does both for ranks held in memory.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/graph_builder.h"

namespace graph_ascend::distributed {

// What the linker needs of one communication node.
struct CommNode {
  uint32_t node = 0;
  std::string name;   // the dump name, shown to peers
  std::string api;    // "send", "all_reduce", "batch_isend_irecv", ...
  bool has_rank_param = false;
  int64_t rank_param = 0;  // dst / src / the root of a broadcast or reduce
  bool has_group = false;
  std::vector<int64_t> group_ranks;
  std::string group_id;
  std::string uid;                // P2P and collectives
  std::vector<std::string> uids;  // batch_isend_irecv, one per operation
  std::string index;              // the index peers show: precision or overflow level
  bool has_output0 = false;       // P2P only: output.0's dtype, shape and statistics
  std::vector<std::string> output0;
};

struct RankComm {
  int rank = 0;
  std::vector<CommNode> nodes;  // in node order
};

// The communication nodes of one rank. The index shown for a node is its
// overflow level when `overflow_check`, else its precision index ("Nan" when
// it has none), so precision must be computed before.
RankComm ScanRank(int rank, const graph::Side& side, bool overflow_check);

struct CommLink {
  std::string type;  // send, receive, send_receive
  int rank = 0;      // the peer
  std::string peer_node;
  std::string peer_index;
};

// The links of one rank, per node in the order msprobe lists them.
struct RankLinks {
  std::map<uint32_t, std::vector<CommLink>> nodes;
  std::set<uint32_t> lists;  // nodes whose links are shown as a list (batch_isend_irecv)
};

// Which msprobe's rule pairs a send / isend with its recv / irecv once both
// name each other (docs/COMPATIBILITY.md C26-p2p): msprobe 8.1 (`graph`)
// also asks their output.0 to agree (dtype, shape, statistics), msprobe 26.2
// (`graph_visualize`) does not.
enum class P2PRule { kOutputsAgree, kPeersOnly };

// Links the ranks of one step; the result is parallel to `ranks`, whose
// order matters (the batch's rank order). `annotated` (may be null) gets the
// number of nodes annotated.
std::vector<RankLinks> LinkComm(const std::vector<RankComm>& ranks, uint32_t* annotated = nullptr,
                                P2PRule p2p = P2PRule::kOutputsAgree);

// Writes `links` into side->distributed.
void Annotate(const RankLinks& links, graph::Side* side);

struct RankGraph {
  int rank;
  graph::Side* side;
};

// Fills side->distributed for every communication node that has a peer.
// Returns the number of nodes annotated.
uint32_t LinkRanks(const std::vector<RankGraph>& ranks, bool overflow_check, P2PRule p2p = P2PRule::kOutputsAgree);

}  // namespace graph_ascend::distributed
