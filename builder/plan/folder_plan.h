// The folders of a run planned into output files (reference §2.4, §2.5, §9):
// what a dump folder holds (files, rank, step or stage folders), how the two
// sides' folders are paired, and the name of each file to write.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "plan/compare_config.h"

namespace graph_ascend::job {

// kStages: folders named by a framework above msprobe's layout, none of them a
// rank or step folder (verl: step_<N>/<stage>/step0/rank0, docs/FORMAT.md).
enum class DirKind { kFiles, kRanks, kSteps, kStages };

// What `dir` holds (§2.4 step 3, and kStages): an Error naming it when it is
// missing, a file, empty, or a mix of msprobe's layouts.
Result<DirKind> ClassifyDir(const std::string& dir);

// The entries of a directory (confined to --logdir), sorted.
Result<std::vector<std::string>> SortedEntries(const std::string& dir);

// One output file: a build of npu_dir, or a compare of npu_dir with bench_dir.
struct PairJob {
  std::string npu_dir;
  std::string bench_dir;  // empty for a build
  std::string step;       // "step0" or ""
  std::string rank;       // "rank1", "rank" or ""
  std::string stage;      // "step_1/actor_update", "" outside a stages layout
  int rank_number = 0;
  std::string output_name;
};

// The jobs of a run, grouped by step (ranks of one step are linked
// together, §8); in a stages layout by stage and step, the stages both sides
// have in common, and the stage label after the time stamp in the output
// name: compare_step0_rank0_<ts>_step_1.actor_update.vis. `timestamp` is
// YYYYmmddHHMMSS.
Result<std::vector<std::vector<PairJob>>> PlanJobs(const CompareConfig& config, const std::string& timestamp);

// A rank folder of a parallel-merge run.
struct RankFolder {
  std::string dir;  // the folder
  int rank = 0;     // rank3 -> 3, rank -> 0
};

// One step of a parallel-merge run (§9, §2.5): every rank of each side is
// merged, and the i-th merged npu graph is compared with the i-th bench one.
struct MergeStepJob {
  std::string step;            // "step0" or ""
  std::string npu_dir;         // the folder holding the rank folders
  std::string bench_dir;       // empty for a build
  std::vector<RankFolder> npu_ranks;
  std::vector<RankFolder> bench_ranks;
};

// The steps of a parallel-merge run. The two sides may have different rank
// folders; both must be rank<N> folders (directly or under step<N>).
Result<std::vector<MergeStepJob>> PlanMergeJobs(const CompareConfig& config);

// The merged file names of §10.1: build[_step]_merged<i>_<ts>.vis,
// compare[_step]_merged<i>_<ts>.vis.
std::string MergedOutputName(bool compare, const std::string& step, size_t index, const std::string& timestamp);

}  // namespace graph_ascend::job
