// More than two runs on the page (issue 33 point 4): `graph` with a list of
// runs writes OUT/run<i>/compare_*.vis (run i against the reference) and
// OUT/runs.json. When the open file lies in such a run<i>/ folder, FileInfo
// carries which run it shows, the other runs' files of the same step and rank,
// and where the runs first disagree there, so the page can show a run picker.
#pragma once

#include <string>

#include "graph_service.pb.h"
#include "log_dir.h"

namespace graph_ascend::service {

// Fills `out` when `relative` (a file under the log directory) is
// "[OUT/]run<i>/<name>" with "[OUT/]runs.json" beside run<i>/; leaves it empty
// otherwise. A runs.json that cannot be read sets out->error.
void FillRunsInfo(const LogDir& logdir, const std::string& relative, RunsInfo* out);

}  // namespace graph_ascend::service
