#include "formats/foreign_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/mapped_file.h"
#include "formats/msprobe_json/msprobe_json.h"
#include "formats/vis_db/vis_db.h"
#include "vis/vis_file.h"
#include "vis_writer/ranking_rewrite.h"

namespace graph_ascend::formats {

Result<FileFormat> DetectFormat(const std::string& path) {
  auto read = ReadFileHead(path, 16);
  if (!read.ok()) return read.error();
  const char* head = read->data();
  const size_t got = read->size();
  if (got >= sizeof(vis::kMagic) && memcmp(head, vis::kMagic, sizeof(vis::kMagic)) == 0) return FileFormat::kVis;
  if (got >= 15 && memcmp(head, "SQLite format 3", 15) == 0) return FileFormat::kVisDb;
  for (size_t i = 0; i < got; ++i) {
    if (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t') continue;
    if (head[i] == '{') return FileFormat::kMsprobeJson;
    break;
  }
  if (got == 0) return Error{path, "byte 0", "empty file: not a graph file"};
  return Error{path, "byte 0",
               "not a graph file (neither a graph-ascend .vis, an SQLite .vis.db nor a JSON .vis of msprobe)"};
}

const char* FormatName(FileFormat f) {
  switch (f) {
    case FileFormat::kVis: return "graph-ascend .vis";
    case FileFormat::kVisDb: return "msprobe .vis.db";
    case FileFormat::kMsprobeJson: return "msprobe JSON .vis";
  }
  return "";
}

Result<std::vector<GraphFile>> ReadGraphs(const std::string& path) {
  auto format = DetectFormat(path);
  if (!format.ok()) return format.error();
  std::vector<GraphFile> out;
  switch (*format) {
    case FileFormat::kVis: {
      auto g = ReadVisFile(path);
      if (!g.ok()) return g.error();
      out.push_back(std::move(*g));
      break;
    }
    case FileFormat::kMsprobeJson: {
      auto g = ReadMsprobeJson(path);
      if (!g.ok()) return g.error();
      out.push_back(std::move(*g));
      break;
    }
    case FileFormat::kVisDb: {
      auto graphs = ReadVisDb(path);
      if (!graphs.ok()) return graphs.error();
      for (DbGraph& g : *graphs) out.push_back(std::move(g.graph));
      break;
    }
  }
  return out;
}

Result<std::vector<std::string>> ConvertGraphs(const std::string& path,
                                               const std::function<std::string(const vis::FileMeta&)>& out_path,
                                               const std::function<void(double)>& progress) {
  auto format = DetectFormat(path);
  if (!format.ok()) return format.error();
  if (*format == FileFormat::kVisDb) return ConvertVisDb(path, out_path, progress);
  auto graphs = ReadGraphs(path);
  if (!graphs.ok()) return graphs.error();
  std::vector<std::string> written;
  for (GraphFile& g : *graphs) {
    std::string out = out_path(g.meta);
    if (out.empty()) continue;
    Status st = WriteVisFile(std::move(g), out);
    // A compare gets its divergence ranking from the details just written, as a build ranks.
    if (st.ok()) {
      auto ranked = vis::AddRanking(out);
      if (!ranked.ok()) {
        unlink(out.c_str());
        st = ranked.error();
      }
    }
    if (!st.ok()) {
      for (const std::string& w : written) unlink(w.c_str());
      return st.error();
    }
    written.push_back(std::move(out));
    if (progress) progress(static_cast<double>(&g - graphs->data() + 1) / static_cast<double>(graphs->size()));
  }
  return written;
}

std::string BatchFileName(const vis::FileMeta& meta, const std::string& stamp) {
  std::string name = meta.kind() == vis::GRAPH_COMPARE ? "compare" : "build";
  if (!meta.step().empty()) name += "_" + meta.step();
  if (!meta.rank().empty()) name += "_" + meta.rank();
  return name + "_" + stamp + ".vis";
}

}  // namespace graph_ascend::formats

namespace graph_ascend::formats {

Status ExportVisDb(const std::vector<std::string>& inputs, const std::string& db_path,
                   std::optional<vis::Grading> grading) {
  if (inputs.empty()) return Error{db_path, "", "no graph to write"};
  auto writer = VisDbWriter::Create(db_path);
  if (!writer.ok()) return writer.error();
  for (const std::string& in : inputs) {
    auto format = DetectFormat(in);
    if (!format.ok()) return format.error();
    // Our .vis streams block by block; msprobe's files are read whole (small: msprobe writes them).
    if (*format == FileFormat::kVis) {
      GA_RETURN_IF_ERROR((*writer)->AddVis(in, grading));
      continue;
    }
    auto read = ReadGraphs(in);
    if (!read.ok()) return read.error();
    for (GraphFile& g : *read) {
      if (grading) g.meta.set_grading(*grading);
      GA_RETURN_IF_ERROR((*writer)->Add(g));
    }
  }
  return (*writer)->Commit();
}

}  // namespace graph_ascend::formats
