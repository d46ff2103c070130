// Any graph file graph-ascend reads, by its content: our .vis, msprobe's
// .vis.db (SQLite) or msprobe's JSON .vis.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "formats/model/graph_file.h"

namespace graph_ascend::formats {

enum class FileFormat { kVis, kVisDb, kMsprobeJson };

// Looks at the first bytes: the .vis magic, "SQLite format 3", or '{'.
Result<FileFormat> DetectFormat(const std::string& path);
const char* FormatName(FileFormat f);  // "graph-ascend .vis", "msprobe .vis.db", "msprobe JSON .vis"

// Reads every graph of a file of any format: one for a .vis or a JSON .vis,
// one per (step, rank) for a .vis.db (FileMeta step/rank set when there are
// several, see ReadVisDb).
Result<std::vector<GraphFile>> ReadGraphs(const std::string& path);

// Converts every graph of a file of any format into a graph-ascend .vis each
// (a .vis.db streamed, see ConvertVisDb): `out_path` names the file of a graph
// from its FileMeta, "" to skip it. Returns the files written, in ReadGraphs' order; on error
// none is left.
Result<std::vector<std::string>> ConvertGraphs(const std::string& path,
                                               const std::function<std::string(const vis::FileMeta&)>& out_path,
                                               const std::function<void(double)>& progress = {});

// The file name graph-ascend's batch gives a graph: "compare_step0_rank1_<stamp>.vis",
// "build_<stamp>.vis" (step and rank from its FileMeta).
std::string BatchFileName(const vis::FileMeta& meta, const std::string& stamp);

}  // namespace graph_ascend::formats

namespace graph_ascend::formats {

// Writes the graphs of each input (any format) into one .vis.db (temporary
// file + rename): a graph-ascend .vis streamed block by block
// (VisDbWriter::AddVis), msprobe's files read whole. The graphs' step/rank
// must differ.
// `grading`, when given, replaces each file's default grading: GRADING_26
// writes msprobe 26's grades as precision_index (files that store them).
Status ExportVisDb(const std::vector<std::string>& inputs, const std::string& db_path,
                   std::optional<vis::Grading> grading = std::nullopt);

}  // namespace graph_ascend::formats
