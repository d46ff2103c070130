// VisDbNodes (vis_db.h): a node's rows found through index2 and read as
// ReadGraph reads them, its stack ids those of the converted file; the
// search's names through index3 (step, rank, data_source, node_order).
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>
#include <mutex>
#include <unordered_map>

#include "formats/vis_db/vis_db.h"
#include "formats/vis_db/vis_db_rows.h"
#include "vis/vis_file.h"

namespace graph_ascend::formats {
namespace {

using namespace db_rows;  // NOLINT: the reader's parts

// "step12" -> 12 as GraphMetaOf names a graph of several.
bool FolderValue(const std::string& folder, const char* prefix, int64_t* out) {
  const size_t n = std::char_traits<char>::length(prefix);
  if (folder.compare(0, n, prefix) != 0 || folder.size() == n) return false;
  char* end = nullptr;
  *out = strtoll(folder.c_str() + n, &end, 10);
  return *end == '\0';
}

}  // namespace

struct VisDbNodes::Impl {
  std::mutex mu;
  Db db;
  Schema schema;
  DbGraphKey key;
  Stmt node;
  Stmt stack;                                           // one tb_stack row by id
  Stmt names, orders, up;                               // the search's, prepared on its first use
  std::unordered_map<std::string, std::string> stacks;  // the tb_stack rows read so far
  RowContext ctx;
  SideRows sides[2];     // NPU, Bench: builders knowing the converted file's stacks
  size_t known[2] = {};  // how many stacks each side of the converted file holds
};

VisDbNodes::VisDbNodes(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VisDbNodes::~VisDbNodes() = default;

Result<std::unique_ptr<VisDbNodes>> VisDbNodes::Open(const std::string& path, const std::string& converted) {
  auto impl = std::make_unique<Impl>();
  auto reader = vis::VisReader::Open(converted);
  if (!reader.ok()) return reader.error();
  const vis::FileMeta& meta = (*reader)->meta();
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    if (!(*reader)->has_side(side)) continue;
    std::vector<std::vector<std::string>> stacks;
    for (const vis::SectionRef* ref : (*reader)->Sections(vis::SECTION_STACKS, side)) {
      vis::StackChunk chunk;
      GA_RETURN_IF_ERROR((*reader)->ReadSection(*ref, &chunk));
      for (const vis::Stack& s : chunk.stack()) stacks.emplace_back(s.frame().begin(), s.frame().end());
    }
    const int at = side == vis::SIDE_BENCH ? 1 : 0;
    impl->sides[at].builder.KnownStacks(stacks);
    impl->known[at] = impl->sides[at].builder.stack_count();
  }
  auto db = OpenReadOnly(path);
  if (!db.ok()) return db.error();
  impl->db = std::move(*db);
  sqlite3* h = impl->db.get();
  auto schema = ReadSchema(h, path);
  if (!schema.ok()) return schema.error();
  impl->schema = std::move(*schema);
  if (meta.step().empty() && meta.rank().empty()) {
    // The only graph of the file (GraphMetaOf names the graphs of several).
    auto s = Prepare(h, path, "SELECT step, rank FROM tb_nodes LIMIT 1", "table tb_nodes");
    if (!s.ok()) return s.error();
    if (sqlite3_step(s->get()) != SQLITE_ROW) return DbError(path, h, "table tb_nodes");
    impl->key.step = sqlite3_column_int64(s->get(), 0);
    impl->key.rank = sqlite3_column_int64(s->get(), 1);
  } else if (!FolderValue(meta.step(), "step", &impl->key.step) ||
             !FolderValue(meta.rank(), "rank", &impl->key.rank)) {
    return Error{converted, "meta", "step '" + meta.step() + "' and rank '" + meta.rank() + "' name no graph"};
  }
  auto node = PrepareNode(h, path, impl->schema);
  if (!node.ok()) return node.error();
  impl->node = std::move(*node);
  impl->ctx.path = path;
  impl->ctx.stack_table = impl->schema.node_columns.count("stack_id") != 0;
  impl->ctx.stacks = &impl->stacks;
  if (impl->ctx.stack_table) {
    auto s = Prepare(h, path, "SELECT stack_info FROM tb_stack WHERE id = ?", "table tb_stack");
    if (!s.ok()) return s.error();
    impl->stack = std::move(*s);
  }
  return std::unique_ptr<VisDbNodes>(new VisDbNodes(std::move(impl)));
}

Result<vis::NodeDetail> VisDbNodes::Detail(vis::Side side, const std::string& name) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  const std::string& path = m.ctx.path;
  const bool bench = side == vis::SIDE_BENCH;
  SideRows& rows = m.sides[bench ? 1 : 0];
  sqlite3_stmt* st = m.node.get();
  GA_RETURN_IF_ERROR(Bind(st, m.key, bench ? "Bench" : "NPU"));
  if (sqlite3_bind_text(st, 4, name.data(), static_cast<int>(name.size()), SQLITE_TRANSIENT) != SQLITE_OK) {
    return DbError(path, m.db.get(), "table tb_nodes, node '" + name + "'");
  }
  // The records of a repeated name add up in one node, as in ReadGraph.
  ForeignNode node;
  node.name = name;
  vis::NodeDetail detail;
  int found = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    ++found;
    std::string stack_id = m.ctx.stack_table ? Text(st, kStack) : std::string();
    if (!stack_id.empty() && !rows.stack_of.count(stack_id) && !m.stacks.count(stack_id)) {
      sqlite3_stmt* s = m.stack.get();
      sqlite3_reset(s);
      sqlite3_bind_text(s, 1, stack_id.data(), static_cast<int>(stack_id.size()), SQLITE_TRANSIENT);
      int src = sqlite3_step(s);
      if (src == SQLITE_ROW) {
        m.stacks.emplace(stack_id, Text(s, 0));
      } else if (src != SQLITE_DONE) {
        return DbError(path, m.db.get(), "table tb_stack, row '" + stack_id + "'");
      }
      sqlite3_reset(s);
    }
    Status read = ReadRow(st, m.ctx, &rows, &node, &detail);
    if (!read.ok()) {
      sqlite3_reset(st);
      return read.error();
    }
  }
  sqlite3_reset(st);
  const std::string where = "table tb_nodes, node '" + name + "'";
  if (rc != SQLITE_DONE) return DbError(path, m.db.get(), where);
  if (found == 0) return Error{path, where, std::string("no row of data_source ") + (bench ? "Bench" : "NPU")};
  if (detail.stack_id() >= 0 && static_cast<size_t>(detail.stack_id()) >= m.known[bench ? 1 : 0]) {
    return Error{path, where, "its stack is not one of the converted graph's"};
  }
  return detail;
}

Result<std::vector<VisDbNodes::Hit>> VisDbNodes::Find(vis::Side side,
                                                      const std::function<bool(std::string_view)>& match) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  const std::string& path = m.ctx.path;
  sqlite3* h = m.db.get();
  const char* source = side == vis::SIDE_BENCH ? "Bench" : "NPU";
  const std::string where = GraphWhere(m.key) + ", data_source " + source;
  if (!m.names) {
    // Each through its covering index (index2, index3): a few MB of index
    // pages, where the rows themselves (sub_nodes, items) are hundreds.
    const std::string side_rows = " FROM tb_nodes WHERE step = ?1 AND rank = ?2 AND data_source = ?3";
    for (auto [stmt, sql] : {std::pair{&m.names, "SELECT node_name, rowid" + side_rows},
                             std::pair{&m.orders, "SELECT node_order, rowid" + side_rows}}) {
      auto s = Prepare(h, path, sql, "table tb_nodes");
      if (!s.ok()) return s.error();
      *stmt = std::move(*s);
    }
  }
  std::vector<Hit> hits;
  std::unordered_map<int64_t, size_t> hit_of;  // rowid -> its hit
  std::optional<int64_t> root_row;
  sqlite3_stmt* st = m.names.get();
  GA_RETURN_IF_ERROR(Bind(st, m.key, source));
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    const std::string_view name(text == nullptr ? "" : text, static_cast<size_t>(sqlite3_column_bytes(st, 0)));
    const int64_t row = sqlite3_column_int64(st, 1);
    if (!root_row && name == "DefaultModel") root_row = row;
    if (!match(name)) continue;
    hit_of.emplace(row, hits.size());
    hits.push_back(Hit{0, std::string(name)});
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return DbError(path, h, where);
  // The places WriteVisDbOpening gives: node_order's rank, the root first;
  // none unless the orders are as many consecutive numbers as there are rows.
  std::vector<int64_t> order(hits.size());
  int64_t lo = INT64_MAX, hi = INT64_MIN, count = 0, root = 0;
  bool numbered = root_row.has_value();
  st = m.orders.get();
  GA_RETURN_IF_ERROR(Bind(st, m.key, source));
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (sqlite3_column_type(st, 0) != SQLITE_INTEGER) numbered = false;
    const int64_t o = sqlite3_column_int64(st, 0), row = sqlite3_column_int64(st, 1);
    lo = std::min(lo, o);
    hi = std::max(hi, o);
    ++count;
    if (root_row && row == *root_row) root = o;
    auto found = hit_of.find(row);
    if (found != hit_of.end()) order[found->second] = o;
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return DbError(path, h, where);
  if (!numbered || count == 0 || hi - lo + 1 != count) return std::vector<Hit>{};
  for (size_t i = 0; i < hits.size(); ++i) {
    const int64_t o = order[i];
    hits[i].index = static_cast<uint32_t>(o == root ? 0 : o - lo + (o < root ? 1 : 0));
  }
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.index < b.index; });
  return hits;
}

Result<std::vector<std::string>> VisDbNodes::Ancestors(vis::Side side, const std::string& name, size_t max,
                                                       uint32_t* omitted) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  const std::string& path = m.ctx.path;
  sqlite3* h = m.db.get();
  const char* source = side == vis::SIDE_BENCH ? "Bench" : "NPU";
  if (!m.up) {
    auto s = Prepare(h, path,
                     "SELECT up_node FROM tb_nodes WHERE step = ?1 AND rank = ?2 AND data_source = ?3 AND "
                     "node_name = ?4 LIMIT 1",
                     "table tb_nodes");
    if (!s.ok()) return s.error();
    m.up = std::move(*s);
  }
  std::vector<std::string> up;  // nearest first
  std::string at = name;
  *omitted = 0;
  // A cycle of up_node links ends after 65536 steps (the index says what is wrong).
  for (size_t steps = 0; steps < (size_t{1} << 16); ++steps) {
    sqlite3_stmt* st = m.up.get();
    GA_RETURN_IF_ERROR(Bind(st, m.key, source));
    if (sqlite3_bind_text(st, 4, at.data(), static_cast<int>(at.size()), SQLITE_TRANSIENT) != SQLITE_OK) {
      return DbError(path, h, "table tb_nodes, node '" + at + "'");
    }
    int rc = sqlite3_step(st);
    std::string parent = rc == SQLITE_ROW ? Text(st, 0) : std::string();
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return DbError(path, h, "table tb_nodes, node '" + at + "'");
    if (parent.empty() || parent == at) break;
    if (up.size() < max) {
      up.push_back(parent);
    } else {
      ++*omitted;
    }
    at = std::move(parent);
    if (at == "DefaultModel") break;
  }
  std::reverse(up.begin(), up.end());
  return up;
}

}  // namespace graph_ascend::formats
