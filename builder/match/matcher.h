// Pairing NPU nodes with Bench nodes (reference §6.3).
#pragma once

#include <cstdint>

#include "graph/graph_builder.h"

namespace graph_ascend::match {

// Default matching (§6.3.1): same name, same number of input and output
// items with equal type and shape position by position, and the same
// ancestor names. Sets graph->matched on both sides; returns the number of
// matched pairs (the roots included).
uint32_t MatchDefault(graph::Side* npu, graph::Side* bench);

// The NPU nodes in breadth-first order from the root.
std::vector<uint32_t> BreadthFirst(const graph::Graph& g);

}  // namespace graph_ascend::match
