// Pairing NPU nodes with Bench nodes (reference §6.3).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph_builder.h"

namespace graph_ascend::match {

// Default matching (§6.3.1): same name, same number of input and output
// items with equal type and shape position by position, and the same
// ancestor names. Sets graph->matched on both sides; returns the number of
// matched pairs (the roots included).
uint32_t MatchDefault(graph::Side* npu, graph::Side* bench);

// Fuzzy matching (§6.3.2, -f): modules and API collections by name with
// the shapes of their items (zipped, counts ignored); APIs only through a
// matched parent, by name and call order with call counts ignored.
// `check_shape` is false for parallel-merge compares.
uint32_t MatchFuzzy(graph::Side* npu, graph::Side* bench, bool check_shape = true);

// Layer-mapping matching (§6.3.3, -lm): NPU node n matches the Bench node
// named mapping(n), with no structural check; names the mapping does not
// cover fall back to the same name; names it maps to nothing stay unmatched.
class NameMapping;
uint32_t MatchMapped(graph::Side* npu, graph::Side* bench, const NameMapping& mapping);

// The API key of fuzzy matching: call counts ("\.\d+\." -> ".") and
// "_rank<N>" removed.
std::string FuzzyKey(std::string_view name);

// The NPU nodes in breadth-first order from the root.
std::vector<uint32_t> BreadthFirst(const graph::Graph& g);

}  // namespace graph_ascend::match
