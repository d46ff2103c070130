// Where several runs of one job first disagree (issue 33 point 4): users who
// chase nondeterminism ("two runs of the same job differ") or compare
// data-parallel replicas that should be equal need the earliest dump entry
// whose recorded values are not the same in every run, and how far apart the
// runs are there. This is an exact test, not the noise-aware divergence
// ranking: runs of one job on one machine are expected to agree bit for bit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace graph_ascend::runs {

// The first place where the runs disagree.
struct Disagreement {
  std::string name;    // the dump entry (an API or module call), e.g. "Tensor.__add__.3.forward"
  uint32_t index = 0;  // its position in the reference run's dump.json
  std::string item;    // the item key, e.g. "Tensor.__add__.3.forward.output.0"; empty when the entry is missing
  std::string field;   // "Max", "Min", "Mean", "Norm", "md5", "shape", ...; "entry" when a run lacks the entry
  std::vector<std::string> values;  // per run, as written in dump.json ("" where the run lacks it)
  double spread = 0;   // largest minus smallest numeric value across the runs; NaN when not numeric
  double relative_spread = 0;       // spread / largest |value|; NaN when not numeric
  std::vector<int> differing_runs;  // runs whose value is not the reference's
};

// What the runs say about one graph (one step and rank).
struct GraphSpread {
  std::string stage;              // "step_1/actor_update" in a stages layout (verl), else ""
  std::string step;               // "step0" or ""
  std::string rank;               // "rank0", "rank", "proc<pid>" or ""
  std::vector<std::string> dirs;  // the dump folder of each run
  uint32_t entries = 0;           // entries of the reference run compared
  bool agree = true;              // every entry equal in every run
  // The first entry present in every run whose values differ; when the runs
  // differ only by entries some run lacks, the first of those (field "entry").
  Disagreement first;             // when !agree
  uint32_t missing = 0;           // entries of the reference that some run lacks
};

// Compares the dump.json of `dirs` (one folder per run, the same step and
// rank of each) entry by entry in the reference run's order.
Result<GraphSpread> FirstDisagreement(const std::vector<std::string>& dirs, int reference);

// One line: "step0 rank0: first disagreement at Tensor.__add__.3.forward
// (entry 41), output.0 Max: spread 1.19e-07 (relative 2.4e-08); runs 1, 2
// differ from run 0" or "step0 rank0: the 3 runs agree on all 120 entries".
std::string Describe(const GraphSpread& g, int reference);

// The summary file `graph` writes beside the per-run compares (docs/FORMAT.md, runs.json).
std::string SummaryJson(const std::vector<std::string>& runs, int reference, const std::vector<GraphSpread>& graphs);

// One graph of a runs.json as the page and the report show it.
struct SummaryGraph {
  std::string step;   // "step0" or ""
  std::string rank;   // "rank0" or ""
  std::string first;  // the node where the runs first disagree; "" when they agree
  std::string line;   // Describe() of the graph, as stored
};

// What `info`, the page and the report show of a runs.json: the runs, the
// reference and each graph's line.
struct Summary {
  std::vector<std::string> runs;
  int reference = 0;
  std::vector<std::string> lines;  // Describe() of each graph, as stored
  std::vector<SummaryGraph> graphs;  // the same graphs with their step, rank and first node
};
Result<Summary> ReadSummaryJson(const std::string& path);

// Where a compare of one run lies in a runs output: "OUT/run<i>/NAME" has its
// summary at "OUT/runs.json" ("runs.json" for "run<i>/NAME"). Names only, no
// file is opened; nullopt when the folder holding `path` is not run<digits>.
struct RunFile {
  int run = 0;
  std::string summary;  // the runs.json path, in the same form as `path`
  std::string parent;   // "OUT/" or ""
  std::string name;     // NAME
};
std::optional<RunFile> RunFileOf(const std::string& path);

}  // namespace graph_ascend::runs
