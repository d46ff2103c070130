// compare.json (reference §2.3): the dumps to build or compare (npu_path and
// bench_path, or more than two runs) and the options, paths resolved; what
// their folders hold is planned by plan/folder_plan.h.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "plan/parallel_params.h"

namespace graph_ascend::job {

using merge::ParallelParams;

// How the rank and step folders of the two sides are paired.
enum class FolderPairing {
  kSame,       // msprobe graph (8.x): every entry is rank<N>/step<N> and both sides have the same folders
  kIntersect,  // msprobe graph_visualize (26.x): other entries are skipped and the common folders are paired
};

struct CompareConfig {
  std::string path;        // the compare.json; the -tp directory for graph_visualize
  std::string npu_path;    // resolved
  std::string bench_path;  // resolved; empty for a build
  bool is_print_compare_log = true;
  bool parallel_merge = false;
  ParallelParams npu_parallel;
  ParallelParams bench_parallel;
  bool has_bench_parallel = false;
  FolderPairing pairing = FolderPairing::kSame;
  // More than two runs ({"runs": [...], "reference": i} instead of npu_path
  // and bench_path): each run is compared with the reference (resolved paths).
  std::vector<std::string> runs;
  int reference = 0;
};

// Reads compare.json. Relative paths are resolved against the directory of
// compare.json, falling back to the working directory (msprobe's rule). Bad
// input is an Error naming the file and the key (or the byte offset).
Result<CompareConfig> ReadCompareConfig(const std::string& path);

// The configuration of `graph_visualize -tp TARGET [-gp GOLDEN]`: paths as
// given (relative to the working directory, as msprobe 26 takes them), folders
// paired by intersection. Checks that both are directories.
Result<CompareConfig> VisualizeConfig(const std::string& target, const std::string& golden);

}  // namespace graph_ascend::job
