// What the rank overview (docs/OVERVIEW.md) shows of one compare, counted
// while the file is written so that the overview reads only each rank's
// FileMeta: NPU nodes per colour bucket of both gradings and per overflow
// level, and the first divergence's node.
#pragma once

#include "graph/graph.h"
#include "vis.pb.h"

namespace graph_ascend::divergence {

// Counts the nodes of `npu` reachable from the root (the root excluded from
// the buckets), coloured by meta.legend and meta.grade_legend as the service
// colours them (compare::NodeBucket). `ranking` gives the first divergence.
vis::OverviewCounts CountForOverview(const graph::Graph& npu, const vis::FileMeta& meta,
                                     const vis::DivergenceRanking& ranking);

}  // namespace graph_ascend::divergence
