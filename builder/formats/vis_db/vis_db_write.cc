// The .vis.db writer: the 26.x schema with its seven indexes (vis_db.h).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>

#include "base/temp_files.h"
#include "compare/legend.h"
#include "formats/model/foreign_item.h"
#include "formats/vis_db/sqlite_db.h"
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
    "    is_distributed INTEGER\n);";
const char kCreateConfig[] =
    "CREATE TABLE tb_config (\n"
    "    id TEXT PRIMARY KEY,\n    graph_type TEXT NOT NULL,\n    task TEXT,\n    tool_tip TEXT,\n"
    "    micro_steps INTEGER,\n    overflow_check INTEGER,\n    node_colors TEXT NOT NULL,\n"
    "    rank_list TEXT NOT NULL,\n    step_list TEXT NOT NULL\n);";
const char kCreateStack[] = "CREATE TABLE tb_stack (\n    id TEXT PRIMARY KEY,\n    stack_info TEXT\n);";
const char kCreateIndexes[] =
    "CREATE INDEX index1 ON tb_nodes (step, rank, data_source, up_node, node_order);"
    "CREATE INDEX index2 ON tb_nodes (step, rank, data_source, node_name);"
    "CREATE INDEX index3 ON tb_nodes (step, rank, data_source, node_order);"
    "CREATE INDEX index4 ON tb_nodes (step, rank, node_order);"
    "CREATE INDEX index5 ON tb_nodes (step, rank, micro_step_id, node_order);"
    "CREATE INDEX index6 ON tb_nodes (step, rank, modified, matched_node_link);"
    "CREATE INDEX index7 ON tb_nodes (is_distributed);";

void BindText(sqlite3_stmt* s, int col, const std::string& text) {
  sqlite3_bind_text(s, col, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

// `text` must stay as it is until the statement is stepped (the row's buffers, the side's ids).
void BindStatic(sqlite3_stmt* s, int col, const std::string& text) {
  sqlite3_bind_text(s, col, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
}

Status StepRow(sqlite3* db, sqlite3_stmt* s, const std::string& path, const std::string& where) {
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  if (rc != SQLITE_DONE) return DbError(path, db, where);
  return Status::Ok();
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

// The rows of one graph's sides; `meta` is the graph's FileMeta (mode, grading).
class RowWriter {
 public:
  RowWriter(sqlite3* db, sqlite3_stmt* nodes, sqlite3_stmt* stacks, const std::string& path)
      : db_(db), nodes_(nodes), stacks_(stacks), path_(path) {}

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
      sqlite3_stmt* s = nodes_;
      // Every text is bound in place (BindStatic): graph_id, source and the row buffers below live
      // until the row is stepped, and are rewritten only for the next row.
      name_.assign(idx.Name(n));
      id_.assign(graph_id).append("_").append(name_);
      BindStatic(s, 1, id_);
      BindStatic(s, 2, graph_id);
      sqlite3_bind_int64(s, 3, static_cast<int64_t>(n));
      BindStatic(s, 4, name_);
      type_ = std::to_string(idx.node_type[n]);
      BindStatic(s, 5, type_);
      parent_.clear();
      if (idx.parent[n] >= 0) parent_.assign(idx.Name(static_cast<uint32_t>(idx.parent[n])));
      BindStatic(s, 6, parent_);
      // sub_nodes: StringListJson of the children's names, "" for none.
      children_.clear();
      for (uint32_t c = idx.child_offset[n]; c < idx.child_offset[n + 1]; ++c) {
        children_.append(c == idx.child_offset[n] ? "[" : ", ");
        json::AppendQuoted(idx.Name(idx.children[c]), &children_, true);
      }
      if (!children_.empty()) children_.push_back(']');
      BindStatic(s, 7, children_);
      double p = grades ? idx.grade[n] : idx.precision[n];
      if (side.id != vis::SIDE_NPU || std::isnan(p)) {
        sqlite3_bind_null(s, 8);
      } else if (!(idx.flags[n] & vis::FLAG_PRECISION_FLOAT) && p == std::floor(p) && std::fabs(p) < 1e15) {
        sqlite3_bind_int64(s, 8, static_cast<int64_t>(p));
      } else {
        sqlite3_bind_double(s, 8, p);
      }
      if (const char* level = OverflowName(idx.overflow[n])) {
        sqlite3_bind_text(s, 9, level, -1, SQLITE_STATIC);
      } else {
        sqlite3_bind_null(s, 9);
      }
      // A node's micro step is its top-level ancestor's (our .vis stores it
      // there only); msprobe 26's plugin filters every row by micro_step_id.
      int32_t micro = idx.micro_step[n];
      for (int32_t up = idx.parent[n]; micro < 0 && up >= 0; up = idx.parent[up]) micro = idx.micro_step[up];
      sqlite3_bind_int64(s, 10, std::max<int32_t>(0, micro));
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
      BindStatic(s, 11, link_);
      size_t stack = d.stack_id() >= 0 && static_cast<size_t>(d.stack_id()) < side.stacks->size()
                         ? static_cast<size_t>(d.stack_id())
                         : empty_stack;
      if (stack == empty_stack) empty_used = true;
      stack_.assign(graph_id).append("_").append(std::to_string(stack));
      BindStatic(s, 12, stack_);
      list_.assign(d.parallel_merge_info().begin(), d.parallel_merge_info().end());
      merge_ = list_.empty() ? "" : StringListJson(list_);
      BindStatic(s, 13, merge_);
      distributed_ = DistributedJson(d);
      BindStatic(s, 14, distributed_);
      sqlite3_bind_int64(s, 15, 0);
      input_.clear();
      AppendItemsJson(d.input(), meta.mode(), name_, &input_);
      BindStatic(s, 16, input_);
      output_.clear();
      AppendItemsJson(d.output(), meta.mode(), name_, &output_);
      BindStatic(s, 17, output_);
      BindStatic(s, 18, source);
      if (side.meta->has_dump_data_dir()) {
        BindStatic(s, 19, side.meta->dump_data_dir());
      } else {
        sqlite3_bind_null(s, 19);
      }
      sqlite3_bind_int64(s, 20, step);
      sqlite3_bind_int64(s, 21, rank);
      sqlite3_bind_int64(s, 22, name_.rfind("Distributed.", 0) == 0 ? 1 : 0);
      return StepRow(db_, s, path_, "table tb_nodes, node '" + name_ + "'");
    }));
    if (expected != idx.size()) {
      return Error{path_, source + " node details",
                   std::to_string(expected) + " details for " + std::to_string(idx.size()) + " nodes"};
    }
    for (size_t k = 0; k <= side.stacks->size(); ++k) {
      if (k == empty_stack && !empty_used) break;
      BindText(stacks_, 1, graph_id + "_" + std::to_string(k));
      BindText(stacks_, 2, StringListJson(k < side.stacks->size() ? (*side.stacks)[k] : std::vector<std::string>{}));
      GA_RETURN_IF_ERROR(StepRow(db_, stacks_, path_, "table tb_stack"));
    }
    return Status::Ok();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* nodes_;
  sqlite3_stmt* stacks_;
  const std::string& path_;
  std::string name_;               // reused from row to row
  // The row's texts, reused from row to row (bound in place until the row is stepped).
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
  std::string tmp;
  TemporaryFile temp, temp_journal;
  Db db;
  Stmt nodes, stacks;
  std::set<std::pair<int64_t, int64_t>> keys;
  std::set<int64_t> steps, ranks;
  bool first = true;
  bool compare = false;
  vis::FileMeta meta;  // the first graph's, for tb_config
  bool committed = false;

  Impl(std::string p, std::string t) : path(std::move(p)), tmp(std::move(t)), temp(tmp), temp_journal(tmp + "-journal") {}

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

VisDbWriter::~VisDbWriter() {
  if (impl_->committed) return;
  impl_->nodes.reset();
  impl_->stacks.reset();
  impl_->db.reset();
  unlink(impl_->tmp.c_str());
  unlink((impl_->tmp + "-journal").c_str());
}

Result<std::unique_ptr<VisDbWriter>> VisDbWriter::Create(const std::string& path) {
  // Removed on SIGINT/SIGTERM too (base/temp_files.h), with SQLite's journal.
  auto impl = std::make_unique<Impl>(path, path + ".tmp-" + std::to_string(getpid()));
  unlink(impl->tmp.c_str());
  std::unique_ptr<VisDbWriter> w(new VisDbWriter(std::move(impl)));
  Impl& m = *w->impl_;
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(m.tmp.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  m.db.reset(raw);
  if (rc != SQLITE_OK) return DbError(path, raw, "create");
  // One transaction, its journal in memory: every page is new, so the journal stays empty.
  // 64 KiB pages: a row (items and all, 2 KB on average) lies on its page instead of spilling
  // into overflow pages, so each CREATE INDEX scans the table in 1/16 of the reads (issue 29:
  // the seven index builds went from 1.6 to 0.9 s at 10^5 nodes a side). Readers take any page size.
  GA_RETURN_IF_ERROR(Exec(raw, path, "PRAGMA page_size=65536; PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;"));
  GA_RETURN_IF_ERROR(Exec(raw, path, std::string(kCreateNodes) + kCreateConfig + kCreateStack));
  GA_RETURN_IF_ERROR(Exec(raw, path, "BEGIN"));
  auto nodes =
      Prepare(raw, path, "INSERT INTO tb_nodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", "table tb_nodes");
  if (!nodes.ok()) return nodes.error();
  m.nodes = std::move(*nodes);
  auto stacks = Prepare(raw, path, "INSERT INTO tb_stack VALUES (?,?)", "table tb_stack");
  if (!stacks.ok()) return stacks.error();
  m.stacks = std::move(*stacks);
  return w;
}

Status VisDbWriter::Add(const GraphFile& g) {
  Impl& m = *impl_;
  int64_t step, rank;
  GA_RETURN_IF_ERROR(m.Key(g.meta, g.compare(), &step, &rank));
  RowWriter rows(m.db.get(), m.nodes.get(), m.stacks.get(), m.path);
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
  RowWriter rows(m.db.get(), m.nodes.get(), m.stacks.get(), m.path);
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
  sqlite3* db = m.db.get();
  const vis::FileMeta& meta = m.meta;
  const bool compare = m.compare;
  auto config = Prepare(db, path, "INSERT INTO tb_config VALUES (?,?,?,?,?,?,?,?,?)", "table tb_config");
  if (!config.ok()) return config.error();
  sqlite3_stmt* c = config->get();
  BindText(c, 1, "1");
  BindText(c, 2, compare ? "compare" : "build");
  BindText(c, 3, compare ? compare::TaskName(meta.mode()) : "");
  if (compare && meta.tooltips_size() > 0) {
    BindText(c, 4, TooltipJson(meta));
  } else {
    sqlite3_bind_null(c, 4);
  }
  sqlite3_bind_int64(c, 5, std::max<uint32_t>(1, meta.micro_steps()));
  sqlite3_bind_int64(c, 6, meta.overflow_checked() ? 1 : 0);
  BindText(c, 7, ColorsJson(meta));
  BindText(c, 8, IntListJson(m.ranks));
  BindText(c, 9, IntListJson(m.steps));
  GA_RETURN_IF_ERROR(StepRow(db, c, path, "table tb_config"));
  config->reset();
  // The indexes after the rows: one sort each costs less than keeping seven b-trees while inserting.
  GA_RETURN_IF_ERROR(Exec(db, path, kCreateIndexes));
  GA_RETURN_IF_ERROR(Exec(db, path, "COMMIT"));
  m.nodes.reset();
  m.stacks.reset();
  if (sqlite3_close(m.db.release()) != SQLITE_OK) return Error{path, "", "SQLite: cannot close the file"};
  if (rename(m.tmp.c_str(), path.c_str()) != 0) {
    return Error{path, "", std::string("cannot rename temporary file: ") + strerror(errno)};
  }
  m.committed = true;
  m.temp.Release();
  m.temp_journal.Release();
  return Status::Ok();
}

Status WriteVisDb(const std::vector<const GraphFile*>& graphs, const std::string& path) {
  if (graphs.empty()) return Error{path, "", "no graph to write"};
  auto writer = VisDbWriter::Create(path);
  if (!writer.ok()) return writer.error();
  for (const GraphFile* g : graphs) GA_RETURN_IF_ERROR((*writer)->Add(*g));
  return (*writer)->Commit();
}

}  // namespace graph_ascend::formats
