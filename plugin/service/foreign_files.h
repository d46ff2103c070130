// msprobe's graph files under the log directory (.vis.db of 8.2-26.x, JSON
// .vis of 1.2-8.1), opened by converting them once, graph by graph as they are
// opened, into graph-ascend .vis files in a cache directory outside the log
// directory.
//
// A converted file is keyed by the source's real path, size and mtime, so a
// rewritten source is converted again. The log directory is never written.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace graph_ascend::service {

// One graph of a multi-graph .vis.db as the service lists it.
struct ForeignGraph {
  std::string id;  // "step0_rank1"; "" for the only graph of a file
  std::string step;
  std::string rank;
};

class ForeignFiles {
 public:
  // `cache_root` is created when missing; it must not lie inside `logdir`.
  static Result<ForeignFiles> Open(const std::string& cache_root, const std::string& logdir);

  ForeignFiles(ForeignFiles&& other) noexcept : root_(std::move(other.root_)) {}

  // The graphs of a .vis.db (without reading its nodes); one empty id for a
  // file with a single graph.
  Result<std::vector<ForeignGraph>> Graphs(const std::string& abs_path);

  // The converted .vis of graph `id` of `abs_path` ("" for the only or first
  // graph), converting that graph alone on first use. `progress` gets 0..1
  // while converting.
  Result<std::string> Converted(const std::string& abs_path, const std::string& id,
                                const std::function<void(double)>& progress = {});

  const std::string& root() const { return root_; }

  // Removes this process's unfinished conversions (a terminated server calls
  // it before leaving while a conversion may still run). Open() removes
  // those of processes that are gone (killed with SIGKILL).
  void RemoveTemporaries() const;

 private:
  explicit ForeignFiles(std::string root) : root_(std::move(root)) {}
  Result<std::string> KeyDir(const std::string& abs_path) const;

  std::string root_;
  std::mutex mu_;  // one conversion at a time
};

// Splits a listed name "dir/run.vis.db#step0_rank1" into the file and the graph id.
void SplitForeignName(const std::string& relative, std::string* file, std::string* graph);

// The default cache root: $XDG_CACHE_HOME/graph-ascend, else ~/.cache/graph-ascend.
std::string DefaultCacheRoot();

}  // namespace graph_ascend::service
