// `graph` over more than two runs ({"runs": [...], "reference": i}): each run
// compared with the reference into <output>/run<i>/, and where the runs first
// disagree into <output>/runs.json (runs/run_spread.h).
#pragma once

#include <string>

#include "base/status.h"
#include "job/graph_job.h"

namespace graph_ascend::job {

Result<GraphResult> RunRuns(const CompareConfig& config, const std::string& output_dir, const GraphOptions& options);

}  // namespace graph_ascend::job
