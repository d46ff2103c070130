// The .vis.db writer: the 26.x schema with its seven indexes (vis_db.h).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "compare/legend.h"
#include "formats/model/foreign_item.h"
#include "formats/vis_db/sqlite_file_writer.h"
#include "formats/vis_db/vis_db.h"
#include "json/json_reader.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::formats {
namespace {

const char kCreateNodes[] =
    "CREATE TABLE tb_nodes (\n"
    "    id TEXT PRIMARY KEY,\n    graph_id TEXT NOT NULL,\n    node_order INTEGER NOT NULL,\n"
    "    node_name TEXT NOT NULL,\n    node_type TEXT NOT NULL,\n    up_node TEXT,\n    sub_nodes TEXT,\n"
    "    precision_index INTEGER,\n    overflow_level TEXT,\n    micro_step_id INTEGER NOT NULL,\n"
    "    matched_node_link TEXT,\n    stack_id TEXT,\n    parallel_merge_info TEXT,\n"
    "    matched_distributed TEXT,\n    modified INTEGER NOT NULL,\n    input_data TEXT,\n    output_data TEXT,\n"
    "    data_source TEXT,\n    dump_data_dir TEXT,\n    step INTEGER NOT NULL,\n    rank INTEGER NOT NULL,\n"
    "    is_distributed INTEGER\n)";
const char kCreateConfig[] =
    "CREATE TABLE tb_config (\n"
    "    id TEXT PRIMARY KEY,\n    graph_type TEXT NOT NULL,\n    task TEXT,\n    tool_tip TEXT,\n"
    "    micro_steps INTEGER,\n    overflow_check INTEGER,\n    node_colors TEXT NOT NULL,\n"
    "    rank_list TEXT NOT NULL,\n    step_list TEXT NOT NULL\n)";
const char kCreateStack[] = "CREATE TABLE tb_stack (\n    id TEXT PRIMARY KEY,\n    stack_info TEXT\n)";
// tb_nodes' columns, as the indexes name them.
enum NodeColumn {
  kId, kGraphId, kNodeOrder, kNodeName, kNodeType, kUpNode, kSubNodes, kPrecisionIndex, kOverflowLevel,
  kMicroStepId, kMatchedNodeLink, kStackId, kParallelMergeInfo, kMatchedDistributed, kModified, kInputData,
  kOutputData, kDataSource, kDumpDataDir, kStep, kRank, kIsDistributed, kNodeColumns
};
struct NodeIndex {
  const char* name;
  const char* sql;
  std::vector<int> columns;
};
const NodeIndex kNodeIndexes[] = {
    {"index1", "CREATE INDEX index1 ON tb_nodes (step, rank, data_source, up_node, node_order)",
     {kStep, kRank, kDataSource, kUpNode, kNodeOrder}},
    {"index2", "CREATE INDEX index2 ON tb_nodes (step, rank, data_source, node_name)",
     {kStep, kRank, kDataSource, kNodeName}},
    {"index3", "CREATE INDEX index3 ON tb_nodes (step, rank, data_source, node_order)",
     {kStep, kRank, kDataSource, kNodeOrder}},
    {"index4", "CREATE INDEX index4 ON tb_nodes (step, rank, node_order)", {kStep, kRank, kNodeOrder}},
    {"index5", "CREATE INDEX index5 ON tb_nodes (step, rank, micro_step_id, node_order)",
     {kStep, kRank, kMicroStepId, kNodeOrder}},
    {"index6", "CREATE INDEX index6 ON tb_nodes (step, rank, modified, matched_node_link)",
     {kStep, kRank, kModified, kMatchedNodeLink}},
    {"index7", "CREATE INDEX index7 ON tb_nodes (is_distributed)", {kIsDistributed}},
};

// A real in an INTEGER column, as SQLite's INTEGER affinity stores it: a
// whole number within int64 (its two ends excepted) becomes an integer.
SqlValue IntegerColumn(double x) {
  if (x > -9223372036854775808.0 && x < 9223372036854775808.0) {
    const auto i = static_cast<int64_t>(x);
    if (static_cast<double>(i) == x && i > std::numeric_limits<int64_t>::min() &&
        i < std::numeric_limits<int64_t>::max()) {
      return SqlValue::Integer(i);
    }
  }
  return SqlValue::Real(x);
}

// A file whose default grading is msprobe 26's (graph_visualize) goes into the
// db with those grades as precision_index and their legend, as msprobe 26.x
// writes it; other files with the 8.x index.
bool WritesGrades(const vis::FileMeta& meta) {
  return meta.grading() == vis::GRADING_26 && meta.grade_legend_size() > 0;
}

// JSON of the legend as msprobe's node_colors: {color: {"value": [lo, hi] | [], "description": d}}.
std::string ColorsJson(const vis::FileMeta& meta) {
  const auto& legend = WritesGrades(meta) ? meta.grade_legend() : meta.legend();
  if (legend.empty()) return "null";
  auto number = [](double x) {
    char buf[32];
    if (x == std::floor(x) && std::fabs(x) < 1e15) {
      snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(x));
    } else {
      snprintf(buf, sizeof(buf), "%.17g", x);
    }
    return std::string(buf);
  };
  std::string out = "{";
  for (int i = 0; i < legend.size(); ++i) {
    const vis::ColorBucket& b = legend[i];
    if (i) out += ", ";
    json::AppendQuoted(b.color(), &out, true);
    out += ": {\"value\": [";
    if (!b.unmatched()) out += number(b.lo()) + ", " + number(b.hi());
    out += "], \"description\": ";
    json::AppendQuoted(b.description(), &out, true);
    // The 26.x plugin reads accuracy_level for its pass / warning / error filter.
    if (b.name() == "pass" || b.name() == "warning" || b.name() == "error") {
      out += ", \"accuracy_level\": ";
      json::AppendQuoted(b.name(), &out, true);
    }
    out += "}";
  }
  return out + "}";
}

std::string TooltipJson(const vis::FileMeta& meta) {
  std::string out = "{";
  for (int i = 0; i < meta.tooltips_size(); ++i) {
    if (i) out += ", ";
    json::AppendQuoted(meta.tooltips(i).key(), &out, true);
    out += ": ";
    json::AppendQuoted(meta.tooltips(i).text(), &out, true);
  }
  return out + "}";
}

std::string IntListJson(const std::set<int64_t>& v) {
  std::string out = "[";
  for (int64_t x : v) {
    if (out.size() > 1) out += ", ";
    out += std::to_string(x);
  }
  return out + "]";
}

// One side of a graph as its rows need it; the details come node by node
// through `details`, from memory or streamed from a .vis.
struct SideSource {
  vis::Side id = vis::SIDE_NPU;
  const vis::SideIndex* index = nullptr;
  const vis::SideIndex* other = nullptr;  // the peer side's, for matched_node_link
  const vis::GraphMeta* meta = nullptr;
  const std::vector<std::vector<std::string>>* stacks = nullptr;
  // Calls `row` with each node's detail, in node order.
  std::function<Status(const std::function<Status(uint32_t, const vis::NodeDetail&)>& row)> details;
};

// The tables of the file, as SqliteFileWriter numbers them.
struct DbTables {
  SqliteFileWriter* file = nullptr;
  int nodes = 0, config = 0, stacks = 0;
};

// The rows of one graph's sides; `meta` is the graph's FileMeta (mode, grading).
class RowWriter {
 public:
  RowWriter(const DbTables& tables, const std::string& path) : tables_(tables), path_(path) {}

  Status WriteSide(const SideSource& side, const vis::FileMeta& meta, int64_t step, int64_t rank) {
    const vis::SideIndex& idx = *side.index;
    const vis::SideIndex& other = *side.other;
    const std::string source = side.id == vis::SIDE_NPU ? "NPU" : "Bench";
    const std::string graph_id = source + "_" + std::to_string(step) + "_" + std::to_string(rank);
    // Every node has a stack row in msprobe's files; nodes without one share an empty list.
    const size_t empty_stack = side.stacks->size();
    bool empty_used = false;
    const bool grades = WritesGrades(meta) && idx.grade.size() == idx.size();
    uint32_t expected = 0;
    // node_order is our node order: dump order, as msprobe's.
    GA_RETURN_IF_ERROR(side.details([&](uint32_t n, const vis::NodeDetail& d) -> Status {
      if (n != expected || n >= idx.size()) {
        return Error{path_, "node " + std::to_string(n), "details out of node order"};
      }
      ++expected;
      // The texts are views of graph_id, source and the row buffers below, which
      // live until the row is appended and are rewritten only for the next row.
      SqlValue* v = row_;
      name_.assign(idx.Name(n));
      id_.assign(graph_id).append("_").append(name_);
      v[kId] = SqlValue::Text(id_);
      v[kGraphId] = SqlValue::Text(graph_id);
      v[kNodeOrder] = SqlValue::Integer(static_cast<int64_t>(n));
      v[kNodeName] = SqlValue::Text(name_);
      type_ = std::to_string(idx.node_type[n]);
      v[kNodeType] = SqlValue::Text(type_);
      parent_.clear();
      if (idx.parent[n] >= 0) parent_.assign(idx.Name(static_cast<uint32_t>(idx.parent[n])));
      v[kUpNode] = SqlValue::Text(parent_);
      // sub_nodes: StringListJson of the children's names, "" for none.
      children_.clear();
      for (uint32_t c = idx.child_offset[n]; c < idx.child_offset[n + 1]; ++c) {
        children_.append(c == idx.child_offset[n] ? "[" : ", ");
        json::AppendQuoted(idx.Name(idx.children[c]), &children_, true);
      }
      if (!children_.empty()) children_.push_back(']');
      v[kSubNodes] = SqlValue::Text(children_);
      double p = grades ? idx.grade[n] : idx.precision[n];
      // A whole number (an 8.x index, a 26 grade, or a float one) is stored as an integer.
      v[kPrecisionIndex] = side.id != vis::SIDE_NPU || std::isnan(p) ? SqlValue::Null() : IntegerColumn(p);
      const char* level = OverflowName(idx.overflow[n]);
      v[kOverflowLevel] = level ? SqlValue::Text(level) : SqlValue::Null();
      // A node's micro step is its top-level ancestor's (our .vis stores it
      // there only); msprobe 26's plugin filters every row by micro_step_id.
      int32_t micro = idx.micro_step[n];
      for (int32_t up = idx.parent[n]; micro < 0 && up >= 0; up = idx.parent[up]) micro = idx.micro_step[up];
      v[kMicroStepId] = SqlValue::Integer(std::max<int32_t>(0, micro));
      // matched_node_link: StringListJson of the match's ancestors and the match, "[]" for none.
      link_.assign("[");
      int32_t m = idx.matched[n];
      if (m >= 0 && static_cast<uint32_t>(m) < other.size()) {
        for (uint32_t a : other.Ancestors(static_cast<uint32_t>(m))) {
          json::AppendQuoted(other.Name(a), &link_, true);
          link_.append(", ");
        }
        json::AppendQuoted(other.Name(static_cast<uint32_t>(m)), &link_, true);
      }
      link_.push_back(']');
      v[kMatchedNodeLink] = SqlValue::Text(link_);
      size_t stack = d.stack_id() >= 0 && static_cast<size_t>(d.stack_id()) < side.stacks->size()
                         ? static_cast<size_t>(d.stack_id())
                         : empty_stack;
      if (stack == empty_stack) empty_used = true;
      stack_.assign(graph_id).append("_").append(std::to_string(stack));
      v[kStackId] = SqlValue::Text(stack_);
      list_.assign(d.parallel_merge_info().begin(), d.parallel_merge_info().end());
      merge_ = list_.empty() ? "" : StringListJson(list_);
      v[kParallelMergeInfo] = SqlValue::Text(merge_);
      distributed_ = DistributedJson(d);
      v[kMatchedDistributed] = SqlValue::Text(distributed_);
      v[kModified] = SqlValue::Integer(0);
      input_.clear();
      AppendItemsJson(d.input(), meta.mode(), name_, &input_);
      v[kInputData] = SqlValue::Text(input_);
      output_.clear();
      AppendItemsJson(d.output(), meta.mode(), name_, &output_);
      v[kOutputData] = SqlValue::Text(output_);
      v[kDataSource] = SqlValue::Text(source);
      v[kDumpDataDir] = side.meta->has_dump_data_dir() ? SqlValue::Text(side.meta->dump_data_dir()) : SqlValue::Null();
      v[kStep] = SqlValue::Integer(step);
      v[kRank] = SqlValue::Integer(rank);
      v[kIsDistributed] = SqlValue::Integer(name_.rfind("Distributed.", 0) == 0 ? 1 : 0);
      Status s = tables_.file->Append(tables_.nodes, row_);
      if (!s.ok()) {
        Error& e = s.error();
        e.where = "table tb_nodes, node '" + name_ + "'" + (e.where.empty() ? "" : ", ") + e.where;
      }
      return s;
    }));
    if (expected != idx.size()) {
      return Error{path_, source + " node details",
                   std::to_string(expected) + " details for " + std::to_string(idx.size()) + " nodes"};
    }
    for (size_t k = 0; k <= side.stacks->size(); ++k) {
      if (k == empty_stack && !empty_used) break;
      const std::string id = graph_id + "_" + std::to_string(k);
      const std::string frames =
          StringListJson(k < side.stacks->size() ? (*side.stacks)[k] : std::vector<std::string>{});
      const SqlValue row[] = {SqlValue::Text(id), SqlValue::Text(frames)};
      GA_RETURN_IF_ERROR(tables_.file->Append(tables_.stacks, row));
    }
    return Status::Ok();
  }

 private:
  const DbTables& tables_;
  const std::string& path_;
  SqlValue row_[kNodeColumns];
  std::string name_;               // reused from row to row
  // The row's texts, reused from row to row (viewed by row_ until the row is appended).
  std::string id_, type_, parent_, children_, link_, stack_, merge_, distributed_, input_, output_;
  std::vector<std::string> list_;  // reused from row to row
};

// The details of a side held in memory.
SideSource InMemory(const GraphFile& g, vis::Side id) {
  SideSource s;
  s.id = id;
  const GraphSide& side = g.side(id);
  s.index = &side.index;
  s.other = &g.side(id == vis::SIDE_NPU ? vis::SIDE_BENCH : vis::SIDE_NPU).index;
  s.meta = id == vis::SIDE_NPU ? &g.meta.npu() : &g.meta.bench();
  s.stacks = &side.stacks;
  s.details = [&side](const std::function<Status(uint32_t, const vis::NodeDetail&)>& row) -> Status {
    for (uint32_t n = 0; n < side.details.size(); ++n) GA_RETURN_IF_ERROR(row(n, side.details[n]));
    return Status::Ok();
  };
  return s;
}

// A side of a graph-ascend .vis: the index and stacks read whole, the
// details one stored block at a time.
struct VisSide {
  vis::SideIndex index;
  std::vector<std::vector<std::string>> stacks;
};

Status ReadVisSide(const vis::VisReader& reader, vis::Side id, VisSide* out) {
  auto index = vis::LoadSideIndex(reader, id);
  if (!index.ok()) return index.error();
  out->index = std::move(*index);
  for (const vis::SectionRef* ref : reader.Sections(vis::SECTION_STACKS, id)) {
    vis::StackChunk chunk;
    GA_RETURN_IF_ERROR(reader.ReadSection(*ref, &chunk));
    for (const vis::Stack& s : chunk.stack()) out->stacks.emplace_back(s.frame().begin(), s.frame().end());
  }
  return Status::Ok();
}

// `memory`, when not empty, gives the details in place of the file's blocks.
SideSource Streamed(const vis::VisReader& reader, const vis::FileMeta& meta, VisSide* sides, vis::Side id,
                    const VisDbWriter::NodeDetails& memory) {
  SideSource s;
  s.id = id;
  const int at = id == vis::SIDE_NPU ? 0 : 1;
  s.index = &sides[at].index;
  s.other = &sides[1 - at].index;
  s.meta = id == vis::SIDE_NPU ? &meta.npu() : &meta.bench();
  s.stacks = &sides[at].stacks;
  const vis::SideIndex* index = s.index;
  if (memory) {
    s.details = [&memory, index, id](const std::function<Status(uint32_t, const vis::NodeDetail&)>& row) -> Status {
      vis::NodeDetail d;  // reused: refilled node after node, it allocates little
      for (uint32_t n = 0; n < index->size(); ++n) {
        memory(id, n, &d);
        GA_RETURN_IF_ERROR(row(n, d));
      }
      return Status::Ok();
    };
    return s;
  }
  s.details = [&reader, index, id](const std::function<Status(uint32_t, const vis::NodeDetail&)>& row) -> Status {
    vis::NodeDetailBlock block;  // reused: a block refilled allocates little
    uint32_t next = 0;
    for (const vis::SectionRef* ref : reader.Sections(vis::SECTION_NODE_DETAILS, id)) {
      GA_RETURN_IF_ERROR(reader.ReadSection(*ref, &block));
      if (block.first() != next) {
        return Error{reader.path(), "detail block at node " + std::to_string(block.first()),
                     "damaged .vis file (detail blocks out of order)"};
      }
      vis::ResolveKeys([index](uint32_t n) { return n < index->size() ? index->Name(n) : std::string_view(); },
                       &block);
      for (const vis::NodeDetail& d : block.detail()) GA_RETURN_IF_ERROR(row(next++, d));
    }
    if (next != index->size()) {
      return Error{reader.path(), "node details",
                   "damaged .vis file (" + std::to_string(next) + " details for " + std::to_string(index->size()) +
                       " nodes)"};
    }
    return Status::Ok();
  };
  return s;
}

}  // namespace

struct VisDbWriter::Impl {
  std::string path;
  std::unique_ptr<SqliteFileWriter> file;  // its temporary file goes with it unless committed
  DbTables tables;
  std::set<std::pair<int64_t, int64_t>> keys;
  std::set<int64_t> steps, ranks;
  bool first = true;
  bool compare = false;
  vis::FileMeta meta;  // the first graph's, for tb_config

  explicit Impl(std::string p) : path(std::move(p)) {}

  // The graph's step and rank, checked against those written; the first graph's meta kept for tb_config.
  Status Key(const vis::FileMeta& m, bool is_compare, int64_t* step, int64_t* rank) {
    *step = FolderNumber(m.step());
    *rank = FolderNumber(m.rank());
    if (!keys.insert({*step, *rank}).second) {
      return Error{path, "step " + std::to_string(*step) + ", rank " + std::to_string(*rank),
                   "two graphs for the same step and rank"};
    }
    steps.insert(*step);
    ranks.insert(*rank);
    if (first) {
      meta = m;
      compare = is_compare;
      first = false;
    }
    return Status::Ok();
  }
};

VisDbWriter::VisDbWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

VisDbWriter::~VisDbWriter() = default;

Result<std::unique_ptr<VisDbWriter>> VisDbWriter::Create(const std::string& path) {
  auto impl = std::make_unique<Impl>(path);
  // The file is written as SQLite's format, not through SQLite: tables stream
  // page by page and each index is one sort at Commit (issue 29). 64 KiB
  // pages, as SQLite wrote them before: a row (items and all, 2 KB on
  // average) lies on its page instead of in overflow pages.
  SqliteFileWriter::Options options;
  options.page_size = 65536;
  // The index keys of a 10^5-node-a-side graph (~100 MB) sorted in memory: a spill and its merge were
  // ~5 % of the db path's CPU there, and the peak stays within 2.5x the .vis path's.
  options.sort_memory = size_t{128} << 20;
  auto file = SqliteFileWriter::Create(path, options);
  if (!file.ok()) return file.error();
  impl->file = std::move(*file);
  SqliteFileWriter& f = *impl->file;
  auto nodes = f.AddTable("tb_nodes", kCreateNodes, kNodeColumns, kId);
  if (!nodes.ok()) return nodes.error();
  auto config = f.AddTable("tb_config", kCreateConfig, 9, 0);
  if (!config.ok()) return config.error();
  auto stacks = f.AddTable("tb_stack", kCreateStack, 2, 0);
  if (!stacks.ok()) return stacks.error();
  for (const NodeIndex& i : kNodeIndexes) GA_RETURN_IF_ERROR(f.AddIndex(i.name, *nodes, i.sql, i.columns));
  impl->tables = DbTables{&f, *nodes, *config, *stacks};
  return std::unique_ptr<VisDbWriter>(new VisDbWriter(std::move(impl)));
}

Status VisDbWriter::Add(const GraphFile& g) {
  Impl& m = *impl_;
  int64_t step, rank;
  GA_RETURN_IF_ERROR(m.Key(g.meta, g.compare(), &step, &rank));
  RowWriter rows(m.tables, m.path);
  GA_RETURN_IF_ERROR(rows.WriteSide(InMemory(g, vis::SIDE_NPU), g.meta, step, rank));
  if (g.compare()) GA_RETURN_IF_ERROR(rows.WriteSide(InMemory(g, vis::SIDE_BENCH), g.meta, step, rank));
  return Status::Ok();
}

Status VisDbWriter::AddVis(const std::string& vis_path, std::optional<vis::Grading> grading,
                           const NodeDetails& details) {
  Impl& m = *impl_;
  auto reader = vis::VisReader::Open(vis_path);
  if (!reader.ok()) return reader.error();
  vis::FileMeta meta = (*reader)->meta();
  if (grading) meta.set_grading(*grading);
  const bool compare = meta.kind() == vis::GRAPH_COMPARE;
  VisSide sides[2];
  GA_RETURN_IF_ERROR(ReadVisSide(**reader, vis::SIDE_NPU, &sides[0]));
  if (compare) GA_RETURN_IF_ERROR(ReadVisSide(**reader, vis::SIDE_BENCH, &sides[1]));
  int64_t step, rank;
  GA_RETURN_IF_ERROR(m.Key(meta, compare, &step, &rank));
  RowWriter rows(m.tables, m.path);
  GA_RETURN_IF_ERROR(rows.WriteSide(Streamed(**reader, meta, sides, vis::SIDE_NPU, details), meta, step, rank));
  if (compare) {
    GA_RETURN_IF_ERROR(rows.WriteSide(Streamed(**reader, meta, sides, vis::SIDE_BENCH, details), meta, step, rank));
  }
  return Status::Ok();
}

Status VisDbWriter::Commit() {
  Impl& m = *impl_;
  const std::string& path = m.path;
  if (m.first) return Error{path, "", "no graph to write"};
  const vis::FileMeta& meta = m.meta;
  const bool compare = m.compare;
  const std::string task = compare ? compare::TaskName(meta.mode()) : "";
  const std::string tooltips = TooltipJson(meta);
  const std::string colors = ColorsJson(meta);
  const std::string ranks = IntListJson(m.ranks);
  const std::string steps = IntListJson(m.steps);
  const SqlValue config[] = {
      SqlValue::Text("1"),
      SqlValue::Text(compare ? "compare" : "build"),
      SqlValue::Text(task),
      compare && meta.tooltips_size() > 0 ? SqlValue::Text(tooltips) : SqlValue::Null(),
      SqlValue::Integer(std::max<uint32_t>(1, meta.micro_steps())),
      SqlValue::Integer(meta.overflow_checked() ? 1 : 0),
      SqlValue::Text(colors),
      SqlValue::Text(ranks),
      SqlValue::Text(steps),
  };
  GA_RETURN_IF_ERROR(m.file->Append(m.tables.config, config));
  // The seven indexes and the primary keys' are sorted and written here, then the rename.
  return m.file->Commit();
}

Status WriteVisDb(const std::vector<const GraphFile*>& graphs, const std::string& path) {
  if (graphs.empty()) return Error{path, "", "no graph to write"};
  auto writer = VisDbWriter::Create(path);
  if (!writer.ok()) return writer.error();
  for (const GraphFile* g : graphs) GA_RETURN_IF_ERROR((*writer)->Add(*g));
  return (*writer)->Commit();
}

}  // namespace graph_ascend::formats
