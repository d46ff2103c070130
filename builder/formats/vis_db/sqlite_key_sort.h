// Index keys sorted as SQLite orders them, for SqliteFileWriter: held in
// memory, sorted runs spilled to one temporary file past a budget, merged.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/temp_files.h"
#include "formats/vis_db/sqlite_file_writer.h"

namespace graph_ascend::formats::sqlite_file {

// Appends a key whose bytes compare (memcmp, then length) as SQLite compares
// the record of `values` and `rowid`: NULL < numbers (integers and reals by
// value) < text (BINARY: memcmp, then length), column by column, then the
// rowid. Its last 8 bytes are the rowid's.
void AppendSortKey(std::span<const SqlValue> values, int64_t rowid, std::string* out);

// The sorted runs of every index, one after the other in one temporary file
// (removed when destroyed, and on SIGINT/SIGTERM).
class RunFile {
 public:
  static Result<std::unique_ptr<RunFile>> Create(const std::string& path);
  ~RunFile();
  uint64_t size() const { return size_ + buffer_.size(); }
  Status Append(std::string_view bytes);
  // Reads up to `n` bytes at `offset` (what Append gave, flushed first).
  Result<size_t> Read(uint64_t offset, uint8_t* out, size_t n);

 private:
  RunFile(const std::string& path, int fd);
  Status Flush();
  std::string path_;
  TemporaryFile temp_;
  int fd_;
  uint64_t size_ = 0;
  std::string buffer_;
};

// The keys of one index.
class KeySorter {
 public:
  explicit KeySorter(bool unique) : unique_(unique) {}
  void Add(std::span<const SqlValue> values, int64_t rowid);
  // Memory held by the keys.
  size_t bytes() const { return arena_.size() + 8 * offsets_.size(); }
  // Sorts the keys held and moves them to `runs` as one run.
  Status Spill(RunFile* runs);
  // Calls `key` with each key's record in order. In a unique index, a key
  // equal to the one before in its columns is `duplicate(record)`'s error.
  Status Merge(RunFile* runs, const std::function<Status(std::string_view)>& key,
               const std::function<Error(std::string_view)>& duplicate);

 private:
  std::vector<const uint8_t*> Sorted();
  bool unique_;
  std::string arena_;  // [u32 key length][u32 record length][key][record] a key
  std::vector<uint64_t> offsets_;
  std::string record_;
  struct Run {
    uint64_t offset, length;
  };
  std::vector<Run> runs_;
};

}  // namespace graph_ascend::formats::sqlite_file
