// What the graph command's flags say about a run beyond compare.json, in the words the planner, the jobs and the
// command line's flag table (cli/graph_flags.h) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graph_ascend::job {

// msprobe 26's parallel-merge flags (§12.3): one value each for a build,
// two ("npu bench") for a compare. rank_size, tp and pp go together.
struct ParallelFlags {
  std::vector<int> rank_size, tp, pp, vpp;
  std::vector<std::string> order;
  bool given() const { return !rank_size.empty() || !tp.empty() || !pp.empty() || !vpp.empty() || !order.empty(); }
};

// One share of a batch (`--shard I/N`): the work units whose shard is
// `index` among `count` (job/shard_job.h). count 0: the whole batch.
struct ShardSpec {
  uint32_t index = 0;
  uint32_t count = 0;
  bool given() const { return count > 0; }
};

// Whose flags a run was given: the error messages name them (-f / -fm, bench_path / -gp).
enum class Dialect { kGraph, kVisualize };

}  // namespace graph_ascend::job
