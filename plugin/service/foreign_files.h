// msprobe's graph files under the log directory (.vis.db of 8.2-26.x, JSON
// .vis of 1.2-8.2.0), opened by converting them once, graph by graph as they are
// opened, into graph-ascend .vis files in a cache directory outside the log
// directory.
//
// A converted file is keyed by the source's real path, size and mtime, so a
// rewritten source is converted again. The log directory is never written.
//
// A graph of a .vis.db opens hierarchy first: its node index and stacks are
// written at once (formats::ConvertVisDbIndex, no items read) and the page
// browses them, while the whole graph (ConvertVisDb) is written behind on a
// thread of its own; node details are read from that file when it is there,
// and until then node by node from the .vis.db (formats::VisDbNodes).
//
// A large graph (at least `opening_nodes` a side) opens sooner still: its
// opening screen (formats::WriteVisDbOpening: the root and its children at
// their final indices, from a few indexed queries; its sides held in memory,
// its file only the meta and stacks) is opened, and
// the index conversion runs behind it on the fill's thread. Until the index
// is written, Converted() answers the opening (or, asked for the whole
// index, waits for it); then the index, which the page's next request opens
// in place of the opening: node indices are the same, and views keep their
// expanded nodes by name (the view journal). Meanwhile a search reads the
// source's names (DetailFill::Find), hits at the indices the index will give.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "formats/vis_db/vis_db.h"
#include "open_graph.h"

namespace graph_ascend::service {

// One graph of a multi-graph .vis.db as the service lists it.
struct ForeignGraph {
  std::string id;  // "step0_rank1"; "" for the only graph of a file
  std::string step;
  std::string rank;
};

// The whole .vis of a graph opened from its index-only file, being written
// (from ForeignFiles::StartFill on).
class DetailFill {
 public:
  // Blocks until the file is written: its path, or why it could not be.
  Result<std::string> Wait() const;
  void Done(Result<std::string> result);
  // Whether Wait() answers at once.
  bool done() const;
  // Until then, one node's details read from the source by name
  // (formats::VisDbNodes): what the file will hold for the node, its stack
  // one of `converted`'s (the opening's or the index's, as opened).
  Result<vis::NodeDetail> Node(vis::Side side, const std::string& name, const std::string& converted) const;
  // The same reader's search of the source's names, and a hit's ancestors
  // (formats::VisDbNodes::Find and Ancestors), for a graph served from its opening screen.
  Result<std::vector<formats::VisDbNodes::Hit>> Find(vis::Side side, const std::function<bool(std::string_view)>& match,
                                                     const std::string& converted) const;
  Result<std::vector<std::string>> Ancestors(vis::Side side, const std::string& name, size_t max, uint32_t* omitted,
                                             const std::string& converted) const;
  // For a graph opened from its opening screen: blocks until the whole index
  // is written; the file to open for it (the index, or the whole file when
  // the graph was read whole), or why it could not be written.
  Result<std::string> WaitIndex() const;
  // Whether WaitIndex() answers at once (always for a graph opened from its index).
  bool index_done() const;
  const std::string& source() const { return source_; }
  // Also lets go of the opening's sides (OpeningIndex() then answers null).
  void IndexDone(Result<std::string> result);
  // The opening screen's sides while the index is not written.
  std::shared_ptr<const SideIndexes> OpeningIndex() const;
  // A view of `side` was served from the opening. The fill's thread waits
  // until each side's has been (the page asks for them right after the open),
  // at most ForeignFiles' first_screen_wait, so that the first screen gets
  // the cores first.
  void ViewServed(vis::Side side);
  // The fill waits for no view any longer: a request wants the index, or
  // the service shuts down.
  void StartNow();

 private:
  friend class ForeignFiles;
  std::function<void()> write_;  // run once on a thread of its own
  bool started_ = false;         // under ForeignFiles::mu_
  std::string source_;           // the .vis.db
  std::string opening_;          // the opening screen's file, "" when opened from the index
  std::shared_ptr<const SideIndexes> opening_index_;  // and its sides, under mu_
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool done_ = false;
  Result<std::string> result_ = Error{};
  bool index_done_ = true;  // false from an opening until the index is written
  int screen_sides_ = 0;     // the opening's sides whose view is still to be served, under mu_
  std::chrono::milliseconds first_screen_wait_{0};
  void WaitFirstScreen() const;
  Result<std::string> index_result_ = Error{};
  // One reader per converted file, opened on its first Node() (an error is
  // kept and returned to every caller).
  struct Nodes {
    std::once_flag once;
    std::unique_ptr<formats::VisDbNodes> nodes;
    Error error;
  };
  mutable std::map<std::string, std::shared_ptr<Nodes>> nodes_;  // under mu_
  // The reader for `converted`, opened on first use; or why it cannot be.
  Result<formats::VisDbNodes*> Reader(const std::string& converted) const;
};

// What to open for a foreign graph: `path`, and when it is an index-only file,
// `details`, the fill writing the file that holds the node details.
struct ForeignOpen {
  std::string path;
  std::shared_ptr<DetailFill> details;
  std::shared_ptr<const SideIndexes> index = nullptr;  // an opening screen's sides, held in memory (OpenGraph::Open)
};

class ForeignFiles {
 public:
  // Graphs of at least this many nodes a side open from their opening screen.
  static constexpr uint64_t kOpeningNodes = 20000;
  // How long an opening's fill waits for its first screen to be served (DetailFill::ViewServed).
  static constexpr std::chrono::milliseconds kFirstScreenWait{250};

  // `cache_root` is created when missing; it must not lie inside `logdir`.
  // `before_index` (tests): called on the fill's thread before the index of
  // a graph opened from its opening screen is converted.
  static Result<ForeignFiles> Open(const std::string& cache_root, const std::string& logdir,
                                   uint64_t opening_nodes = kOpeningNodes, std::function<void()> before_index = {},
                                   std::chrono::milliseconds first_screen_wait = kFirstScreenWait);

  ForeignFiles(ForeignFiles&& other) noexcept
      : root_(std::move(other.root_)),
        opening_nodes_(other.opening_nodes_),
        before_index_(std::move(other.before_index_)),
        first_screen_wait_(other.first_screen_wait_),
        fills_(std::move(other.fills_)) {}
  ~ForeignFiles();  // waits for the fills still writing

  // The graphs of a .vis.db (without reading its nodes); one empty id for a
  // file with a single graph.
  Result<std::vector<ForeignGraph>> Graphs(const std::string& abs_path);

  // The converted .vis of graph `id` of `abs_path` ("" for the only or first
  // graph), converting that graph alone on first use. `progress` gets 0..1
  // while converting. For a .vis.db not yet converted that is the graph's
  // index-only file and the fill writing the whole one; the same for every
  // open while this process lives, so all clients share one open file. A
  // large graph gives its opening screen until its index is written, unless
  // `whole_index` (the request needs every node: it waits for the index).
  Result<ForeignOpen> Converted(const std::string& abs_path, const std::string& id,
                                const std::function<void(double)>& progress = {}, bool whole_index = false);

  // Starts writing the whole file of an index-only one Converted() gave (once;
  // the index file is opened first, so the two do not compete).
  void StartFill(const ForeignOpen& opened);

  const std::string& root() const { return root_; }

  // Removes this process's unfinished conversions (a terminated server calls
  // it before leaving while a conversion may still run). Open() removes
  // those of processes that are gone (killed with SIGKILL).
  void RemoveTemporaries() const;

 private:
  ForeignFiles(std::string root, uint64_t opening_nodes, std::function<void()> before_index,
               std::chrono::milliseconds first_screen_wait)
      : root_(std::move(root)),
        opening_nodes_(opening_nodes),
        before_index_(std::move(before_index)),
        first_screen_wait_(first_screen_wait) {}
  Result<std::string> KeyDir(const std::string& abs_path) const;
  // Converted() of a large .vis.db graph not in the cache, under mu_: its
  // opening screen and the fill converting its index, then the whole file;
  // an empty path when the graph has no opening screen (IndexFirst then).
  Result<ForeignOpen> OpeningFirst(const std::string& abs_path, const std::string& dir, const std::string& id);
  // Converted() under mu_; sets *indexing (and answers nothing) when the
  // index of a graph opened from its opening screen is to be waited for.
  Result<ForeignOpen> Converting(const std::string& abs_path, const std::string& dir, const std::string& id,
                                 const std::function<void(double)>& progress, bool whole_index,
                                 std::shared_ptr<DetailFill>* indexing);
  // Converted() of a .vis.db graph not in the cache, under mu_.
  Result<ForeignOpen> IndexFirst(const std::string& abs_path, const std::string& dir, const std::string& id,
                                 const std::function<void(double)>& progress);

  struct Fills {
    std::map<std::string, std::shared_ptr<DetailFill>> by_file;  // the whole file's path -> its fill
    std::vector<std::thread> threads;
  };
  std::string root_;
  uint64_t opening_nodes_ = kOpeningNodes;
  std::function<void()> before_index_;
  std::chrono::milliseconds first_screen_wait_ = kFirstScreenWait;
  std::mutex mu_;  // one conversion at a time (fills run beside)
  std::unique_ptr<Fills> fills_ = std::make_unique<Fills>();  // under mu_
};

// `e` naming the source `abs_path` as `shown` (its name in the log directory).
Error Relabelled(Error e, const std::string& abs_path, const std::string& shown);
// Waits for `fill` as OpenGraph::Open takes it, its errors relabelled.
DetailsFileFn DetailsOf(std::shared_ptr<const DetailFill> fill, const std::string& abs_path, const std::string& shown);
// A node's details while `fill` writes, as OpenGraph::Open takes them for the
// file `converted` (the path opened), errors relabelled.
NodeDetailFn NodeDetailsOf(std::shared_ptr<const DetailFill> fill, const std::string& abs_path,
                           const std::string& shown, const std::string& converted);

// Splits a listed name "dir/run.vis.db#step0_rank1" into the file and the graph id.
void SplitForeignName(const std::string& relative, std::string* file, std::string* graph);

// The default cache root: $XDG_CACHE_HOME/graph-ascend, else ~/.cache/graph-ascend.
std::string DefaultCacheRoot();

}  // namespace graph_ascend::service
