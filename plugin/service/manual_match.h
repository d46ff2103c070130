// Manual matching of NPU and Bench nodes of a compare file (plugin reference
// §7), and the match config file beside the .vis.
//
// Every function runs under the file's exclusive lock. A matched pair gets
// its metrics and precision index from compare::ComparePair, exactly as the
// builder's automatic matches, and its colour bucket from the legend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "open_graph.h"

namespace graph_ascend::service {

struct PairOutcome {
  std::string npu;
  std::string bench;
  bool ok = false;
  std::string error;
  double precision = 0;
  bool has_precision = false;
};

// Why a file cannot be matched by hand ("" when it can): not a compare, or a
// mode whose metrics cannot be recomputed from the .vis alone.
std::string MatchingUnsupported(const OpenGraph& f);

// Matches exactly the pair picked: its forward/backward twin (§7.2) is left as
// it is (the reference matched it too, and its unmatch then undid the twin's
// automatic match: issue 30). Both nodes must be unmatched and of the same
// node type (§7.1).
// `with_children`: then pairs their unmatched children by the key
// "<short name>.<node type>" in order, at every depth (§7.4). Linear in the
// nodes visited; details come from `cache` (may be null) when it has them.
std::vector<PairOutcome> MatchNodes(OpenGraph* f, uint32_t npu, uint32_t bench, bool with_children,
                                    const OpenGraph::DetailCache* cache = nullptr);

// Undoes a match of the pair (which must be matched with each other), not of
// its twin; `with_children`: also every matched NPU descendant (§7.5).
std::vector<PairOutcome> UnmatchNodes(OpenGraph* f, uint32_t npu, uint32_t bench, bool with_children,
                                      const OpenGraph::DetailCache* cache = nullptr);

// Under the shared lock, before MatchNodes / UnmatchNodes: reads the details
// they will need (the pair and, `with_children`, its subtrees, at most kMaxPrefetchNodes a side), so that the exclusive section
// that follows does no file reading.
inline constexpr size_t kMaxPrefetchNodes = size_t{1} << 15;
void PrefetchForMatch(const OpenGraph& f, uint32_t npu, uint32_t bench, bool with_children, bool match,
                      OpenGraph::DetailCache* cache);

// The short name of §7.4 used to pair children.
std::string ChildKey(const std::string& name, uint32_t node_type);

// "forward" <-> "backward" (§7.2); the name itself when it has neither.
std::string OppositeName(const std::string& name);

// Applies a config file: a JSON object {npu name: bench name}, pair by pair
// in file order, without twins, type check or children (§7.6).
Result<std::vector<PairOutcome>> ApplyMatchConfig(OpenGraph* f, const std::string& abs_path,
                                                  const std::string& display_path);

// Replays edits by node names, in order (a match journal, match_journal.h):
// pairs matched or unmatched as they were, without twins, type check or
// children (the journal lists every pair an edit changed).
struct PairEdit {
  bool match = true;  // false: unmatch
  std::string npu;
  std::string bench;
};
std::vector<PairOutcome> ReplayEdits(OpenGraph* f, const std::vector<PairEdit>& edits);

// Writes the manual matches as such a JSON object in tb_graph_ascend's
// layout (indent 4, UTF-8, no final newline), atomically (WriteAtomically).
Status WriteMatchConfig(const OpenGraph& f, const std::string& abs_path, const std::string& display_path);

}  // namespace graph_ascend::service
