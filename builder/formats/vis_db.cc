#include "formats/vis_db.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <set>

#include "base/mapped_file.h"
#include "base/temp_files.h"
#include "compare/legend.h"
#include "formats/foreign_item.h"
#include "json/json_reader.h"
#include "vis/vis_file.h"

namespace graph_ascend::formats {
namespace {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtCloser>;

Error DbError(const std::string& path, sqlite3* db, const std::string& where) {
  std::string msg = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
  if (db != nullptr && (sqlite3_errcode(db) == SQLITE_NOTADB || sqlite3_errcode(db) == SQLITE_CORRUPT)) {
    msg += " (not a complete SQLite .vis.db)";
  }
  return Error{path, where, "SQLite: " + msg};
}

Result<Stmt> Prepare(sqlite3* db, const std::string& path, const std::string& sql, const std::string& where) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK) {
    sqlite3_finalize(s);
    return DbError(path, db, where);
  }
  return Stmt(s);
}

Status Exec(sqlite3* db, const std::string& path, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "error";
    sqlite3_free(err);
    return Error{path, "", "SQLite: " + msg};
  }
  return Status::Ok();
}

std::string Text(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  if (t == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(s, col)));
}

// "file:" URI of a path: '%', '?' and '#' escaped.
std::string FileUri(const std::string& path, bool immutable) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      snprintf(buf, sizeof(buf), "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  uri += immutable ? "?mode=ro&immutable=1" : "?mode=ro";
  return uri;
}

Result<Db> OpenReadOnly(const std::string& path) {
  // Only a regular file: a FIFO must not block open() (base/mapped_file.h).
  auto header = ReadFileHead(path, 16);
  if (!header.ok()) return header.error();
  if (header->size() < 16 || memcmp(header->data(), "SQLite format 3", 16) != 0) {
    return Error{path, "byte 0", "not an SQLite database (a .vis.db starts with \"SQLite format 3\")"};
  }
  // Immutable unless msprobe left a write-ahead log beside it: then the log
  // holds rows the main file does not, and SQLite must read it.
  struct stat st;
  bool has_wal = stat((path + "-wal").c_str(), &st) == 0 && st.st_size > 0;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(FileUri(path, !has_wal).c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  Db owned(db);
  if (rc != SQLITE_OK) return DbError(path, db, "open");
  return owned;
}

struct Schema {
  std::set<std::string> tables;
  std::set<std::string> node_columns;
  std::set<std::string> config_columns;
};

Result<std::set<std::string>> Columns(sqlite3* db, const std::string& path, const std::string& table) {
  auto s = Prepare(db, path, "PRAGMA table_info(" + table + ")", "table " + table);
  if (!s.ok()) return s.error();
  std::set<std::string> cols;
  int rc;
  while ((rc = sqlite3_step(s->get())) == SQLITE_ROW) cols.insert(Text(s->get(), 1));
  if (rc != SQLITE_DONE) return DbError(path, db, "table " + table);
  return cols;
}

Result<Schema> ReadSchema(sqlite3* db, const std::string& path) {
  Schema schema;
  auto s = Prepare(db, path, "SELECT name FROM sqlite_master WHERE type = 'table'", "sqlite_master");
  if (!s.ok()) return s.error();
  int rc;
  while ((rc = sqlite3_step(s->get())) == SQLITE_ROW) schema.tables.insert(Text(s->get(), 0));
  if (rc != SQLITE_DONE) return DbError(path, db, "sqlite_master");
  for (const char* t : {"tb_nodes", "tb_config"}) {
    if (!schema.tables.count(t)) return Error{path, std::string("table ") + t, "missing: not a msprobe .vis.db"};
  }
  auto nodes = Columns(db, path, "tb_nodes");
  if (!nodes.ok()) return nodes.error();
  schema.node_columns = std::move(*nodes);
  for (const char* c : {"node_name", "node_type", "up_node", "sub_nodes", "precision_index", "overflow_level",
                        "micro_step_id", "matched_node_link", "input_data", "output_data", "data_source", "step",
                        "rank"}) {
    if (!schema.node_columns.count(c)) return Error{path, std::string("table tb_nodes, column ") + c, "missing"};
  }
  if (!schema.node_columns.count("stack_id") && !schema.node_columns.count("stack_info")) {
    return Error{path, "table tb_nodes, column stack_id", "missing (and no inline stack_info either)"};
  }
  if (schema.node_columns.count("stack_id") && !schema.tables.count("tb_stack")) {
    return Error{path, "table tb_stack", "missing (tb_nodes refers to it through stack_id)"};
  }
  auto config = Columns(db, path, "tb_config");
  if (!config.ok()) return config.error();
  schema.config_columns = std::move(*config);
  for (const char* c : {"graph_type", "task"}) {
    if (!schema.config_columns.count(c)) return Error{path, std::string("table tb_config, column ") + c, "missing"};
  }
  return schema;
}

// Runs the parser `read` over a JSON text held in a column; errors name the row and column.
template <typename F>
Status ParseColumn(const std::string& path, const std::string& text, const std::string& where, F read) {
  json::JsonReader r(text, path);
  Status st = read(r);
  if (st.ok()) st = r.ExpectEnd();
  if (!st.ok()) {
    Error e = st.error();
    e.where = where + (e.where.empty() ? "" : " at " + e.where);
    return e;
  }
  return Status::Ok();
}

struct PendingGraph {
  SideBuilder npu, bench;
  vis::GraphMeta npu_meta, bench_meta;
  bool has_bench = false;
  std::map<std::string, int32_t> npu_stacks, bench_stacks;  // tb_stack id -> builder stack id
};

vis::CompareMode ModeOfTask(const std::string& task) {
  if (task == "md5") return vis::MODE_MD5;
  if (task == "all" || task == "tensor") return vis::MODE_TENSOR;
  if (task == "structure") return vis::MODE_STRUCTURE;
  return vis::MODE_STATISTICS;
}

Status ReadConfig(sqlite3* db, const std::string& path, const Schema& schema, vis::FileMeta* meta) {
  std::string cols = "graph_type, task";
  for (const char* c : {"tool_tip", "micro_steps", "overflow_check", "node_colors"}) {
    cols += ", ";
    cols += schema.config_columns.count(c) ? c : "NULL";
  }
  auto s = Prepare(db, path, "SELECT " + cols + " FROM tb_config ORDER BY id LIMIT 1", "table tb_config");
  if (!s.ok()) return s.error();
  int rc = sqlite3_step(s->get());
  if (rc == SQLITE_DONE) return Error{path, "table tb_config", "empty (msprobe writes one row)"};
  if (rc != SQLITE_ROW) return DbError(path, db, "table tb_config");
  sqlite3_stmt* st = s->get();
  bool compare = Text(st, 0) == "compare";
  std::string task = Text(st, 1);
  meta->set_kind(compare ? vis::GRAPH_COMPARE : vis::GRAPH_BUILD);
  meta->set_mode(compare ? ModeOfTask(task) : vis::MODE_NONE);
  meta->set_task(compare ? (task.empty() ? "summary" : task) : "");
  meta->set_micro_steps(static_cast<uint32_t>(std::max<int64_t>(1, sqlite3_column_int64(st, 3))));
  meta->set_overflow_checked(sqlite3_column_int64(st, 4) != 0);
  std::string tip = Text(st, 2);
  if (!tip.empty() && tip != "null") {
    GA_RETURN_IF_ERROR(ParseColumn(path, tip, "table tb_config, column tool_tip",
                                   [&](json::JsonReader& r) { return ReadTooltips(r, meta); }));
  }
  std::string colors = Text(st, 5);
  if (!colors.empty() && colors != "null") {
    GA_RETURN_IF_ERROR(ParseColumn(path, colors, "table tb_config, column node_colors",
                                   [&](json::JsonReader& r) { return ReadLegend(r, meta); }));
  }
  NameLegend(meta);
  return Status::Ok();
}

Result<std::map<std::string, std::vector<std::string>>> ReadStacks(sqlite3* db, const std::string& path) {
  std::map<std::string, std::vector<std::string>> stacks;
  auto s = Prepare(db, path, "SELECT id, stack_info FROM tb_stack", "table tb_stack");
  if (!s.ok()) return s.error();
  int rc;
  while ((rc = sqlite3_step(s->get())) == SQLITE_ROW) {
    std::string id = Text(s->get(), 0);
    std::vector<std::string> frames;
    std::string text = Text(s->get(), 1);
    if (!text.empty()) {
      std::string where = "table tb_stack, row '" + id + "'";
      GA_RETURN_IF_ERROR(ParseColumn(path, text, where, [&](json::JsonReader& r) -> Status {
        auto l = ReadStringList(r);
        if (!l.ok()) return l.error();
        frames = std::move(*l);
        return Status::Ok();
      }));
    }
    stacks.emplace(std::move(id), std::move(frames));
  }
  if (rc != SQLITE_DONE) return DbError(path, db, "table tb_stack");
  return stacks;
}

std::string Column(const Schema& schema, const char* name) {
  return schema.node_columns.count(name) ? name : std::string("NULL");
}

}  // namespace

int64_t FolderNumber(const std::string& folder) {
  size_t at = folder.find_first_of("0123456789");
  return at == std::string::npos ? 0 : atoll(folder.c_str() + at);
}

Result<std::vector<DbGraphKey>> ListVisDb(const std::string& path) {
  auto db = OpenReadOnly(path);
  if (!db.ok()) return db.error();
  auto schema = ReadSchema(db->get(), path);
  if (!schema.ok()) return schema.error();
  auto s = Prepare(db->get(), path,
                   "SELECT step, rank, SUM(data_source = 'NPU'), SUM(data_source <> 'NPU') FROM tb_nodes "
                   "GROUP BY step, rank ORDER BY step, rank",
                   "table tb_nodes");
  if (!s.ok()) return s.error();
  std::vector<DbGraphKey> keys;
  int rc;
  while ((rc = sqlite3_step(s->get())) == SQLITE_ROW) {
    DbGraphKey k;
    k.step = sqlite3_column_int64(s->get(), 0);
    k.rank = sqlite3_column_int64(s->get(), 1);
    k.npu_nodes = static_cast<uint64_t>(sqlite3_column_int64(s->get(), 2));
    k.bench_nodes = static_cast<uint64_t>(sqlite3_column_int64(s->get(), 3));
    keys.push_back(k);
  }
  if (rc != SQLITE_DONE) return DbError(path, db->get(), "table tb_nodes");
  return keys;
}

Result<std::vector<DbGraph>> ReadVisDb(const std::string& path) {
  auto db = OpenReadOnly(path);
  if (!db.ok()) return db.error();
  sqlite3* h = db->get();
  auto schema = ReadSchema(h, path);
  if (!schema.ok()) return schema.error();
  vis::FileMeta meta;
  GA_RETURN_IF_ERROR(ReadConfig(h, path, *schema, &meta));
  std::map<std::string, std::vector<std::string>> stacks;
  bool stack_table = schema->node_columns.count("stack_id") != 0;
  if (stack_table) {
    auto s = ReadStacks(h, path);
    if (!s.ok()) return s.error();
    stacks = std::move(*s);
  }
  std::string sql =
      "SELECT node_name, node_type, up_node, sub_nodes, precision_index, overflow_level, micro_step_id, "
      "matched_node_link, " +
      std::string(stack_table ? "stack_id" : "stack_info") + ", " + Column(*schema, "parallel_merge_info") + ", " +
      Column(*schema, "matched_distributed") + ", input_data, output_data, data_source, " +
      Column(*schema, "dump_data_dir") + ", step, rank FROM tb_nodes ORDER BY step, rank, data_source DESC" +
      (schema->node_columns.count("node_order") ? ", node_order" : ", rowid");
  auto s = Prepare(h, path, sql, "table tb_nodes");
  if (!s.ok()) return s.error();
  sqlite3_stmt* st = s->get();
  std::map<std::pair<int64_t, int64_t>, PendingGraph> graphs;
  bool single_micro_step = meta.micro_steps() <= 1;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    std::string name = Text(st, 0);
    std::string where = "table tb_nodes, node '" + name + "'";
    PendingGraph& g = graphs[{sqlite3_column_int64(st, 15), sqlite3_column_int64(st, 16)}];
    bool bench = Text(st, 13) == "Bench";
    if (bench) g.has_bench = true;
    SideBuilder& b = bench ? g.bench : g.npu;
    vis::GraphMeta& gm = bench ? g.bench_meta : g.npu_meta;
    if (sqlite3_column_type(st, 14) != SQLITE_NULL) {
      gm.set_dump_data_dir(Text(st, 14));
      gm.set_has_dump_data_dir(true);
    }
    ForeignNode& node = b.Add(name);
    node.node_type = static_cast<uint32_t>(atoi(Text(st, 1).c_str()));
    node.parent = Text(st, 2);
    std::string subnodes = Text(st, 3);
    if (!subnodes.empty()) {
      GA_RETURN_IF_ERROR(ParseColumn(path, subnodes, where + ", column sub_nodes", [&](json::JsonReader& r) -> Status {
        auto l = ReadStringList(r);
        if (!l.ok()) return l.error();
        node.children = std::move(*l);
        return Status::Ok();
      }));
    }
    switch (sqlite3_column_type(st, 4)) {
      case SQLITE_INTEGER: node.precision = static_cast<double>(sqlite3_column_int64(st, 4)); break;
      case SQLITE_FLOAT:
        node.precision = sqlite3_column_double(st, 4);
        node.precision_float = true;
        break;
      case SQLITE_TEXT: {
        std::string t = Text(st, 4);
        char* end = nullptr;
        double v = strtod(t.c_str(), &end);
        if (!t.empty() && *end == '\0') {
          node.precision = v;
          node.precision_float = t.find_first_of(".eE") != std::string::npos;
        }
        break;
      }
      default: break;
    }
    node.overflow = OverflowFromName(Text(st, 5));
    node.micro_step = single_micro_step ? -1 : static_cast<int32_t>(sqlite3_column_int64(st, 6));
    std::string link = Text(st, 7);
    if (!link.empty()) {
      GA_RETURN_IF_ERROR(
          ParseColumn(path, link, where + ", column matched_node_link", [&](json::JsonReader& r) -> Status {
            auto l = ReadStringList(r);
            if (!l.ok()) return l.error();
            node.matched = l->empty() ? "" : l->back();
            return Status::Ok();
          }));
    }
    node.detail.set_stack_id(-1);
    std::string stack = Text(st, 8);
    if (stack_table) {
      auto found = stacks.find(stack);
      if (!stack.empty() && found == stacks.end()) {
        return Error{path, where + ", column stack_id", "'" + stack + "' is not in tb_stack"};
      }
      if (found != stacks.end()) node.detail.set_stack_id(b.Stack(found->second));
    } else if (!stack.empty()) {
      GA_RETURN_IF_ERROR(ParseColumn(path, stack, where + ", column stack_info", [&](json::JsonReader& r) -> Status {
        auto l = ReadStringList(r);
        if (!l.ok()) return l.error();
        node.detail.set_stack_id(b.Stack(std::move(*l)));
        return Status::Ok();
      }));
    }
    std::string merge = Text(st, 9);
    if (!merge.empty()) {
      GA_RETURN_IF_ERROR(
          ParseColumn(path, merge, where + ", column parallel_merge_info", [&](json::JsonReader& r) -> Status {
            auto l = ReadStringList(r);
            if (!l.ok()) return l.error();
            for (std::string& line : *l) node.detail.add_parallel_merge_info(std::move(line));
            return Status::Ok();
          }));
    }
    std::string dist = Text(st, 10);
    if (!dist.empty()) {
      GA_RETURN_IF_ERROR(ParseColumn(path, dist, where + ", column matched_distributed",
                                     [&](json::JsonReader& r) { return ReadDistributed(r, &node.detail); }));
    }
    for (int col : {11, 12}) {
      std::string items = Text(st, col);
      if (items.empty()) continue;
      bool output = col == 12;
      GA_RETURN_IF_ERROR(ParseColumn(
          path, items, where + (output ? ", column output_data" : ", column input_data"), [&](json::JsonReader& r) {
            return ReadItems(r, output, output ? node.detail.mutable_output() : node.detail.mutable_input());
          }));
    }
    node.has_data = node.detail.input_size() + node.detail.output_size() > 0;
  }
  if (rc != SQLITE_DONE) return DbError(path, h, "table tb_nodes");
  if (graphs.empty()) return Error{path, "table tb_nodes", "empty: the file holds no graph"};

  std::vector<DbGraph> out;
  out.reserve(graphs.size());
  bool many = graphs.size() > 1;
  for (auto& [key, pending] : graphs) {
    DbGraph dg;
    dg.step = key.first;
    dg.rank = key.second;
    GraphFile& g = dg.graph;
    g.meta = meta;
    g.meta.set_format_version(vis::kFormatVersion);
    g.meta.set_writer("msprobe .vis.db");
    g.meta.set_created_unix(static_cast<int64_t>(time(nullptr)));
    if (many) {
      g.meta.set_step("step" + std::to_string(key.first));
      g.meta.set_rank("rank" + std::to_string(key.second));
    }
    std::string where = " (step " + std::to_string(key.first) + ", rank " + std::to_string(key.second) + ")";
    pending.npu_meta.set_root("DefaultModel");
    *g.meta.mutable_npu() = pending.npu_meta;
    if (pending.npu.size() == 0) return Error{path, "table tb_nodes" + where, "no NPU graph"};
    auto npu = pending.npu.Finish("DefaultModel", path);
    if (!npu.ok()) return npu.error();
    g.npu = std::move(*npu);
    if (g.compare()) {
      pending.bench_meta.set_root("DefaultModel");
      *g.meta.mutable_bench() = pending.bench_meta;
      auto bench = pending.bench.Finish("DefaultModel", path);
      if (!bench.ok()) return bench.error();
      g.bench = std::move(*bench);
      ResolveMatches(pending.npu, &g.npu, pending.bench, &g.bench);
    }
    out.push_back(std::move(dg));
  }
  return out;
}

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
    sqlite3_bind_int64(s, 10, std::max<int32_t>(0, idx.micro_step[n]));
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
  auto nodes = Prepare(db, path, "INSERT INTO tb_nodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       "table tb_nodes");
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
