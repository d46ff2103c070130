// Linking communication operators across the ranks of one step (reference
// §8): a send on rank 0 with the recv on rank 1 it talks to, an all_reduce
// with the all_reduce of every other rank of its group. Only annotates
// nodes (Side::distributed); nothing else changes.
#pragma once

#include <vector>

#include "graph/graph_builder.h"

namespace graph_ascend::distributed {

struct RankGraph {
  int rank;
  graph::Side* side;
};

// Fills side->distributed for every communication node that has a peer.
// The index shown for a peer is its overflow level when `overflow_check`,
// else its precision index ("Nan" when it has none). Returns the number of
// nodes annotated.
uint32_t LinkRanks(const std::vector<RankGraph>& ranks, bool overflow_check);

}  // namespace graph_ascend::distributed
