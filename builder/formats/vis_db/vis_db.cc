#include "formats/vis_db/vis_db.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include "base/parallel.h"
#include "formats/model/foreign_item.h"
#include "formats/vis_db/sqlite_db.h"
#include "formats/vis_db/vis_db_rows.h"
#include "json/json_reader.h"
#include "vis/vis_file.h"

namespace graph_ascend::formats {
namespace db_rows {
namespace {


Result<std::set<std::string>> Columns(sqlite3* db, const std::string& path, const std::string& table) {
  auto s = Prepare(db, path, "PRAGMA table_info(" + table + ")", "table " + table);
  if (!s.ok()) return s.error();
  std::set<std::string> cols;
  int rc;
  while ((rc = sqlite3_step(s->get())) == SQLITE_ROW) cols.insert(Text(s->get(), 1));
  if (rc != SQLITE_DONE) return DbError(path, db, "table " + table);
  return cols;
}

}  // namespace

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

std::string_view View(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  if (t == nullptr) return {};
  return {reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(s, col))};
}

std::optional<uint64_t> CountStringList(std::string_view text) {
  if (text.empty()) return 0;  // as ReadRow: no list, no children
  const char* p = text.data();
  const char* const end = p + text.size();
  auto skip_space = [&] {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
  };
  skip_space();
  if (p == end || *p++ != '[') return std::nullopt;
  skip_space();
  uint64_t count = 0;
  if (p < end && *p == ']') {
    ++p;
  } else {
    for (;;) {
      if (p == end || *p++ != '"') return std::nullopt;
      for (;;) {  // to the closing quote: one preceded by an even run of backslashes
        const char* q = static_cast<const char*>(memchr(p, '"', static_cast<size_t>(end - p)));
        if (q == nullptr) return std::nullopt;
        const char* b = q;
        while (b > p && b[-1] == '\\') --b;
        p = q + 1;
        if ((q - b) % 2 == 0) break;
      }
      ++count;
      skip_space();
      if (p == end) return std::nullopt;
      if (*p == ']') {
        ++p;
        break;
      }
      if (*p++ != ',') return std::nullopt;
      skip_space();
    }
  }
  skip_space();
  if (p != end) return std::nullopt;
  return count;
}

namespace {

// Runs the parser `read` over a JSON text held in a column; errors name the
// place `where()` gives (built only on error) and the offset in the text.
template <typename W, typename F>
Status ParseColumn(const std::string& path, std::string_view text, W where, F read) {
  json::JsonReader r(text, path);
  Status st = read(r);
  if (st.ok()) st = r.ExpectEnd();
  if (!st.ok()) {
    Error e = st.error();
    e.where = where() + (e.where.empty() ? "" : " at " + e.where);
    return e;
  }
  return Status::Ok();
}

Status ReadList(json::JsonReader& r, std::vector<std::string>* out) {
  auto l = ReadStringList(r);
  if (!l.ok()) return l.error();
  *out = std::move(*l);
  return Status::Ok();
}

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
    GA_RETURN_IF_ERROR(ParseColumn(
        path, tip, [] { return std::string("table tb_config, column tool_tip"); },
        [&](json::JsonReader& r) { return ReadTooltips(r, meta); }));
  }
  std::string colors = Text(st, 5);
  if (!colors.empty() && colors != "null") {
    GA_RETURN_IF_ERROR(ParseColumn(
        path, colors, [] { return std::string("table tb_config, column node_colors"); },
        [&](json::JsonReader& r) { return ReadLegend(r, meta); }));
  }
  NameLegend(meta);
  return Status::Ok();
}

// tb_stack as text by id; a stack is parsed when a node first refers to it.
Result<std::unordered_map<std::string, std::string>> ReadStackTexts(sqlite3* db, const std::string& path) {
  std::unordered_map<std::string, std::string> stacks;
  auto s = Prepare(db, path, "SELECT id, stack_info FROM tb_stack", "table tb_stack");
  if (!s.ok()) return s.error();
  int rc;
  while ((rc = sqlite3_step(s->get())) == SQLITE_ROW) stacks.emplace(Text(s->get(), 0), Text(s->get(), 1));
  if (rc != SQLITE_DONE) return DbError(path, db, "table tb_stack");
  return stacks;
}

std::string Column(const Schema& schema, const char* name) {
  return schema.node_columns.count(name) ? name : std::string("NULL");
}

// SELECT of the NodeColumn columns.
std::string SelectNodes(const Schema& schema, bool items, NodeRead read = NodeRead::kWhole) {
  bool stack_table = schema.node_columns.count("stack_id") != 0;
  // "{}" (msprobe's no items) and "" hold none; anything longer is parsed by the full read.
  // GLOB '???*' is length() > 2 (characters before a NUL) without counting the
  // whole text: it stops at the third character.
  std::string item_columns = items ? "input_data, output_data"
                                   : "COALESCE(input_data GLOB '???*', 0), COALESCE(output_data GLOB '???*', 0)";
  const bool counted = read == NodeRead::kPlacedCounted;
  return "SELECT node_name, node_type, up_node, " + std::string(counted ? "'[]'" : "sub_nodes") + ", precision_index, overflow_level, micro_step_id, "
         "matched_node_link, " +
         std::string(stack_table ? "stack_id" : "stack_info") + ", " + Column(schema, "parallel_merge_info") + ", " +
         Column(schema, "matched_distributed") + ", " + item_columns + ", data_source, " +
         Column(schema, "dump_data_dir") + (read != NodeRead::kWhole ? ", node_order" : "") +
         (counted ? ", sub_nodes" : "") + " FROM tb_nodes";
}

}  // namespace

Result<Stmt> PrepareNodes(sqlite3* db, const std::string& path, const Schema& schema, bool one_source,
                          bool items) {
  std::string sql = SelectNodes(schema, items) + " WHERE step = ? AND rank = ?" +
                    (one_source ? " AND data_source = ?" : "") + " ORDER BY data_source, " +
                    (schema.node_columns.count("node_order") ? "node_order" : "rowid");
  return Prepare(db, path, sql, "table tb_nodes");
}

Result<Stmt> PrepareNode(sqlite3* db, const std::string& path, const Schema& schema, NodeRead read) {
  // Index3's order (node_order, equal ones by rowid) through index2: "+node_order"
  // is no column, so SQLite seeks the name and sorts its few rows. The placed
  // reads want exactly one row and no order: no sorter, which would copy every
  // column of the row (a module's sub_nodes can be megabytes).
  std::string sql = SelectNodes(schema, read == NodeRead::kWhole, read) +
                    " WHERE step = ? AND rank = ? AND data_source = ? AND node_name = ?";
  if (read == NodeRead::kWhole) {
    sql += std::string(" ORDER BY ") + (schema.node_columns.count("node_order") ? "+node_order, rowid" : "rowid");
  }
  return Prepare(db, path, sql, "table tb_nodes");
}

namespace {

double PrecisionOf(sqlite3_stmt* st, int col, bool* is_float) {
  switch (sqlite3_column_type(st, col)) {
    case SQLITE_INTEGER:
      return static_cast<double>(sqlite3_column_int64(st, col));
    case SQLITE_FLOAT:
      *is_float = true;
      return sqlite3_column_double(st, col);
    case SQLITE_TEXT: {
      std::string t = Text(st, col);
      char* end = nullptr;
      double v = strtod(t.c_str(), &end);
      if (!t.empty() && *end == '\0') {
        *is_float = t.find_first_of(".eE") != std::string::npos;
        return v;
      }
      break;
    }
    default:
      break;
  }
  return std::nan("");
}

}  // namespace

Status ReadRow(sqlite3_stmt* st, const RowContext& ctx, SideRows* side, ForeignNode* node, vis::NodeDetail* detail,
               bool items) {
  const std::string& path = ctx.path;
  auto where = [&](const char* column) {
    return [&node, column] { return "table tb_nodes, node '" + node->name + "', column " + column; };
  };
  if (sqlite3_column_type(st, kDumpDir) != SQLITE_NULL) {
    side->meta.set_dump_data_dir(Text(st, kDumpDir));
    side->meta.set_has_dump_data_dir(true);
  }
  node->node_type = static_cast<uint32_t>(atoi(Text(st, kType).c_str()));
  node->parent = Text(st, kUpNode);
  std::string_view subnodes = View(st, kSubNodes);
  if (!subnodes.empty()) {
    GA_RETURN_IF_ERROR(ParseColumn(path, subnodes, where("sub_nodes"),
                                   [&](json::JsonReader& r) { return ReadList(r, &node->children); }));
  }
  node->precision = PrecisionOf(st, kPrecision, &node->precision_float);
  node->overflow = OverflowFromName(Text(st, kOverflow));
  node->micro_step = ctx.single_micro_step ? -1 : static_cast<int32_t>(sqlite3_column_int64(st, kMicroStep));
  std::string_view link = View(st, kLink);
  if (!link.empty()) {
    std::vector<std::string> names;
    GA_RETURN_IF_ERROR(
        ParseColumn(path, link, where("matched_node_link"), [&](json::JsonReader& r) { return ReadList(r, &names); }));
    node->matched = names.empty() ? "" : std::move(names.back());
  }
  detail->set_stack_id(-1);
  std::string stack = Text(st, kStack);
  if (!stack.empty()) {
    auto known = side->stack_of.find(stack);
    if (known != side->stack_of.end()) {
      detail->set_stack_id(known->second);
    } else {
      std::string_view text = stack;
      if (ctx.stack_table) {
        auto found = ctx.stacks->find(stack);
        if (found == ctx.stacks->end()) {
          return Error{path, where("stack_id")(), "'" + stack + "' is not in tb_stack"};
        }
        text = found->second;
      }
      std::vector<std::string> frames;
      if (!text.empty()) {
        auto w = ctx.stack_table ? std::function<std::string()>([&] { return "table tb_stack, row '" + stack + "'"; })
                                 : std::function<std::string()>(where("stack_info"));
        GA_RETURN_IF_ERROR(ParseColumn(path, text, w, [&](json::JsonReader& r) { return ReadList(r, &frames); }));
      }
      int32_t id = side->builder.Stack(std::move(frames));
      side->stack_of.emplace(std::move(stack), id);
      detail->set_stack_id(id);
    }
  }
  std::string_view merge = View(st, kMerge);
  if (!merge.empty()) {
    std::vector<std::string> lines;
    GA_RETURN_IF_ERROR(ParseColumn(path, merge, where("parallel_merge_info"),
                                   [&](json::JsonReader& r) { return ReadList(r, &lines); }));
    for (std::string& line : lines) detail->add_parallel_merge_info(std::move(line));
  }
  std::string_view dist = View(st, kDistributed);
  if (!dist.empty()) {
    GA_RETURN_IF_ERROR(ParseColumn(path, dist, where("matched_distributed"),
                                   [&](json::JsonReader& r) { return ReadDistributed(r, detail); }));
  }
  if (!items) {
    // A repeated name adds to the node's details (ReadGraph): what it had, it keeps.
    node->distributed = node->distributed || detail->distributed_size() > 0;
    node->has_data =
        node->has_data || sqlite3_column_int64(st, kInput) != 0 || sqlite3_column_int64(st, kOutput) != 0;
    return Status::Ok();
  }
  node->distributed = detail->distributed_size() > 0;
  for (int col : {kInput, kOutput}) {
    std::string_view text = View(st, col);
    if (text.empty()) continue;
    bool output = col == kOutput;
    GA_RETURN_IF_ERROR(ParseColumn(path, text, where(output ? "output_data" : "input_data"), [&](json::JsonReader& r) {
      return ReadItems(r, output, output ? detail->mutable_output() : detail->mutable_input());
    }));
  }
  node->has_data = detail->input_size() + detail->output_size() > 0;
  return Status::Ok();
}


Result<std::vector<DbGraphKey>> ReadKeys(sqlite3* db, const std::string& path) {
  auto s = Prepare(db, path,
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
  if (rc != SQLITE_DONE) return DbError(path, db, "table tb_nodes");
  return keys;
}

Result<std::unique_ptr<DbFile>> OpenDbFile(const std::string& path, bool keys) {
  auto f = std::make_unique<DbFile>();
  auto db = OpenReadOnly(path);
  if (!db.ok()) return db.error();
  f->db = std::move(*db);
  sqlite3* h = f->db.get();
  auto schema = ReadSchema(h, path);
  if (!schema.ok()) return schema.error();
  f->schema = std::move(*schema);
  GA_RETURN_IF_ERROR(ReadConfig(h, path, f->schema, &f->meta));
  f->ctx.path = path;
  f->ctx.stack_table = f->schema.node_columns.count("stack_id") != 0;
  if (f->ctx.stack_table) {
    auto s = ReadStackTexts(h, path);
    if (!s.ok()) return s.error();
    f->stacks = std::move(*s);
  }
  f->ctx.stacks = &f->stacks;
  f->ctx.single_micro_step = f->meta.micro_steps() <= 1;
  if (!keys) return f;
  auto read = ReadKeys(h, path);
  if (!read.ok()) return read.error();
  f->keys = std::move(*read);
  if (f->keys.empty()) return Error{path, "table tb_nodes", "empty: the file holds no graph"};
  return f;
}

vis::FileMeta GraphMetaOf(const DbFile& f, const DbGraphKey& key) {
  vis::FileMeta meta = f.meta;
  meta.set_format_version(vis::kFormatVersion);
  meta.set_writer("msprobe .vis.db");
  meta.set_created_unix(static_cast<int64_t>(time(nullptr)));
  if (f.keys.size() > 1) {
    meta.set_step("step" + std::to_string(key.step));
    meta.set_rank("rank" + std::to_string(key.rank));
  }
  return meta;
}

std::string GraphWhere(const DbGraphKey& key) {
  return "table tb_nodes (step " + std::to_string(key.step) + ", rank " + std::to_string(key.rank) + ")";
}

Status FinishGraph(const std::string& path, const DbGraphKey& key, SideRows* npu, SideRows* bench, GraphFile* g) {
  if (npu->builder.size() == 0) return Error{path, GraphWhere(key), "no NPU graph"};
  npu->meta.set_root("DefaultModel");
  *g->meta.mutable_npu() = npu->meta;
  // The two sides are resolved at once, the Bench side on a thread of its own.
  Result<GraphSide> b = Error{};
  std::optional<BackgroundWork> bench_work;
  if (g->compare()) {
    bench->meta.set_root("DefaultModel");
    *g->meta.mutable_bench() = bench->meta;
    bench_work.emplace([&] { b = bench->builder.Finish("DefaultModel", path); });
  }
  auto n = npu->builder.Finish("DefaultModel", path);
  Status thrown = bench_work ? bench_work->Join(path) : Status::Ok();
  if (!n.ok()) return n.error();
  GA_RETURN_IF_ERROR(thrown);
  g->npu = std::move(*n);
  if (g->compare()) {
    if (!b.ok()) return b.error();
    g->bench = std::move(*b);
    return ResolveMatches(path, npu->builder, &g->npu, bench->builder, &g->bench);
  }
  return Status::Ok();
}

Status Bind(sqlite3_stmt* s, const DbGraphKey& key, const char* source) {
  sqlite3_reset(s);
  if (sqlite3_bind_int64(s, 1, key.step) != SQLITE_OK || sqlite3_bind_int64(s, 2, key.rank) != SQLITE_OK ||
      (source != nullptr && sqlite3_bind_text(s, 3, source, -1, SQLITE_STATIC) != SQLITE_OK)) {
    return Error{"", "table tb_nodes", "cannot bind the step and rank"};
  }
  return Status::Ok();
}

Status ReadGraph(DbFile& f, sqlite3_stmt* st, const DbGraphKey& key, GraphFile* g) {
  SideRows npu, bench;
  GA_RETURN_IF_ERROR(Bind(st, key));
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    SideRows& side = View(st, kSource) == "Bench" ? bench : npu;
    ForeignNode& node = side.builder.Add(Text(st, kName));
    GA_RETURN_IF_ERROR(ReadRow(st, f.ctx, &side, &node, &node.detail));
  }
  if (rc != SQLITE_DONE) return DbError(f.ctx.path, f.db.get(), GraphWhere(key));
  g->meta = GraphMetaOf(f, key);
  return FinishGraph(f.ctx.path, key, &npu, &bench, g);
}

}  // namespace db_rows

int64_t FolderNumber(const std::string& folder) {
  size_t at = folder.find_first_of("0123456789");
  return at == std::string::npos ? 0 : atoll(folder.c_str() + at);
}

Result<std::vector<DbGraphKey>> ListVisDb(const std::string& path) {
  using namespace db_rows;  // NOLINT: the reader's own parts
  auto db = OpenReadOnly(path);
  if (!db.ok()) return db.error();
  auto schema = ReadSchema(db->get(), path);
  if (!schema.ok()) return schema.error();
  return ReadKeys(db->get(), path);
}

Result<std::vector<DbGraph>> ReadVisDb(const std::string& path) {
  using namespace db_rows;  // NOLINT: the reader's own parts
  auto file = OpenDbFile(path);
  if (!file.ok()) return file.error();
  DbFile& f = **file;
  auto s = PrepareNodes(f.db.get(), path, f.schema, false);
  if (!s.ok()) return s.error();
  std::vector<DbGraph> out;
  out.reserve(f.keys.size());
  for (const DbGraphKey& key : f.keys) {
    DbGraph dg;
    dg.step = key.step;
    dg.rank = key.rank;
    GA_RETURN_IF_ERROR(ReadGraph(f, s->get(), key, &dg.graph));
    out.push_back(std::move(dg));
  }
  return out;
}

}  // namespace graph_ascend::formats
