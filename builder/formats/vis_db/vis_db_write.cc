// The .vis.db writer: the 26.x schema with its seven indexes (vis_db.h).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>

#include "base/temp_files.h"
#include "compare/legend.h"
#include "formats/model/foreign_item.h"
#include "formats/vis_db/sqlite_db.h"
#include "formats/vis_db/vis_db.h"
#include "json/json_reader.h"

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

Status WriteSideRows(sqlite3* db, sqlite3_stmt* node_stmt, sqlite3_stmt* stack_stmt, const std::string& path,
                     const GraphFile& g, vis::Side side_id, int64_t step, int64_t rank) {
  const GraphSide& side = g.side(side_id);
  const GraphSide& other = g.side(side_id == vis::SIDE_NPU ? vis::SIDE_BENCH : vis::SIDE_NPU);
  const vis::SideIndex& idx = side.index;
  const vis::GraphMeta& gm = side_id == vis::SIDE_NPU ? g.meta.npu() : g.meta.bench();
  std::string source = side_id == vis::SIDE_NPU ? "NPU" : "Bench";
  std::string graph_id = source + "_" + std::to_string(step) + "_" + std::to_string(rank);
  // Every node has a stack row in msprobe's files; nodes without one share an empty list.
  size_t empty_stack = side.stacks.size();
  bool empty_used = false;
  // node_order is our node order: dump order, as msprobe's.
  for (uint32_t n = 0; n < idx.size(); ++n) {
    uint32_t i = n;
    const vis::NodeDetail& d = side.details[n];
    std::string name(idx.Name(n));
    sqlite3_stmt* s = node_stmt;
    BindText(s, 1, graph_id + "_" + name);
    BindText(s, 2, graph_id);
    sqlite3_bind_int64(s, 3, static_cast<int64_t>(i));
    BindText(s, 4, name);
    BindText(s, 5, std::to_string(idx.node_type[n]));
    BindText(s, 6, idx.parent[n] >= 0 ? std::string(idx.Name(static_cast<uint32_t>(idx.parent[n]))) : "");
    std::vector<std::string> children;
    for (uint32_t c = idx.child_offset[n]; c < idx.child_offset[n + 1]; ++c) {
      children.emplace_back(idx.Name(idx.children[c]));
    }
    BindText(s, 7, children.empty() ? "" : StringListJson(children));
    const bool grades = WritesGrades(g.meta) && idx.grade.size() == idx.size();
    double p = grades ? idx.grade[n] : idx.precision[n];
    if (side_id != vis::SIDE_NPU || std::isnan(p)) {
      sqlite3_bind_null(s, 8);
    } else if (!(idx.flags[n] & vis::FLAG_PRECISION_FLOAT) && p == std::floor(p) && std::fabs(p) < 1e15) {
      sqlite3_bind_int64(s, 8, static_cast<int64_t>(p));
    } else {
      sqlite3_bind_double(s, 8, p);
    }
    if (const char* level = OverflowName(idx.overflow[n])) {
      BindText(s, 9, level);
    } else {
      sqlite3_bind_null(s, 9);
    }
    // A node's micro step is its top-level ancestor's (our .vis stores it
    // there only); msprobe 26's plugin filters every row by micro_step_id.
    int32_t micro = idx.micro_step[n];
    for (int32_t up = idx.parent[n]; micro < 0 && up >= 0; up = idx.parent[up]) micro = idx.micro_step[up];
    sqlite3_bind_int64(s, 10, std::max<int32_t>(0, micro));
    std::vector<std::string> link;
    int32_t m = idx.matched[n];
    if (m >= 0 && static_cast<uint32_t>(m) < other.index.size()) {
      for (uint32_t a : other.index.Ancestors(static_cast<uint32_t>(m))) link.emplace_back(other.index.Name(a));
      link.emplace_back(other.index.Name(static_cast<uint32_t>(m)));
    }
    BindText(s, 11, StringListJson(link));
    size_t stack = d.stack_id() >= 0 && static_cast<size_t>(d.stack_id()) < side.stacks.size()
                       ? static_cast<size_t>(d.stack_id())
                       : empty_stack;
    if (stack == empty_stack) empty_used = true;
    BindText(s, 12, graph_id + "_" + std::to_string(stack));
    std::vector<std::string> merge(d.parallel_merge_info().begin(), d.parallel_merge_info().end());
    BindText(s, 13, merge.empty() ? "" : StringListJson(merge));
    BindText(s, 14, DistributedJson(d));
    sqlite3_bind_int64(s, 15, 0);
    BindText(s, 16, ItemsJson(d.input(), g.meta.mode(), name));
    BindText(s, 17, ItemsJson(d.output(), g.meta.mode(), name));
    BindText(s, 18, source);
    if (gm.has_dump_data_dir()) {
      BindText(s, 19, gm.dump_data_dir());
    } else {
      sqlite3_bind_null(s, 19);
    }
    sqlite3_bind_int64(s, 20, step);
    sqlite3_bind_int64(s, 21, rank);
    sqlite3_bind_int64(s, 22, name.rfind("Distributed.", 0) == 0 ? 1 : 0);
    GA_RETURN_IF_ERROR(StepRow(db, s, path, "table tb_nodes, node '" + name + "'"));
  }
  for (size_t k = 0; k <= side.stacks.size(); ++k) {
    if (k == empty_stack && !empty_used) break;
    BindText(stack_stmt, 1, graph_id + "_" + std::to_string(k));
    BindText(stack_stmt, 2, StringListJson(k < side.stacks.size() ? side.stacks[k] : std::vector<std::string>{}));
    GA_RETURN_IF_ERROR(StepRow(db, stack_stmt, path, "table tb_stack"));
  }
  return Status::Ok();
}

Status WriteAll(sqlite3* db, const std::string& path, const std::vector<const GraphFile*>& graphs) {
  GA_RETURN_IF_ERROR(Exec(db, path, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;"));
  GA_RETURN_IF_ERROR(Exec(db, path, std::string(kCreateNodes) + kCreateConfig + kCreateStack));
  GA_RETURN_IF_ERROR(Exec(db, path, "BEGIN"));
  auto nodes =
      Prepare(db, path, "INSERT INTO tb_nodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", "table tb_nodes");
  if (!nodes.ok()) return nodes.error();
  auto stacks = Prepare(db, path, "INSERT INTO tb_stack VALUES (?,?)", "table tb_stack");
  if (!stacks.ok()) return stacks.error();
  std::set<std::pair<int64_t, int64_t>> keys;
  std::set<int64_t> steps, ranks;
  for (const GraphFile* g : graphs) {
    int64_t step = FolderNumber(g->meta.step()), rank = FolderNumber(g->meta.rank());
    if (!keys.insert({step, rank}).second) {
      return Error{path, "step " + std::to_string(step) + ", rank " + std::to_string(rank),
                   "two graphs for the same step and rank"};
    }
    steps.insert(step);
    ranks.insert(rank);
    GA_RETURN_IF_ERROR(WriteSideRows(db, nodes->get(), stacks->get(), path, *g, vis::SIDE_NPU, step, rank));
    if (g->compare()) {
      GA_RETURN_IF_ERROR(WriteSideRows(db, nodes->get(), stacks->get(), path, *g, vis::SIDE_BENCH, step, rank));
    }
  }
  const vis::FileMeta& meta = graphs.front()->meta;
  bool compare = graphs.front()->compare();
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
  BindText(c, 8, IntListJson(ranks));
  BindText(c, 9, IntListJson(steps));
  GA_RETURN_IF_ERROR(StepRow(db, c, path, "table tb_config"));
  GA_RETURN_IF_ERROR(Exec(db, path, kCreateIndexes));
  return Exec(db, path, "COMMIT");
}

}  // namespace

Status WriteVisDb(const std::vector<const GraphFile*>& graphs, const std::string& path) {
  if (graphs.empty()) return Error{path, "", "no graph to write"};
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  // Removed on SIGINT/SIGTERM too (base/temp_files.h), with SQLite's journal.
  TemporaryFile temp(tmp), temp_journal(tmp + "-journal");
  unlink(tmp.c_str());
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(tmp.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  Db db(raw);
  Status st = rc == SQLITE_OK ? Status::Ok() : Status(DbError(path, raw, "create"));
  if (st.ok()) st = WriteAll(raw, path, graphs);
  db.reset();
  if (st.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    st = Error{path, "", std::string("cannot rename temporary file: ") + strerror(errno)};
  }
  if (!st.ok()) {
    unlink(tmp.c_str());
    unlink((tmp + "-journal").c_str());
  }
  return st;
}

}  // namespace graph_ascend::formats
