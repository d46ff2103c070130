// Running `graph-ascend graph`: building, matching, comparing and writing
// every output file of a compare.json (reference §1 pipeline).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "dump/code_mapping_stacks.h"
#include "plan/compare_config.h"
#include "plan/folder_plan.h"
#include "plan/run_flags.h"
#include "vis.pb.h"

namespace graph_ascend::job {

// What RunGraph writes.
enum class OutputFormat {
  kVis,    // graph-ascend's .vis, one file per graph (default)
  kVisDb,  // msprobe 8.2+/26.x SQLite .vis.db (graph_visualize --output_format db)
  // A parallel-merge build's merged graphs as dump directories,
  // <output>/<step>/rank<R>/{construct,dump,stack}.json (graph_visualize --file_type json).
  kMergedDump,
};

struct GraphOptions {
  bool overflow_check = false;       // -oc
  bool complete_stack = false;       // -cs
  bool backward_inplace = false;     // msprobe 26's backward parents (graph::BuildOptions)
  bool p2p_peers_only = false;       // msprobe 26's send/recv links (distributed::P2PRule::kPeersOnly)
  bool fuzzy_match = false;          // -f
  bool layer_mapping = false;        // -lm
  std::string layer_mapping_file;    // -lm FILE
  ParallelFlags parallel;            // --rank_size --tp --pp --vpp --order
  std::vector<std::string> argv;     // recorded in the file
  std::string timestamp;             // YYYYmmddHHMMSS; now when empty
  OutputFormat output_format = OutputFormat::kVis;
  // The grading the file shows first: graph takes the 8.x index,
  // graph_visualize msprobe 26's pass/warning/error. Both are stored.
  vis::Grading grading = vis::GRADING_INDEX;
  Dialect dialect = Dialect::kGraph;
  ShardSpec shard;                   // --shard I/N
  // A batch's pairs at once (--jobs; 0: the cores the process may use) within
  // --max-memory bytes (0: a share of what is free), job/batch_run.h.
  int jobs = 0;
  uint64_t max_memory = 0;
  int threads = 0;                   // compare-and-write threads of one pair (0: every core)
  // Checkpoint similarity (--ckpt A B / --ckpt-json FILE): ckpt_compare's parameters, mapped onto
  // the NPU module nodes of every file written (weights/ckpt_similarity.h). Null: none.
  std::shared_ptr<const vis::CkptSimilarity> ckpt;
  // --code_mapping NPU_CSV [BENCH_CSV]: the stack source of a static-graph dump, per side
  // (graph::BuildOptions::code_mapping). Null: stack.json only.
  std::shared_ptr<const dump::CodeMapping> code_mapping, bench_code_mapping;
  // Progress of the current file: its name and a fraction in [0, 1].
  std::function<void(const std::string&, double)> progress;
  // Progress of the whole run, a fraction in [0, 1] (graph_visualize -progress_log).
  std::function<void(double)> run_progress;
  // The stage the run enters: "reading dumps", "matching", "comparing and writing", "writing",
  // "linking ranks", "reading ranks", "merging ranks", "writing .vis.db" (--progress_json).
  std::function<void(const std::string&)> stage;
  // Detail messages (-v).
  std::function<void(const std::string&)> log;
  // One line per compared node of a tensor compare (graph_visualize -tensor_log).
  std::function<void(const std::string&)> compare_log;
  // What was repaired in the input (a construct.json cycle): printed always.
  std::function<void(const Error&)> warn;
  // --output_format db, set by RunGraph itself: called with each .vis just
  // written, while its graphs are still in memory, and `details`, which gives
  // node n's details of a side as the file holds them (keys whole). Called
  // one pair at a time, in the order of GraphResult::outputs, or for no pair
  // of the run (a batch whose ranks are linked afterwards). An error fails the run.
  std::function<Status(const std::string& vis_path,
                       const std::function<void(vis::Side side, uint32_t node, vis::NodeDetail* out)>& details)>
      pair_written;
};

struct GraphResult {
  std::vector<std::string> outputs;  // paths of the .vis files (kMergedDump: the folders) written
  std::vector<std::string> summary;  // lines for the user (more than two runs: where they first disagree)
};

// Reads `compare_json`, writes the .vis files into `output_dir` (created if
// missing). On any error nothing of this run is left in `output_dir`.
Result<GraphResult> RunGraph(const std::string& compare_json, const std::string& output_dir,
                             const GraphOptions& options);

// The same from a configuration already made (graph_visualize's flags).
Result<GraphResult> RunGraph(CompareConfig config, const std::string& output_dir, const GraphOptions& options);

// The same for one or two runs whose jobs the caller has planned: `plan` is what
// PlanJobs(config, options.timestamp) gave (more than two runs plan every run
// before writing anything, job/runs_job.cc, and run each on its plan; a
// parallel merge from the flags plans its own).
Result<GraphResult> RunGraph(CompareConfig config, const std::vector<std::vector<PairJob>>& plan,
                             const std::string& output_dir, const GraphOptions& options);

// The rules between the options and the run of `config` (parallel flags already applied): fuzzy match and layer
// mapping exclusive, either needs a bench; a bench --code_mapping needs a bench, none with a parallel merge;
// --shard not with --output_format db or --file_type json. RunGraph checks them first.
Status CheckGraphOptions(const CompareConfig& config, const GraphOptions& options);

}  // namespace graph_ascend::job
