// The metrics of a graph's compared nodes, kept after the compare in a
// compact form (a few bytes a metric instead of a PairMetric and its share of
// a list's room), so that their details can be made again once the graph's
// file is written (graph --output_format db) without comparing twice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare/pair_metrics.h"

namespace graph_ascend::compare {

class KeptMetrics {
 public:
  // Forgets what was kept; room for nodes [0, nodes).
  void Reset(uint32_t nodes);
  // Keeps `metrics` as node's. Several threads may keep distinct nodes at once.
  void Keep(uint32_t node, const PairMetrics& metrics);
  bool kept(uint32_t node) const { return node < nodes_.size() && !nodes_[node].empty(); }
  // Node's metrics as they were kept (out reset first); names and texts
  // point into this store or are constants: valid while it is unchanged.
  void Get(uint32_t node, PairMetrics* out) const;
  // The bytes kept, for measuring.
  size_t bytes() const;

 private:
  // Per node: its items' metric counts, each metric (a flag byte: kind, a
  // canonical name, has_value, a stored value; then the name unless
  // canonical, the text, the value unless zero), then the md5 result. Empty:
  // not kept.
  std::vector<std::string> nodes_;
};

}  // namespace graph_ascend::compare
