// WriteVisDbOpening (vis_db.h): the opening screen of a graph from a few
// indexed queries (index2 by name, index3 for a side's orders, index4 for the
// graph), whatever the graph's size; the two sides on two connections.
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
Status ReadNode(sqlite3* db, const RowContext& ctx, sqlite3_stmt* st, bool counted, const DbGraphKey& key, Side* side,
                const std::string& name, bool* ok) {
  *ok = false;
  GA_RETURN_IF_ERROR(Bind(st, key, side->source));
  if (sqlite3_bind_text(st, 4, name.data(), static_cast<int>(name.size()), SQLITE_TRANSIENT) != SQLITE_OK) {
    return DbError(ctx.path, db, "table tb_nodes, node '" + name + "'");
  }
  Loaded l;
  vis::NodeDetail detail;
  int rows = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (++rows > 1) break;  // a repeated name merges records: left to the conversion
    l.node.name = name;
    Status read = ReadRow(st, ctx, &side->rows, &l.node, &detail, false);
    if (!read.ok()) rows = 2;
    l.order = sqlite3_column_int64(st, kOrder);
    if (counted) {
      std::optional<uint64_t> count = CountStringList(View(st, kChildList));
      if (!count) rows = 2;  // not a list of names: the conversion says so
      l.child_count = count.value_or(0);
    }
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

// Reads a side's span of orders, its root and the root's children through
// `db`. False in *ok when the side cannot open this way.
Status ReadSide(sqlite3* db, const DbFile& f, const DbGraphKey& key, uint64_t min_nodes, Side* side, bool* ok) {
  *ok = false;
  const std::string& path = f.ctx.path;
  auto lo = One(db, path, "SELECT min(node_order) FROM tb_nodes WHERE step = ? AND rank = ? AND data_source = ?", key,
                side->source);
  if (!lo.ok()) return lo.error();
  auto hi = One(db, path, "SELECT max(node_order) FROM tb_nodes WHERE step = ? AND rank = ? AND data_source = ?", key,
                side->source);
  if (!hi.ok()) return hi.error();
  if (!lo->has_value() || !hi->has_value()) return Status::Ok();
  side->min_order = **lo;
  side->max_order = **hi;
  const uint64_t n = static_cast<uint64_t>(side->max_order - side->min_order) + 1;
  if (side->max_order < side->min_order || n < min_nodes || n >= (uint64_t{1} << 31)) return Status::Ok();
  auto whole = PrepareNode(db, path, f.schema, NodeRead::kPlaced);  // the root: its children's names
  if (!whole.ok()) return whole.error();
  auto counted = PrepareNode(db, path, f.schema, NodeRead::kPlacedCounted);
  if (!counted.ok()) return counted.error();
  bool read = false;
  GA_RETURN_IF_ERROR(ReadNode(db, f.ctx, whole->get(), false, key, side, "DefaultModel", &read));
  if (!read) return Status::Ok();
  side->loaded.front().children_loaded = true;
  const std::vector<std::string> kids = side->loaded.front().node.children;
  for (const std::string& c : kids) {
    if (side->by_name.count(c)) return Status::Ok();
    GA_RETURN_IF_ERROR(ReadNode(db, f.ctx, counted->get(), true, key, side, c, &read));
    if (!read) return Status::Ok();
  }
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

// The side's index: loaded nodes at their places, nameless ones elsewhere
// (vis::PartialSideIndex: no column of every node). False in *ok when the
// places collide or the nameless nodes do not fit.
Status BuildIndex(const Side& side, const Side* other, vis::PartialSideIndex* out, bool* ok) {
  *ok = false;
  const uint64_t n = static_cast<uint64_t>(side.max_order - side.min_order) + 1;
  std::vector<size_t> in_order(side.loaded.size());
  for (size_t i = 0; i < in_order.size(); ++i) in_order[i] = i;
  std::sort(in_order.begin(), in_order.end(),
            [&](size_t a, size_t b) { return side.loaded[a].at < side.loaded[b].at; });
  std::vector<uint32_t> taken;  // the loaded nodes' places, increasing
  std::vector<size_t> slot(side.loaded.size());  // loaded node -> its entry in out->known
  for (size_t j = 0; j < in_order.size(); ++j) {
    const uint32_t at = side.loaded[in_order[j]].at;
    if (at >= n || (!taken.empty() && taken.back() == at)) return Status::Ok();
    taken.push_back(at);
    slot[in_order[j]] = j;
  }
  out->size = static_cast<uint32_t>(n);
  out->known.assign(side.loaded.size(), {});
  // Children each loaded node lists: loaded ones where they stand (the root's:
  // distinct nodes other than the root, ReadSide checks), the others nameless
  // in the free places in turn. A forest by construction.
  uint64_t free_at = 0;
  size_t next_taken = 0;
  for (size_t i = 0; i < side.loaded.size(); ++i) {
    const Loaded& l = side.loaded[i];
    vis::PartialSideIndex::Known& k = out->known[slot[i]];
    const uint64_t count = l.children_loaded ? l.node.children.size() : l.child_count;
    k.children.reserve(count);
    for (uint64_t c = 0; c < count; ++c) {
      if (l.children_loaded) {
        auto found = side.by_name.find(l.node.children[c]);
        if (found == side.by_name.end()) return Status::Ok();
        k.children.push_back(side.loaded[found->second].at);
        continue;
      }
      for (;;) {  // the next place no loaded node holds
        while (next_taken < taken.size() && taken[next_taken] < free_at) ++next_taken;
        if (next_taken == taken.size() || taken[next_taken] != free_at) break;
        ++free_at;
      }
      if (free_at >= n) return Status::Ok();
      k.children.push_back(static_cast<uint32_t>(free_at++));
    }
    const ForeignNode& node = l.node;
    if (!vis::NodeType_IsValid(static_cast<int>(node.node_type)) || node.node_type > 255 ||
        node.overflow > vis::OVERFLOW_CRITICAL || node.micro_step < -1) {
      return Status::Ok();  // the conversion says what is wrong
    }
    k.index = l.at;
    k.name = node.name;
    k.node_type = static_cast<uint8_t>(node.node_type);
    k.micro_step = node.micro_step;
    k.precision = node.precision;
    k.overflow = static_cast<uint8_t>(node.overflow);
    if (other != nullptr && !node.matched.empty()) {
      auto peer = other->by_name.find(node.matched);
      if (peer == other->by_name.end()) return Status::Ok();
      k.matched = static_cast<int32_t>(other->loaded[peer->second].at);
    }
    uint32_t flags = 0;
    if (node.has_data) flags |= vis::FLAG_HAS_DATA;
    if (node.precision_float && !std::isnan(node.precision)) flags |= vis::FLAG_PRECISION_FLOAT;
    if (node.distributed || node.detail.distributed_size() > 0) flags |= vis::FLAG_DISTRIBUTED;
    k.flags = flags;
  }
  *ok = true;
  return Status::Ok();
}

// The root of `idx` alone.
vis::SideIndex RootOf(const vis::PartialSideIndex& idx) {
  const vis::PartialSideIndex::Known& r = idx.known.front();
  vis::SideIndex root;
  root.names = r.name;
  root.name_offset = {0, root.names.size()};
  root.node_type = {r.node_type};
  root.parent = {-1};
  root.child_offset = {0, 0};
  root.micro_step = {r.micro_step};
  root.precision = {r.precision};
  root.overflow = {r.overflow};
  root.matched = {-1};
  root.flags = {r.flags};
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
  const int side_count = compare ? 2 : 1;
  Side sides[2] = {{"NPU", {}, 0, 0, {}, {}}, {"Bench", {}, 0, 0, {}, {}}};
  // A graph of a file of several: each side's row count (a scan of index3,
  // the longest query here) on a connection of its own beside the reads
  // below; checked before the places are given.
  Result<std::optional<int64_t>> counts[2] = {Error{}, Error{}};
  std::optional<BackgroundWork> counting;
  if (several) {
    counting.emplace([&] {
      auto own = OpenReadOnly(path);
      for (int s = 0; s < side_count; ++s) {
        counts[s] = own.ok() ? One(own->get(), path,
                                   "SELECT count(*) FROM tb_nodes WHERE step = ? AND rank = ? AND data_source = ?",
                                   key, sides[s].source)
                             : Result<std::optional<int64_t>>(own.error());
      }
    });
  }
  // The sides are read side by side, the Bench side on a connection of its own.
  Status bench_read = Status::Ok();
  bool read[2] = {false, false};
  std::optional<BackgroundWork> bench_work;
  if (compare) {
    bench_work.emplace([&] {
      auto own = OpenReadOnly(path);
      bench_read = own.ok() ? ReadSide(own->get(), f, key, min_nodes, &sides[1], &read[1]) : Status(own.error());
    });
  }
  GA_RETURN_IF_ERROR(ReadSide(db, f, key, min_nodes, &sides[0], &read[0]));
  if (bench_work) {
    GA_RETURN_IF_ERROR(bench_work->Join(path));
    GA_RETURN_IF_ERROR(bench_read);
  }
  if (!read[0] || (compare && !read[1])) return none;
  if (compare) {
    auto counted = PrepareNode(db, path, f.schema, NodeRead::kPlacedCounted);
    if (!counted.ok()) return counted.error();
    // The peers the loaded nodes are matched with, on the other side (nameless children: they are not shown).
    for (int s = 0; s < 2; ++s) {
      Side& other = sides[1 - s];
      const size_t count = sides[s].loaded.size();
      for (size_t i = 0; i < count; ++i) {
        const std::string peer = sides[s].loaded[i].node.matched;
        if (peer.empty() || other.by_name.count(peer)) continue;
        bool ok = false;
        GA_RETURN_IF_ERROR(ReadNode(db, f.ctx, counted->get(), true, key, &other, peer, &ok));
        if (!ok) return none;
        other.loaded.back().child_count = 0;  // not shown: its place is what matters
      }
    }
  }
  // Consecutive numbers: as many rows as the span (a repeated order or a gap
  // fails it). The file's only graph: SQLite counts the table from its pages
  // (no row visited), against both spans together.
  if (counting) {
    GA_RETURN_IF_ERROR(counting->Join(path));
    for (int s = 0; s < side_count; ++s) {
      if (!counts[s].ok()) return counts[s].error();
      const uint64_t n = static_cast<uint64_t>(sides[s].max_order - sides[s].min_order) + 1;
      if (!counts[s]->has_value() || static_cast<uint64_t>(**counts[s]) != n) return none;
    }
  } else {
    auto total = Prepare(db, path, "SELECT count(*) FROM tb_nodes", "table tb_nodes");  // no WHERE: OP_Count
    if (!total.ok()) return total.error();
    if (sqlite3_step(total->get()) != SQLITE_ROW) return DbError(path, db, "table tb_nodes");
    uint64_t spans = 0;
    for (int s = 0; s < side_count; ++s) spans += static_cast<uint64_t>(sides[s].max_order - sides[s].min_order) + 1;
    if (static_cast<uint64_t>(sqlite3_column_int64(total->get(), 0)) != spans) return none;
  }
  DbOpening opening;
  opening.meta = meta;
  vis::PartialSideIndex* index[2] = {&opening.npu, &opening.bench};
  for (int s = 0; s < side_count; ++s) Place(sides[s]);  // a side's matches are the other's places
  for (int s = 0; s < side_count; ++s) {
    bool built = false;
    GA_RETURN_IF_ERROR(BuildIndex(sides[s], compare ? &sides[1 - s] : nullptr, index[s], &built));
    if (!built) return none;
    sides[s].rows.meta.set_root("DefaultModel");
    *(s == 0 ? opening.meta.mutable_npu() : opening.meta.mutable_bench()) = sides[s].rows.meta;
  }
  // A link written on one side only holds for both, as ResolveMatches has it
  // (a loaded node's peer is loaded: known on the other side).
  if (compare) {
    for (int s = 0; s < 2; ++s) {
      vis::PartialSideIndex& other = *index[1 - s];
      for (const vis::PartialSideIndex::Known& k : index[s]->known) {
        if (k.matched < 0) continue;
        vis::PartialSideIndex::Known* peer = other.Find(static_cast<uint32_t>(k.matched));
        if (peer != nullptr && peer->matched < 0) peer->matched = static_cast<int32_t>(k.index);
      }
    }
  }
  // The file holds the meta, the stacks and the root alone: the sides stay in memory.
  GraphFile shell;
  shell.meta = opening.meta;
  for (int s = 0; s < side_count; ++s) {
    GraphSide& to = s == 0 ? shell.npu : shell.bench;
    to.index = RootOf(*index[s]);
    to.stacks = sides[s].rows.builder.stacks();
  }
  auto writer = vis::VisWriter::Create(out);
  if (!writer.ok()) return writer.error();
  (*writer)->set_durable(false);  // written again by the next server that needs it
  GA_RETURN_IF_ERROR(WriteIndexAndStacks(shell, writer->get(), &shell.meta));
  GA_RETURN_IF_ERROR((*writer)->WriteMeta(shell.meta));
  GA_RETURN_IF_ERROR((*writer)->Commit());
  if (several) opening.id = "step" + std::to_string(key.step) + "_rank" + std::to_string(key.rank);
  return std::optional<DbOpening>(std::move(opening));
}

}  // namespace graph_ascend::formats
