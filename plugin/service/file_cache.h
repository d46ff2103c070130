// The open files, bounded by memory.
//
// Get() returns an open file, opening it once even when several clients ask
// at the same time (the others wait, seeing the opener's progress). When the
// estimated memory of the open files passes the budget, the least recently
// used files are closed, except files with unsaved edits and files in use.
// A file whose size or mtime changed on disk is opened again, unless it has
// unsaved edits.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "open_graph.h"

namespace graph_ascend::service {

class FileCache {
 public:
  explicit FileCache(size_t budget_bytes) : budget_(budget_bytes) {}

  // `details_file`, `node_detail` and `index` as OpenGraph::Open takes them, used by the request that opens the file.
  Result<std::shared_ptr<OpenGraph>> Get(const std::string& abs_path, const std::string& relative,
                                         const ProgressFn& progress, const DetailsFileFn& details_file = {},
                                         const NodeDetailFn& node_detail = {},
                                         std::shared_ptr<const SideIndexes> index = nullptr);

  size_t open_files() const;
  size_t memory_bytes() const;

 private:
  struct Opening {
    bool done = false;
    double fraction = 0;
    std::string stage;
    Result<std::shared_ptr<OpenGraph>> result = Error{};
  };
  struct Entry {
    std::shared_ptr<OpenGraph> file;
    size_t bytes = 0;  // estimated when opened
    std::list<std::string>::iterator lru;
  };
  void EvictLocked(const std::string& keep);

  const size_t budget_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, Entry> files_;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, std::shared_ptr<Opening>> opening_;
};

}  // namespace graph_ascend::service
