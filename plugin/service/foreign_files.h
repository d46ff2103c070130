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
#pragma once

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
#include "graph_file.h"

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
  // (formats::VisDbNodes): what the file will hold for the node.
  Result<vis::NodeDetail> Node(vis::Side side, const std::string& name) const;

 private:
  friend class ForeignFiles;
  std::function<void()> write_;  // run once on a thread of its own
  bool started_ = false;         // under ForeignFiles::mu_
  std::string source_;           // the .vis.db
  std::string index_;            // the graph's index-only file
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool done_ = false;
  Result<std::string> result_ = Error{};
  // Opened on the first Node() (an error is kept and returned to every caller).
  mutable std::once_flag nodes_once_;
  mutable std::unique_ptr<formats::VisDbNodes> nodes_;
  mutable Error nodes_error_;
};

// What to open for a foreign graph: `path`, and when it is an index-only file,
// `details`, the fill writing the file that holds the node details.
struct ForeignOpen {
  std::string path;
  std::shared_ptr<DetailFill> details;
};

class ForeignFiles {
 public:
  // `cache_root` is created when missing; it must not lie inside `logdir`.
  static Result<ForeignFiles> Open(const std::string& cache_root, const std::string& logdir);

  ForeignFiles(ForeignFiles&& other) noexcept : root_(std::move(other.root_)), fills_(std::move(other.fills_)) {}
  ~ForeignFiles();  // waits for the fills still writing

  // The graphs of a .vis.db (without reading its nodes); one empty id for a
  // file with a single graph.
  Result<std::vector<ForeignGraph>> Graphs(const std::string& abs_path);

  // The converted .vis of graph `id` of `abs_path` ("" for the only or first
  // graph), converting that graph alone on first use. `progress` gets 0..1
  // while converting. For a .vis.db not yet converted that is the graph's
  // index-only file and the fill writing the whole one; the same for every
  // open while this process lives, so all clients share one open file.
  Result<ForeignOpen> Converted(const std::string& abs_path, const std::string& id,
                                const std::function<void(double)>& progress = {});

  // Starts writing the whole file of an index-only one Converted() gave (once;
  // the index file is opened first, so the two do not compete).
  void StartFill(const ForeignOpen& opened);

  const std::string& root() const { return root_; }

  // Removes this process's unfinished conversions (a terminated server calls
  // it before leaving while a conversion may still run). Open() removes
  // those of processes that are gone (killed with SIGKILL).
  void RemoveTemporaries() const;

 private:
  explicit ForeignFiles(std::string root) : root_(std::move(root)) {}
  Result<std::string> KeyDir(const std::string& abs_path) const;
  // Converted() of a .vis.db graph not in the cache, under mu_.
  Result<ForeignOpen> IndexFirst(const std::string& abs_path, const std::string& dir, const std::string& id,
                                 const std::function<void(double)>& progress);

  struct Fills {
    std::map<std::string, std::shared_ptr<DetailFill>> by_file;  // the whole file's path -> its fill
    std::vector<std::thread> threads;
  };
  std::string root_;
  std::mutex mu_;  // one conversion at a time (fills run beside)
  std::unique_ptr<Fills> fills_ = std::make_unique<Fills>();  // under mu_
};

// `e` naming the source `abs_path` as `shown` (its name in the log directory).
Error Relabelled(Error e, const std::string& abs_path, const std::string& shown);
// Waits for `fill` as GraphFile::Open takes it, its errors relabelled.
DetailsFileFn DetailsOf(std::shared_ptr<const DetailFill> fill, const std::string& abs_path, const std::string& shown);
// A node's details while `fill` writes, as GraphFile::Open takes them, errors relabelled.
NodeDetailFn NodeDetailsOf(std::shared_ptr<const DetailFill> fill, const std::string& abs_path,
                           const std::string& shown);

// Splits a listed name "dir/run.vis.db#step0_rank1" into the file and the graph id.
void SplitForeignName(const std::string& relative, std::string* file, std::string* graph);

// The default cache root: $XDG_CACHE_HOME/graph-ascend, else ~/.cache/graph-ascend.
std::string DefaultCacheRoot();

}  // namespace graph_ascend::service
