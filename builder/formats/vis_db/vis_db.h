// msprobe's SQLite .vis.db (msprobe 8.2-26.x; reference notes §1.5): one
// file holds the graphs of every step and rank of a run in tb_nodes (one
// row per node, data_source NPU or Bench), one tb_config row, and the
// deduplicated stacks in tb_stack.
//
// Schemas read: 8.2/8.3 (tb_stack and stack_id; also an inline stack_info
// without tb_stack), 26.x (is_distributed and index7). Written: the 26.x schema with
// its seven indexes, values as msprobe writes them (items and links as JSON
// text, every item value a string).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/model/graph_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::formats {

// One graph of a .vis.db: its step and rank columns and the graph.
struct DbGraph {
  int64_t step = 0;
  int64_t rank = 0;
  GraphFile graph;
};

// The (step, rank) pairs a .vis.db holds, ordered, without reading nodes.
struct DbGraphKey {
  int64_t step = 0;
  int64_t rank = 0;
  uint64_t npu_nodes = 0;
  uint64_t bench_nodes = 0;
};
Result<std::vector<DbGraphKey>> ListVisDb(const std::string& path);

// Reads every graph of a .vis.db, ordered by step then rank. When the file
// holds more than one graph, each graph's FileMeta gets step "step<S>" and
// rank "rank<R>" as graph-ascend's batch names them. The file is opened
// read-only and immutable: nothing (no -wal, -shm or -journal file) is
// written beside it. Errors name the file and the table, row or column.
Result<std::vector<DbGraph>> ReadVisDb(const std::string& path);

// Converts every graph of a .vis.db into a graph-ascend .vis each, as
// ReadVisDb and WriteVisFile would, but streaming: each row's details go from
// the row into the file, so the file's items are never all in memory.
// `out_path` names the file of a graph from its FileMeta (step and rank set as
// ReadVisDb sets them), "" to skip the graph; `progress` gets 0..1 by rows read. Returns the files
// written, in ReadVisDb's order; on error none is left.
Result<std::vector<std::string>> ConvertVisDb(const std::string& path,
                                              const std::function<std::string(const vis::FileMeta&)>& out_path,
                                              const std::function<void(double)>& progress = {});

// The hierarchy first: as ConvertVisDb, but each file gets the node index,
// stacks and meta only, no NodeDetail (the items JSON is not read), in the
// node order ConvertVisDb gives the same graph. The service opens such a file
// at once and reads details from ConvertVisDb's file when it is written. A
// graph that cannot be streamed in node order is written whole instead:
// (*whole)[i] is true when written[i] holds its details all the same.
Result<std::vector<std::string>> ConvertVisDbIndex(const std::string& path,
                                                   const std::function<std::string(const vis::FileMeta&)>& out_path,
                                                   const std::function<void(double)>& progress,
                                                   std::vector<bool>* whole);

// The opening screen of one graph, read straight from SQLite for the service
// while ConvertVisDbIndex converts the whole index (a few indexed queries,
// whatever the graph's size): each side's index of the graph's node count
// (vis::PartialSideIndex), where the root, its children and the nodes they
// are matched with are known at the indices ConvertVisDbIndex gives them
// (their rank in node_order, the root first), with their rows' hierarchy and
// colours. Every other node is nameless; the children a loaded node lists
// hang from it as nameless nodes, so that it shows as expandable. `id` picks the graph as
// the service names it ("step0_rank1"; "" the first or only one).
struct DbOpening {
  std::string id;  // the graph's ("" for the only graph of the file)
  vis::FileMeta meta;
  vis::PartialSideIndex npu, bench;  // bench: size 0 for a build
};
// Reads it and writes `out`: a .vis of its meta, its stacks and each side's
// root alone (the service opens it with the indexes held in memory). Nothing
// (nullopt, nothing written) when node_order cannot give those indices (no
// node_order column, a side's orders not as many consecutive numbers as it
// has rows, a repeated name among the nodes read, no DefaultModel) or a side
// has fewer than `min_nodes` nodes. For the file's only graph the rows are
// counted for both sides together (the table's count, which SQLite gives
// without visiting rows): a gap on one side and a repeat on the other pass.
// The service checks the indices against the whole index.
Result<std::optional<DbOpening>> WriteVisDbOpening(const std::string& path, const std::string& id,
                                                   uint64_t min_nodes, const std::string& out);

// One node's details read from a .vis.db by name, for the service while
// ConvertVisDb writes the whole file: each detail is the one that file will
// hold for the node (a repeated name's records merged as ReadVisDb merges
// them), without reading the other rows. The graph is the one ConvertVisDbIndex
// (or ConvertVisDb) converted into `converted`: its step and rank, and its
// stacks, which NodeDetail.stack_id indexes. Thread-safe: one query at a time.
class VisDbNodes {
 public:
  static Result<std::unique_ptr<VisDbNodes>> Open(const std::string& path, const std::string& converted);
  ~VisDbNodes();

  // The details of node `name` of `side`; errors name the file, the node and
  // the column, as the conversion's would.
  Result<vis::NodeDetail> Detail(vis::Side side, const std::string& name);

  // The service's search while the graph is served from its opening screen
  // (WriteVisDbOpening's indices: node_order's rank, the root first).
  struct Hit {
    uint32_t index = 0;
    std::string name;
  };
  // The nodes of `side` whose name `match` accepts, in index order: one scan
  // of node_name and node_order (no other column read). Nothing when the
  // side's orders are not consecutive numbers (the opening's condition).
  Result<std::vector<Hit>> Find(vis::Side side, const std::function<bool(std::string_view)>& match);
  // The ancestors of node `name` by up_node (root first), the `max` nearest;
  // *omitted counts those left out.
  Result<std::vector<std::string>> Ancestors(vis::Side side, const std::string& name, size_t max, uint32_t* omitted);

 private:
  struct Impl;
  explicit VisDbNodes(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Writes one .vis.db graph by graph, each graph's rows as its nodes come
// (SqliteFileWriter: SQLite's file format without SQLite, the table pages as
// they fill, the index keys sorted at Commit): a graph streamed from a .vis
// never has its details all in memory. A repeated node id is an error at
// Commit. Temporary file + rename at Commit(); destroyed before, it leaves
// nothing. Each graph's step and rank come from its
// FileMeta ("step2" -> 2, "" -> 0); two graphs with the same step and rank
// are an error. tb_config is the first graph's.
class VisDbWriter {
 public:
  static Result<std::unique_ptr<VisDbWriter>> Create(const std::string& path);
  ~VisDbWriter();

  // A graph held in memory.
  Status Add(const GraphFile& graph);
  // The details of node `node` of a side as the .vis holds them, its items'
  // keys whole (vis::ResolveKeys): from a graph still in memory.
  using NodeDetails = std::function<void(vis::Side side, uint32_t node, vis::NodeDetail* out)>;
  // The graph of a graph-ascend .vis: its index and stacks read whole, its
  // details one stored block at a time. The rows are those Add() writes for
  // ReadVisFile's graph. `grading`, when given, replaces the file's default.
  // `details`, when given, gives each node's details in place of the file's
  // detail blocks (which are then not read): the file's graph still in memory.
  Status AddVis(const std::string& vis_path, std::optional<vis::Grading> grading = std::nullopt,
                const NodeDetails& details = {});
  // tb_config, the seven indexes, then the rename.
  Status Commit();

 private:
  struct Impl;
  explicit VisDbWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Writes `graphs` into one .vis.db (VisDbWriter::Add of each).
Status WriteVisDb(const std::vector<const GraphFile*>& graphs, const std::string& path);

// The number in a batch folder name: "step12" -> 12, "rank3" -> 3, "" -> 0.
int64_t FolderNumber(const std::string& folder);

}  // namespace graph_ascend::formats
