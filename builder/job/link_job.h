// `graph-ascend link OUTPUT_DIR`, once after every shard of a batch (job/shard_job.h): links the ranks of each step
// from the shards' summaries alone, writes the links into the files, removes the shard state.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "job/graph_job.h"

namespace graph_ascend::job {

struct LinkOptions {
  std::function<void(const std::string&)> log;  // -v
};

// Every unit's summary must be there. Returns the batch's files. Running it again after a failure is safe.
Result<GraphResult> RunLink(const std::string& output_dir, const LinkOptions& options);

}  // namespace graph_ascend::job
