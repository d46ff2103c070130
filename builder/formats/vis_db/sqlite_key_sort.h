// Index keys sorted as SQLite orders them, for SqliteFileWriter: held in
// memory, sorted runs spilled to one temporary file past a budget, merged.
#pragma once

#include <cstdint>
#include <cstdlib>
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

// A key's bytes compare (memcmp) as SQLite compares the record of its
// values and rowid: NULL < numbers (integers and reals by value) < text
// (BINARY: memcmp, then length), column by column, then the rowid. The key
// holds the values themselves (a byte a column after the rowid tells an
// integer from a real), so that the record is made again from it: each
// index's keys are held once, compactly. No key is a prefix of another.
//
// At least the bytes the key of `values` takes.
size_t SortKeyBound(std::span<const SqlValue> values);
// Writes the key of `values` and `rowid` (rowid >= 0) at `out` (SortKeyBound
// bytes free): the columns' part, then the rowid's, then the columns' types.
// Returns its length and sets `columns` to the columns' part's length.
size_t WriteSortKey(std::span<const SqlValue> values, int64_t rowid, uint8_t* out, size_t* columns);
// The values and rowid of a key of `columns` columns; texts are views of the
// key or, when they hold zero bytes, of `scratch`. False when damaged.
bool DecodeSortKey(std::string_view key, size_t columns, std::vector<SqlValue>* values, int64_t* rowid,
                   std::string* scratch);

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
  KeySorter(size_t columns, bool unique) : columns_(columns), unique_(unique) {}
  void Add(std::span<const SqlValue> values, int64_t rowid);
  // Memory held by the keys and their pointers (the last block's free room,
  // under 1 MiB, not counted: a small budget would spill every key).
  size_t bytes() const { return used_ + sizeof(const uint8_t*) * keys_.size(); }
  // Sorts the keys held and moves them to `runs` as one run.
  Status Spill(RunFile* runs);
  // Calls `key` with each key's record in order. In a unique index, a key
  // equal to the one before in its columns is `duplicate(record)`'s error.
  Status Merge(RunFile* runs, const std::function<Status(std::string_view)>& key,
               const std::function<Error(std::string_view)>& duplicate);

 private:
  // The keys held, sorted: keys often come in order, or in a few ordered
  // runs (one a graph's side), which are merged instead of sorted.
  std::vector<const uint8_t*> Sorted();
  void Clear();
  size_t columns_;
  bool unique_;
  // Room for `bytes` more in the last block.
  uint8_t* Room(size_t bytes);
  struct Free {
    void operator()(uint8_t* p) const { free(p); }
  };
  // The keys, each [u32 columns' length][key], in blocks that never move:
  // one growing string copied every key as it grew and faulted its pages
  // in twice (half the page faults of a 10^5-node db).
  std::vector<std::unique_ptr<uint8_t, Free>> blocks_;
  uint8_t* free_ = nullptr;  // in the last block
  size_t left_ = 0;          // bytes free there
  size_t last_block_ = 0;    // the last block's size
  size_t used_ = 0;          // bytes of keys
  std::vector<const uint8_t*> keys_;
  std::vector<uint32_t> run_starts_;  // where the keys stop ascending; empty past kMaxRuns
  bool runs_known_ = true;
  struct Run {
    uint64_t offset, length;
  };
  std::vector<Run> runs_;
  std::vector<SqlValue> values_;
  std::string record_, scratch_;
};

}  // namespace graph_ascend::formats::sqlite_file
