// The pages of SQLite's file format for SqliteFileWriter: records, a file
// written page after page, and b-trees built bottom-up from keys in order
// (https://www.sqlite.org/fileformat2.html, sections 1.3-1.6 and 2.1).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/vis_db/sqlite_file_writer.h"

namespace graph_ascend::formats::sqlite_file {

// SQLite's variable-length integer (1 to 9 bytes, big-endian).
void AppendVarint(uint64_t v, std::string* out);
// Writes it at `out` (9 bytes free); returns its length.
size_t PutVarint(uint64_t v, uint8_t* out);
// Reads one at `p` (at most `n` bytes there); returns its length, 0 if cut.
size_t ReadVarint(const uint8_t* p, size_t n, uint64_t* v);

// Appends the record of `values`, then of `rowid` as one more integer column
// when `with_rowid` (an index key).
void AppendRecord(std::span<const SqlValue> values, bool with_rowid, int64_t rowid, std::string* out);

// The first column of a record as text for a message ("NULL", the number, the text).
std::string FirstColumnText(std::string_view record);

// The output file, written page after page: page N is the N-th page given.
// Page 1 is written last (WritePage1), its place kept from the start.
class PageFile {
 public:
  PageFile(int fd, std::string path, uint32_t page_size);
  uint32_t page_size() const { return page_size_; }
  // The number the next page will get.
  uint32_t next() const { return next_; }
  uint32_t pages() const { return next_ - 1; }
  // A page to fill, every byte (it is not zeroed), numbered next(); written
  // by the following call.
  uint8_t* Add();
  // Writes what Add() gave, then page 1 at the start.
  Status Finish(const uint8_t* page1);
  // The first write error, if any (the pages after it are dropped).
  const Status& status() const { return status_; }

 private:
  void Flush();
  int fd_;
  std::string path_;
  uint32_t page_size_;
  uint32_t next_ = 2;
  std::vector<uint8_t> buffer_;
  size_t used_ = 0;
  uint64_t offset_ = 0;  // where buffer_ goes in the file
  Status status_;
};

// A table or index b-tree built bottom-up: the entries come in key order,
// each full page goes to the file at once and only one page a level is held.
// `reserve` bytes of every page are left free: 100 for sqlite_schema, whose
// root is page 1 after the file header.
class BtreeBuilder {
 public:
  BtreeBuilder(PageFile* file, bool index, uint32_t reserve = 0);
  // A table row (rowids increasing) or an index key, as a record.
  Status AddRow(int64_t rowid, std::string_view record);
  Status AddKey(std::string_view record);
  // Writes the pages held; returns the root's page number (1 when `page1`
  // is given: the root is laid out there, after the file header, instead of
  // going to the file). An empty tree is one empty leaf.
  uint32_t Finish(uint8_t* page1 = nullptr);

 private:
  struct Page {
    std::vector<uint8_t> bytes;     // cells at the end, the page's layout
    std::vector<uint32_t> offsets;  // each cell's offset, in key order
    uint32_t top = 0;               // where the cells start
    int64_t last_rowid = 0;         // a table leaf's
  };
  uint32_t PayloadOnPage(uint64_t payload) const;
  size_t CellSize(size_t head, size_t payload) const;
  void PlaceCell(Page* p, std::string_view head, std::string_view record);
  bool Fits(const Page& p, bool leaf, size_t cell) const;
  void Put(Page* p, std::string_view cell);
  void Reset(Page* p);
  uint32_t Write(Page* p, bool leaf, uint32_t right, uint8_t* page1);
  Status PushUp(size_t level, uint32_t child, std::string_view body);

  PageFile* file_;
  bool index_;
  uint32_t reserve_;
  uint32_t usable_;
  std::vector<Page> levels_;  // [0] the leaf being filled
  std::string popped_;
};

}  // namespace graph_ascend::formats::sqlite_file
