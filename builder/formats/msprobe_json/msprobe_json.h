// msprobe's JSON .vis (msprobe 1.2-8.2.0, reference §10): build files with
// root/node at the top level, compare files with NPU and Bench graphs,
// ToolTip, Colors, task, MicroSteps, OverflowCheck, and the match maps the
// tb_graph_ascend plugin saves (npu_match_nodes / bench_match_nodes).
//
// The writer of this format is vis::ExportJson (builder/vis/json_export.h).
#pragma once

#include <string>

#include "base/status.h"
#include "formats/model/graph_file.h"

namespace graph_ascend::formats {

// Reads a JSON .vis. Errors name the file and the line, column and byte
// offset (a file cut in half fails at its end), or the node concerned.
Result<GraphFile> ReadMsprobeJson(const std::string& path);

}  // namespace graph_ascend::formats
