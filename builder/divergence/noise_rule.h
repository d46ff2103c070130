// The noise rule of the divergence ranking (docs/DIVERGENCE.md, "Runs that
// differ everywhere"): each op's output change held against the noise that
// the other instances of its kind show at its compute precision, given the
// change of its inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "divergence/divergence.h"
#include "graph/graph.h"

namespace graph_ascend::divergence {

// Each node's verdict, the ranking's first step.
struct Verdicts {
  std::vector<vis::DivergenceReason> reason;
  std::vector<double> threshold;  // the floor the errors were held against (the floor rule)
  std::vector<double> margin;     // output change over its noise (the noise rule)
  std::vector<uint8_t> inputs_agree, outputs_agree;
  // The noise rule: a node's inputs are within what every op before it changed (or its noise): an
  // unmatched region before it is named only when what comes out of it stands out beyond that.
  std::vector<uint8_t> inputs_within_seen;
  double largest_margin = 0;      // over the noise rule's candidates
  int64_t largest_node = -1;
};

// The kind of an op: its name without the call counters ("Functional.linear.3.forward"
// -> "Functional.linear.forward"); a module by its class and direction
// ("Module.layers.0.attn.Attention.forward.0" -> "Module.Attention.forward").
std::string KindOf(std::string_view name);

// The noise rule's verdicts over `order` (ExecutionOrder). `compared` says
// which nodes have evidence. Linear in the node count: each kind's medians
// are found by selection, not by sorting.
void NoiseVerdicts(const graph::Graph& g, const std::vector<Evidence>& evidence, const std::vector<uint32_t>& order,
                   const std::vector<uint8_t>& compared, Verdicts* v);

}  // namespace graph_ascend::divergence
