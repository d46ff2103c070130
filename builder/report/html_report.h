// The compare report (issue 32): one self-contained HTML file to attach to a
// bug report: the verdict, the path from the root to the first divergence on
// both sides, its comparison table, the next entries of the ranking, the layer
// profile (an inline SVG chart) and the runs' metadata as the .vis stores them.
// Everything is inlined (no script, no network reference), so it opens
// offline. `graph-ascend report` and the service's GetReport both render it.
#pragma once

#include <string>

#include "base/status.h"
#include "profile/layer_profile.h"
#include "runs/run_spread.h"
#include "verdict/verdict.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::report {

// What a report reads: a compare's meta, both sides' index, its details and verdict.
struct Input {
  std::string name;  // the file as the reader named it (shown, not opened)
  const vis::FileMeta* meta = nullptr;
  const vis::SideIndex* npu = nullptr;
  const vis::SideIndex* bench = nullptr;
  profile::DetailFn detail;
  const verdict::Verdict* verdict = nullptr;
  int depth = 0;  // the layer profile's (0: the repeated layers)
  // When the file is run `run`'s compare of a runs output (OUT/run<i>/, issue
  // 33 point 4): OUT/runs.json, or why it could not be read.
  const runs::Summary* runs = nullptr;
  int run = -1;
  std::string runs_error;
};

// How many entries of the ranking follow the first divergence in the report.
inline constexpr size_t kNextEntries = 10;

// The HTML. An Error when a detail cannot be read; a compare without a layer
// profile gets a line saying why instead of the chart.
Result<std::string> RenderReport(const Input& in);

// The same for a compare's .vis, read through `reader` (`path` names it in errors and in the report).
// An Error for a build or a structure compare. A file in OUT/run<i>/ with
// OUT/runs.json beside gets the runs' summary too.
Result<std::string> RenderReport(const vis::VisReader& reader, const std::string& path, int depth);

}  // namespace graph_ascend::report
