// WriteVisDbOpening (vis_db.h): the opening screen of a graph from a few
// indexed queries (index2 by name, index3 for a side's orders, index4 for the
// graph), whatever the graph's size.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <map>
#include <optional>

#include "base/parallel.h"
#include "formats/vis_db/vis_db.h"
#include "formats/vis_db/vis_db_rows.h"
#include "vis/vis_file.h"

namespace graph_ascend::formats {
namespace {

using namespace db_rows;  // NOLINT: the reader's parts

// One node read for the opening: its row and where ConvertVisDbIndex puts it.
struct Loaded {
  ForeignNode node;
  int64_t order = 0;
  uint32_t at = 0;
  bool children_loaded = false;  // its children are loaded nodes, not nameless ones
  uint64_t child_count = 0;      // otherwise: how many nameless children hang from it
};

struct Side {
  const char* source;
  SideRows rows;
  int64_t min_order = 0, max_order = 0;
  std::vector<Loaded> loaded;  // the root first
  std::map<std::string, size_t, std::less<>> by_name;
};

// One int64 of a query binding step, rank and (when given) data_source; nullopt when no row or NULL.
Result<std::optional<int64_t>> One(sqlite3* db, const std::string& path, const std::string& sql,
                                   const DbGraphKey& key, const char* source) {
  auto s = Prepare(db, path, sql, "table tb_nodes");
  if (!s.ok()) return s.error();
  GA_RETURN_IF_ERROR(Bind(s->get(), key, source));
  int rc = sqlite3_step(s->get());
  if (rc == SQLITE_DONE) return std::optional<int64_t>();
  if (rc != SQLITE_ROW) return DbError(path, db, GraphWhere(key));
  if (sqlite3_column_type(s->get(), 0) == SQLITE_NULL) return std::optional<int64_t>();
  return std::optional<int64_t>(sqlite3_column_int64(s->get(), 0));
}

// "step12" -> 12, "rank3" -> 3; false for anything else.
bool Number(std::string_view text, std::string_view prefix, int64_t* out) {
  if (text.substr(0, prefix.size()) != prefix || text.size() == prefix.size()) return false;
  std::string digits(text.substr(prefix.size()));
  char* end = nullptr;
  *out = strtoll(digits.c_str(), &end, 10);
  return *end == '\0' && digits[0] >= '0' && digits[0] <= '9';
}

// Reads node `name` of `side` through `st` (PrepareNode's kPlaced, or
// kPlacedCounted: its children are counted, not named). False in *ok when it
// is not exactly one row, or SQLite cannot read it: the conversion says why.
Status ReadNode(const DbFile& f, sqlite3_stmt* st, bool counted, const DbGraphKey& key, Side* side,
                const std::string& name, bool* ok) {
  *ok = false;
  GA_RETURN_IF_ERROR(Bind(st, key, side->source));
  if (sqlite3_bind_text(st, 4, name.data(), static_cast<int>(name.size()), SQLITE_TRANSIENT) != SQLITE_OK) {
    return DbError(f.ctx.path, f.db.get(), "table tb_nodes, node '" + name + "'");
  }
  Loaded l;
  vis::NodeDetail detail;
  int rows = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (++rows > 1) break;  // a repeated name merges records: left to the conversion
    l.node.name = name;
    Status read = ReadRow(st, f.ctx, &side->rows, &l.node, &detail, false);
    if (!read.ok()) rows = 2;
    l.order = sqlite3_column_int64(st, kOrder);
    if (counted) l.child_count = static_cast<uint64_t>(std::max<int64_t>(0, sqlite3_column_int64(st, kChildCount)));
  }
  sqlite3_reset(st);
  if ((rc != SQLITE_DONE && rc != SQLITE_ROW) || rows != 1 || l.order < side->min_order || l.order > side->max_order) {
    return Status::Ok();
  }
  l.node.detail = std::move(detail);
  side->by_name.emplace(name, side->loaded.size());
  side->loaded.push_back(std::move(l));
  *ok = true;
  return Status::Ok();
}

// Where ConvertVisDbIndex puts each loaded node: its rank in node_order,
// the root first (msprobe 26 writes the root last, 8.x first).
void Place(Side& side) {
  const int64_t root_order = side.loaded.front().order;
  for (size_t i = 0; i < side.loaded.size(); ++i) {
    Loaded& l = side.loaded[i];
    l.at = i == 0 ? 0 : static_cast<uint32_t>(l.order - side.min_order + (l.order < root_order ? 1 : 0));
  }
}

// The side's index: loaded nodes at their places, nameless ones elsewhere.
// False in *ok when the places collide or the nameless nodes do not fit.
Status BuildIndex(Side& side, const Side* other, GraphSide* out, bool* ok) {
  *ok = false;
  const uint64_t n = static_cast<uint64_t>(side.max_order - side.min_order) + 1;
  std::vector<int32_t> slot(n, -1);  // node -> its loaded node
  for (size_t i = 0; i < side.loaded.size(); ++i) {
    const uint32_t at = side.loaded[i].at;
    if (at >= n || slot[at] >= 0) return Status::Ok();
    slot[at] = static_cast<int32_t>(i);
  }
  // Children each loaded node lists: loaded ones where they stand, the others nameless in free places.
  std::vector<int32_t> parent(n, -1);
  std::vector<std::vector<uint32_t>> children(side.loaded.size());
  uint64_t free_at = 0;
  for (size_t i = 0; i < side.loaded.size(); ++i) {
    const Loaded& l = side.loaded[i];
    const uint64_t count = l.children_loaded ? l.node.children.size() : l.child_count;
    for (uint64_t k = 0; k < count; ++k) {
      uint32_t child;
      if (l.children_loaded) {
        auto found = side.by_name.find(l.node.children[k]);
        if (found == side.by_name.end()) return Status::Ok();
        child = side.loaded[found->second].at;
      } else {
        while (free_at < n && (slot[free_at] >= 0 || parent[free_at] >= 0)) ++free_at;
        if (free_at >= n) return Status::Ok();
        child = static_cast<uint32_t>(free_at);
      }
      if (parent[child] >= 0) return Status::Ok();
      parent[child] = static_cast<int32_t>(l.at);
      children[i].push_back(child);
    }
  }
  // Nameless nodes everywhere (column-wide fills), then the loaded ones, a
  // few among n, over them in index order.
  vis::SideIndex& idx = out->index;
  idx.name_offset.assign(n + 1, 0);
  idx.child_offset.assign(n + 1, 0);
  idx.node_type.assign(n, static_cast<uint8_t>(vis::NODE_MODULE));
  idx.parent = std::move(parent);
  idx.micro_step.assign(n, -1);
  idx.precision.assign(n, std::numeric_limits<double>::quiet_NaN());
  idx.overflow.assign(n, 0);
  idx.matched.assign(n, -1);
  idx.flags.assign(n, 0);
  std::vector<size_t> in_order(side.loaded.size());
  for (size_t i = 0; i < in_order.size(); ++i) in_order[i] = i;
  std::sort(in_order.begin(), in_order.end(),
            [&](size_t a, size_t b) { return side.loaded[a].at < side.loaded[b].at; });
  uint64_t next = 0;  // the offsets of nodes before it are set
  auto nameless_to = [&](uint64_t end) {  // nodes [next, end): no name, no children
    std::fill(idx.name_offset.begin() + static_cast<std::ptrdiff_t>(next) + 1,
              idx.name_offset.begin() + static_cast<std::ptrdiff_t>(end) + 1, idx.names.size());
    std::fill(idx.child_offset.begin() + static_cast<std::ptrdiff_t>(next) + 1,
              idx.child_offset.begin() + static_cast<std::ptrdiff_t>(end) + 1,
              static_cast<uint32_t>(idx.children.size()));
    next = end;
  };
  for (size_t i : in_order) {
    const Loaded& l = side.loaded[i];
    const uint32_t at = l.at;
    const ForeignNode& node = l.node;
    if (!vis::NodeType_IsValid(static_cast<int>(node.node_type)) || node.node_type > 255 ||
        node.overflow > vis::OVERFLOW_CRITICAL || node.micro_step < -1) {
      return Status::Ok();  // the conversion says what is wrong
    }
    nameless_to(at);
    idx.names += node.name;
    idx.name_offset[at + 1] = idx.names.size();
    idx.node_type[at] = static_cast<uint8_t>(node.node_type);
    for (uint32_t c : children[i]) idx.children.push_back(c);
    idx.child_offset[at + 1] = static_cast<uint32_t>(idx.children.size());
    idx.micro_step[at] = node.micro_step;
    idx.precision[at] = node.precision;
    idx.overflow[at] = static_cast<uint8_t>(node.overflow);
    if (other != nullptr && !node.matched.empty()) {
      auto peer = other->by_name.find(node.matched);
      if (peer == other->by_name.end()) return Status::Ok();
      idx.matched[at] = static_cast<int32_t>(other->loaded[peer->second].at);
    }
    uint32_t flags = 0;
    if (node.has_data) flags |= vis::FLAG_HAS_DATA;
    if (node.precision_float && !std::isnan(node.precision)) flags |= vis::FLAG_PRECISION_FLOAT;
    if (node.distributed || node.detail.distributed_size() > 0) flags |= vis::FLAG_DISTRIBUTED;
    idx.flags[at] = flags;
    next = at + 1;
  }
  nameless_to(n);
  if (vis::FindForestFault(idx)) return Status::Ok();
  out->stacks = side.rows.builder.stacks();
  *ok = true;
  return Status::Ok();
}

// The root of `idx` alone.
vis::SideIndex RootOf(const vis::SideIndex& idx) {
  vis::SideIndex root;
  root.names = std::string(idx.Name(0));
  root.name_offset = {0, root.names.size()};
  root.node_type = {idx.node_type[0]};
  root.parent = {-1};
  root.child_offset = {0, 0};
  root.micro_step = {idx.micro_step[0]};
  root.precision = {idx.precision[0]};
  root.overflow = {idx.overflow[0]};
  root.matched = {-1};
  root.flags = {idx.flags[0]};
  return root;
}

}  // namespace

Result<std::optional<DbOpening>> WriteVisDbOpening(const std::string& path, const std::string& id,
                                                   uint64_t min_nodes, const std::string& out) {
  const std::optional<DbOpening> none;
  auto file = OpenDbFile(path, false);
  if (!file.ok()) return file.error();
  DbFile& f = **file;
  sqlite3* db = f.db.get();
  if (!f.schema.node_columns.count("node_order")) return none;
  // The graph: the one `id` names, else the first (index4 in both).
  DbGraphKey key;
  bool several = !id.empty();
  if (several) {
    size_t cut = id.find('_');
    if (cut == std::string::npos || !Number(std::string_view(id).substr(0, cut), "step", &key.step) ||
        !Number(std::string_view(id).substr(cut + 1), "rank", &key.rank)) {
      return none;
    }
  } else {
    auto s = Prepare(db, path, "SELECT step, rank FROM tb_nodes ORDER BY step, rank LIMIT 1", "table tb_nodes");
    if (!s.ok()) return s.error();
    if (sqlite3_step(s->get()) != SQLITE_ROW) return none;
    key.step = sqlite3_column_int64(s->get(), 0);
    key.rank = sqlite3_column_int64(s->get(), 1);
    auto later = One(db, path, "SELECT 1 FROM tb_nodes WHERE step = ? AND rank > ? LIMIT 1", key, nullptr);
    if (!later.ok()) return later.error();
    auto next = One(db, path, "SELECT 1 FROM tb_nodes WHERE step > ?1 AND ?2 = ?2 LIMIT 1", key, nullptr);
    if (!next.ok()) return next.error();
    several = later->has_value() || next->has_value();
  }
  vis::FileMeta meta = f.meta;
  meta.set_format_version(vis::kFormatVersion);
  meta.set_writer("msprobe .vis.db");
  meta.set_created_unix(static_cast<int64_t>(time(nullptr)));
  if (several) {  // as GraphMetaOf names a graph of several
    meta.set_step("step" + std::to_string(key.step));
    meta.set_rank("rank" + std::to_string(key.rank));
  }
  const bool compare = meta.kind() == vis::GRAPH_COMPARE;
  Side sides[2] = {{"NPU", {}, 0, 0, {}, {}}, {"Bench", {}, 0, 0, {}, {}}};
  // Each side's row count (a scan of index3, the longest query here) runs
  // on a connection of its own beside the reads below; checked before the
  // places are given.
  Result<std::optional<int64_t>> counts[2] = {Error{}, Error{}};
  BackgroundWork counting([&] {
    auto own = OpenReadOnly(path);
    for (int s = 0; s < (compare ? 2 : 1); ++s) {
      counts[s] = own.ok() ? One(own->get(), path,
                                 "SELECT count(*) FROM tb_nodes WHERE step = ? AND rank = ? AND data_source = ?", key,
                                 sides[s].source)
                           : Result<std::optional<int64_t>>(own.error());
    }
  });
  auto whole = PrepareNode(db, path, f.schema, NodeRead::kPlaced);  // the root: its children's names
  if (!whole.ok()) return whole.error();
  auto counted = PrepareNode(db, path, f.schema, NodeRead::kPlacedCounted);
  if (!counted.ok()) return counted.error();
  for (int s = 0; s < (compare ? 2 : 1); ++s) {
    Side& side = sides[s];
    // A side's orders are min..max over its rows.
    auto lo = One(db, path, "SELECT min(node_order) FROM tb_nodes WHERE step = ? AND rank = ? AND data_source = ?",
                  key, side.source);
    if (!lo.ok()) return lo.error();
    auto hi = One(db, path, "SELECT max(node_order) FROM tb_nodes WHERE step = ? AND rank = ? AND data_source = ?",
                  key, side.source);
    if (!hi.ok()) return hi.error();
    if (!lo->has_value() || !hi->has_value()) return none;
    side.min_order = **lo;
    side.max_order = **hi;
    const uint64_t n = static_cast<uint64_t>(side.max_order - side.min_order) + 1;
    if (side.max_order < side.min_order || n < min_nodes || n >= (uint64_t{1} << 31)) return none;
    bool ok = false;
    GA_RETURN_IF_ERROR(ReadNode(f, whole->get(), false, key, &side, "DefaultModel", &ok));
    if (!ok) return none;
    side.loaded.front().children_loaded = true;
    const std::vector<std::string> kids = side.loaded.front().node.children;
    for (const std::string& c : kids) {
      if (side.by_name.count(c)) return none;
      GA_RETURN_IF_ERROR(ReadNode(f, counted->get(), true, key, &side, c, &ok));
      if (!ok) return none;
    }
  }
  if (compare) {
    // The peers the loaded nodes are matched with, on the other side (nameless children: they are not shown).
    for (int s = 0; s < 2; ++s) {
      Side& other = sides[1 - s];
      const size_t count = sides[s].loaded.size();
      for (size_t i = 0; i < count; ++i) {
        const std::string peer = sides[s].loaded[i].node.matched;
        if (peer.empty() || other.by_name.count(peer)) continue;
        bool ok = false;
        GA_RETURN_IF_ERROR(ReadNode(f, counted->get(), true, key, &other, peer, &ok));
        if (!ok) return none;
        other.loaded.back().child_count = 0;  // not shown: its place is what matters
      }
    }
  }
  // Consecutive numbers: as many rows as the span (a repeated order or a gap fails it).
  GA_RETURN_IF_ERROR(counting.Join(path));
  for (int s = 0; s < (compare ? 2 : 1); ++s) {
    if (!counts[s].ok()) return counts[s].error();
    const uint64_t n = static_cast<uint64_t>(sides[s].max_order - sides[s].min_order) + 1;
    if (!counts[s]->has_value() || static_cast<uint64_t>(**counts[s]) != n) return none;
  }
  GraphFile g;
  g.meta = meta;
  for (int s = 0; s < (compare ? 2 : 1); ++s) Place(sides[s]);
  for (int s = 0; s < (compare ? 2 : 1); ++s) {
    bool ok = false;
    GA_RETURN_IF_ERROR(BuildIndex(sides[s], compare ? &sides[1 - s] : nullptr, s == 0 ? &g.npu : &g.bench, &ok));
    if (!ok) return none;
    sides[s].rows.meta.set_root("DefaultModel");
    *(s == 0 ? g.meta.mutable_npu() : g.meta.mutable_bench()) = sides[s].rows.meta;
  }
  // A link written on one side only holds for both, as ResolveMatches has it.
  if (compare) {
    for (int s = 0; s < 2; ++s) {
      vis::SideIndex& a = s == 0 ? g.npu.index : g.bench.index;
      vis::SideIndex& b = s == 0 ? g.bench.index : g.npu.index;
      for (uint32_t i = 0; i < a.size(); ++i) {
        if (a.matched[i] >= 0 && b.matched[static_cast<uint32_t>(a.matched[i])] < 0) {
          b.matched[static_cast<uint32_t>(a.matched[i])] = static_cast<int32_t>(i);
        }
      }
    }
  }
  // The file holds the meta, the stacks and the root alone: the sides stay in memory.
  GraphFile shell;
  shell.meta = g.meta;
  for (int s = 0; s < (compare ? 2 : 1); ++s) {
    const GraphSide& from = s == 0 ? g.npu : g.bench;
    GraphSide& to = s == 0 ? shell.npu : shell.bench;
    to.index = RootOf(from.index);
    to.stacks = from.stacks;
  }
  auto writer = vis::VisWriter::Create(out);
  if (!writer.ok()) return writer.error();
  (*writer)->set_durable(false);  // written again by the next server that needs it
  GA_RETURN_IF_ERROR(WriteIndexAndStacks(shell, writer->get(), &shell.meta));
  GA_RETURN_IF_ERROR((*writer)->WriteMeta(shell.meta));
  GA_RETURN_IF_ERROR((*writer)->Commit());
  DbOpening opening;
  opening.graph = std::move(g);
  if (several) opening.id = "step" + std::to_string(key.step) + "_rank" + std::to_string(key.rank);
  return std::optional<DbOpening>(std::move(opening));
}

}  // namespace graph_ascend::formats
