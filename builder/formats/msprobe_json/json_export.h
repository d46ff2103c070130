// Exporting a .vis as msprobe's JSON .vis (reference §10), so that tools
// that read msprobe 1.2–8.1 output (tb_graph_ascend 8.x) read ours.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "formats/model/item_text.h"
#include "vis.pb.h"

namespace graph_ascend::vis {

// Writes `vis_path` as JSON to `json_path` (temporary file + rename).
Status ExportJson(const std::string& vis_path, const std::string& json_path);
// The same with msprobe 26's grades (0 / 0.5 / 1) as the precision_index of
// the nodes under GRADING_26.
Status ExportJson(const std::string& vis_path, const std::string& json_path, Grading grading);

}  // namespace graph_ascend::vis
