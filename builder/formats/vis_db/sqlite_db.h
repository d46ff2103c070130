// The few SQLite calls the .vis.db reader and writer share: owned handles,
// statements, and errors that name the file and the table or row.
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>

#include "base/status.h"

namespace graph_ascend::formats {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtCloser>;

// SQLite's message for the last call on `db`, placed at `where` of `path`.
Error DbError(const std::string& path, sqlite3* db, const std::string& where);

Result<Stmt> Prepare(sqlite3* db, const std::string& path, const std::string& sql, const std::string& where);
Status Exec(sqlite3* db, const std::string& path, const std::string& sql);

// A text column ("" for NULL).
std::string Text(sqlite3_stmt* s, int col);

// Opens `path` read-only. Immutable (nothing written beside it) unless a
// non-empty -wal file lies beside it. The connection is not locked: one
// thread at a time may use it.
Result<Db> OpenReadOnly(const std::string& path);

}  // namespace graph_ascend::formats
