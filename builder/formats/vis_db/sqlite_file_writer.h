// A bulk writer of the SQLite database file format
// (https://www.sqlite.org/fileformat2.html), without SQLite: for a file
// written once, whole, rows in rowid order, then read by SQLite.
//
// Tables are declared up front with the CREATE TABLE text sqlite_schema
// keeps, their column count and the column of a TEXT PRIMARY KEY, whose
// UNIQUE index "sqlite_autoindex_<table>_1" (sql NULL) is kept as SQLite
// keeps it; indexes with their CREATE INDEX text and the columns they hold.
// The writer does not parse the sql: the declarations must say what it says.
//
// Each table's rows get rowids 1, 2, ... in the order appended; values are
// stored as given (no column affinity is applied: give an INTEGER column
// integers). The table b-tree streams to the file as its pages fill, so the
// rows are never held. Index keys (the indexed columns and the rowid) are
// collected, sorted as SQLite orders them (NULL < numbers < text, BINARY
// collation, then the rowid) and written at Commit(); past `sort_memory`
// bytes of keys, the largest index's keys spill as a sorted run to
// "<path>.tmp-<pid>.sort" and the runs are merged at Commit(). A repeated
// primary key is an error at Commit() naming the table and the key.
//
// The file: `page_size` pages, UTF-8, schema format 4, no freelist, every
// page used once, the header's counters valid for the linked SQLite version.
// It is written to "<path>.tmp-<pid>" and renamed at Commit(); a writer
// destroyed before, or a Commit() that fails, leaves nothing (on SIGINT and
// SIGTERM too: base/temp_files.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace graph_ascend::formats {

// One value of a row: NULL, a 64-bit integer, a real (NaN is stored as NULL,
// as SQLite stores it) or UTF-8 text, which must stay valid until Append()
// returns.
struct SqlValue {
  enum Kind : uint8_t { kNull, kInteger, kReal, kText };
  Kind kind = kNull;
  int64_t integer = 0;
  double real = 0;
  std::string_view text;

  static SqlValue Null() { return {}; }
  static SqlValue Integer(int64_t v) {
    SqlValue x;
    x.kind = kInteger;
    x.integer = v;
    return x;
  }
  static SqlValue Real(double v) {
    SqlValue x;
    x.kind = kReal;
    x.real = v;
    return x;
  }
  static SqlValue Text(std::string_view v) {
    SqlValue x;
    x.kind = kText;
    x.text = v;
    return x;
  }
};

class SqliteFileWriter {
 public:
  struct Options {
    uint32_t page_size = 65536;      // a power of two from 512 to 65536
    size_t sort_memory = 64 << 20;  // index keys held in memory before a sorted run spills
  };
  static Result<std::unique_ptr<SqliteFileWriter>> Create(const std::string& path, const Options& options);
  ~SqliteFileWriter();
  SqliteFileWriter(const SqliteFileWriter&) = delete;
  SqliteFileWriter& operator=(const SqliteFileWriter&) = delete;

  // Declares a table before any row is appended; returns its number for
  // Append(). `sql` is stored as is (SQLite keeps it without the final ';').
  // `text_primary_key`: the column of its TEXT PRIMARY KEY, -1 for none.
  Result<int> AddTable(const std::string& name, const std::string& sql, int columns, int text_primary_key = -1);
  // Declares an index of `table` on `columns` (BINARY collation, ascending).
  Status AddIndex(const std::string& name, int table, const std::string& sql, const std::vector<int>& columns);

  // Appends a row of `table` (as many values as it has columns). A row's
  // record over 10^9 bytes (SQLite's default SQLITE_MAX_LENGTH) is an error.
  Status Append(int table, std::span<const SqlValue> row);

  // Writes the indexes, sqlite_schema and the header, then renames.
  Status Commit();

 private:
  struct Impl;
  explicit SqliteFileWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace graph_ascend::formats
