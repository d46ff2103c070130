// A batch built as shards, then linked (docs/SCALE.md):
//
//   graph ... --shard I/N    each shard, on any host: builds its share of the
//                            batch's work units and writes their .vis files
//                            without cross-rank links, and per unit a summary
//                            of its communication nodes, into
//                            OUT_DIR/.graph-ascend-shards/ (docs/FORMAT.md);
//   graph-ascend link OUT    once, after every shard: links the ranks of each
//                            step from the summaries alone, writes the links
//                            into the files, removes the state (job/link_job.h).
//
// The files then hold the graph content of the one-process batch. A work unit
// is a (step, rank) pair, or a whole step of a parallel merge (its ranks are
// merged together). The first shard to start records the batch (time stamp,
// inputs, options, units); the others take its time stamp and refuse another
// batch. A shard that fails or is killed is run again as it was.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "job/graph_job.h"
#include "plan/compare_config.h"

namespace graph_ascend::job {

// The shard of each unit, in [0, count): the heaviest unit first, each to the
// least loaded shard (ties: the lower shard, then the earlier unit). Every
// unit has exactly one shard; the same weights give the same answer.
std::vector<uint32_t> AssignShards(const std::vector<uint64_t>& weights, uint32_t count);

// Builds shard `options.shard` of the batch of `config` (parallel flags
// already applied) into `output_dir`. On an error, this run's files are
// removed and the other shards' are left.
Result<GraphResult> RunShard(const CompareConfig& config, const std::string& output_dir, const GraphOptions& options);

// The folder of the shard state inside an output folder.
std::string ShardStateDir(const std::string& output_dir);

}  // namespace graph_ascend::job
