// Inside the .vis.db reader (vis_db.cc) and its streaming converter
// (vis_db_convert.cc): the file's shared parts and one row at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "formats/model/graph_file.h"
#include "formats/vis_db/sqlite_db.h"
#include "formats/vis_db/vis_db.h"

namespace graph_ascend::formats::db_rows {

struct Schema {
  std::set<std::string> tables;
  std::set<std::string> node_columns;
  std::set<std::string> config_columns;
};
// The tables and columns, checked: an error names a missing one.
Result<Schema> ReadSchema(sqlite3* db, const std::string& path);

// The (step, rank) pairs and their node counts.
Result<std::vector<DbGraphKey>> ReadKeys(sqlite3* db, const std::string& path);

// The columns PrepareNodes selects, in this order.
enum NodeColumn {
  kName,
  kType,
  kUpNode,
  kSubNodes,
  kPrecision,
  kOverflow,
  kMicroStep,
  kLink,
  kStack,
  kMerge,
  kDistributed,
  kInput,
  kOutput,
  kSource,
  kDumpDir,
  kOrder,      // node_order: PrepareNode's statements but kWhole's only
  kChildList  // sub_nodes unparsed, for its children to be counted: kPlacedCounted's only
};

// The rows of one graph (parameters step, rank and, with `one_source`,
// data_source), in index3 order: by data_source, then node order. Without
// `items`, kInput and kOutput are 1 when the row has items, else 0 (the
// items JSON is not read out).
Result<Stmt> PrepareNodes(sqlite3* db, const std::string& path, const Schema& schema, bool one_source,
                          bool items = true);
Status Bind(sqlite3_stmt* s, const DbGraphKey& key, const char* source = nullptr);
// The rows of one node name of one side (parameters step, rank, data_source,
// node_name; through index2), items and all, in the order PrepareNodes gives
// them: ReadGraph's order of a repeated name's records.
// What PrepareNode reads of a node: kWhole its items and all; kPlaced no
// items (as PrepareNodes without them) and node_order as kOrder (the schema
// must have it); kPlacedCounted the same without the children's names
// (sub_nodes reads as none), its text as kChildList instead (CountStringList).
// The placed reads come in no order (for a name of one row: no sort).
enum class NodeRead { kWhole, kPlaced, kPlacedCounted };
Result<Stmt> PrepareNode(sqlite3* db, const std::string& path, const Schema& schema,
                         NodeRead read = NodeRead::kWhole);

// The number of strings in a JSON array of strings (sub_nodes), found without
// unescaping them: a scan for quotes, not a parse (the first screen counts a
// row's 10^4-10^5 children). nullopt when `text` is not such an array.
std::optional<uint64_t> CountStringList(std::string_view text);

// A column's text in place: valid until the statement steps again.
std::string_view View(sqlite3_stmt* s, int col);

// What reading a row needs besides the row.
struct RowContext {
  std::string path;
  bool stack_table = false;  // stack_id into tb_stack, else inline stack_info
  const std::unordered_map<std::string, std::string>* stacks = nullptr;  // tb_stack
  bool single_micro_step = true;
};

// One side of one graph being read.
struct SideRows {
  SideBuilder builder;
  vis::GraphMeta meta;
  std::unordered_map<std::string, int32_t> stack_of;  // tb_stack id (or inline text) -> builder stack id
};

// Reads the current row: the hierarchy into `node` (of `side`), the details
// into `detail` (the node's own or one streamed elsewhere). Without `items`
// (a statement of PrepareNodes without items) the items are left out and
// only whether there are some is read.
Status ReadRow(sqlite3_stmt* st, const RowContext& ctx, SideRows* side, ForeignNode* node, vis::NodeDetail* detail,
               bool items = true);

// What every graph of the file shares, read before its rows.
struct DbFile {
  Db db;
  Schema schema;
  vis::FileMeta meta;
  std::unordered_map<std::string, std::string> stacks;
  std::vector<DbGraphKey> keys;  // never empty, unless opened without them
  RowContext ctx;
};
// Without `keys` the (step, rank) pairs are not counted (a pass over every row): `keys` stays empty.
Result<std::unique_ptr<DbFile>> OpenDbFile(const std::string& path, bool keys = true);

// The FileMeta of one graph of the file.
vis::FileMeta GraphMetaOf(const DbFile& f, const DbGraphKey& key);
// "table tb_nodes (step S, rank R)".
std::string GraphWhere(const DbGraphKey& key);
// Finishes both sides of a graph into `g` (details as the builders hold them).
Status FinishGraph(const std::string& path, const DbGraphKey& key, SideRows* npu, SideRows* bench, GraphFile* g);
// Reads one graph whole through `st` (PrepareNodes of all sources), its
// details in the nodes; a repeated name: the later row wins field by field.
Status ReadGraph(DbFile& f, sqlite3_stmt* st, const DbGraphKey& key, GraphFile* g);

}  // namespace graph_ascend::formats::db_rows
