// Writing a side back as a msprobe dump directory: construct.json, dump.json
// and stack.json, the files `graph_visualize --file_type json` writes for
// each merged graph of a parallel-merge build (msprobe 26.x).
//
// The files read back as the same graph: top-level nodes have a null parent
// and API collections (nodes the builder makes) are left out, their members
// given the collection's parent. dump.json holds each node's items as the
// nested input_args / input_kwargs / output / parameters of a dump entry,
// with the side's (merged) statistics, "is_merged": true and each merged
// node's parallel_merge_info.
#pragma once

#include <string>

#include "base/status.h"
#include "graph/graph_builder.h"

namespace graph_ascend::graph {

// Writes the three files into `dir` (created if missing), each through a
// temporary file renamed into place; on error none of them is left.
Status WriteDumpDirectory(const Side& side, const std::string& dir);

}  // namespace graph_ascend::graph
