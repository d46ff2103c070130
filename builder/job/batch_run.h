// The one-process batch (issue 31): a batch's (step, rank) pairs built
// several at once, each written as soon as it is compared and then freed, the
// cross-rank links added afterwards from each rank's communication nodes
// (distributed::ScanRank: small), as the shards and `link` do. Memory then
// holds the pairs in flight, not the batch.
//
// Pairs run up to `jobs` at once (GraphOptions::jobs; default the cores the
// process may use), a pair starting only while the estimates of those in
// flight leave room in the memory budget (GraphOptions::max_memory; default
// kFreeShare of what is free); one always runs. The cores are shared among
// the pairs in flight. The files do not depend on either.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "plan/folder_plan.h"
#include "job/graph_job.h"

namespace graph_ascend::job {

// The share of the free memory a batch plans for by default.
inline constexpr double kFreeShare = 0.75;

// A pair's peak memory, estimated from its dump.json bytes (both sides): the
// graphs, dump arrays and write buffers come to about this many times the
// dumps (measured at 10^5 nodes a side: docs/SCALE.md).
inline constexpr double kPeakPerDumpByte = 2.0;

// Runs every pair of `plan` (each step's ranks linked when it has several)
// into `output_dir`. On an error nothing of this run is left there; the
// error is the one the first failing pair in plan order gave.
Result<GraphResult> RunBatch(const CompareConfig& config, const std::vector<std::vector<PairJob>>& plan,
                             const std::string& output_dir, const GraphOptions& options);

// How many pairs may run at once: `jobs` (0: `cores`), at most `pairs`, at least 1.
int BatchJobs(int jobs, int cores, size_t pairs);

}  // namespace graph_ascend::job
