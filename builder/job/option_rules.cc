// The rules between the graph command's options and the run they apply to, checked in one place: before,
// two commands, the planner, the shard runner and the merge planner each checked some of them.
#include <string>

#include "job/graph_job.h"
#include "plan/folder_plan.h"

namespace graph_ascend::job {

Status CheckGraphOptions(const CompareConfig& config, const GraphOptions& options) {
  bool visualize = options.dialect == Dialect::kVisualize;
  const char* fuzzy = visualize ? "-fm (fuzzy match)" : "-f (fuzzy match)";
  if (options.fuzzy_match && options.layer_mapping) {
    return Error{"", "", std::string(fuzzy) + " and -lm (layer mapping) cannot be used together: pick one matching rule"};
  }
  bool compare = !config.bench_path.empty();
  if (!compare && (options.fuzzy_match || options.layer_mapping)) {
    std::string rule = options.fuzzy_match ? fuzzy : "-lm (layer mapping)";
    // graph_visualize names its own flag and no compare.json (as msprobe 26's arguments).
    if (visualize) return Error{"", "", rule + " pairs nodes of two runs: it needs -gp/--golden_path (this is a build)"};
    return Error{config.path, "", rule + " pairs nodes of two runs: it needs a bench_path (this is a build)"};
  }
  if (options.bench_code_mapping && !compare) {
    return Error{options.bench_code_mapping->path, "",
                 "a second --code_mapping file is for the bench side, and this is a build"};
  }
  if (options.code_mapping && config.parallel_merge) {
    return Error{options.code_mapping->path, "", "--code_mapping cannot be used with a parallel merge"};
  }
  if (options.shard.given() && options.output_format == OutputFormat::kVisDb) {
    return Error{"", "flag --shard",
                 "cannot be used with --output_format db (one file of every rank): build the shards as .vis, link "
                 "them, then write the .vis.db with graph-ascend export --format db"};
  }
  if (options.shard.given() && options.output_format == OutputFormat::kMergedDump) {
    return Error{"", "flag --shard", "cannot be used with --file_type json (a merge build is one share)"};
  }
  // A .vis.db keys its graphs by step and rank alone; the stages of one step and rank would collide.
  if (options.output_format == OutputFormat::kVisDb) {
    auto kind = ClassifyDir(config.npu_path);
    if (kind.ok() && *kind == DirKind::kStages) {
      return Error{config.npu_path, "", "holds stage folders (docs/FORMAT.md \"Stages\"), and a .vis.db keys its "
                                        "graphs by step and rank alone: write .vis files (the default), or point at "
                                        "one stage"};
    }
  }
  return Status::Ok();
}

}  // namespace graph_ascend::job
