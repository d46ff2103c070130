#include "formats/vis_db/sqlite_db.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/mapped_file.h"

namespace graph_ascend::formats {
namespace {

// "file:" URI of a path: '%', '?' and '#' escaped.
std::string FileUri(const std::string& path, bool immutable) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      snprintf(buf, sizeof(buf), "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  uri += immutable ? "?mode=ro&immutable=1" : "?mode=ro";
  return uri;
}

}  // namespace

Error DbError(const std::string& path, sqlite3* db, const std::string& where) {
  std::string msg = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
  if (db != nullptr && (sqlite3_errcode(db) == SQLITE_NOTADB || sqlite3_errcode(db) == SQLITE_CORRUPT)) {
    msg += " (not a complete SQLite .vis.db)";
  }
  return Error{path, where, "SQLite: " + msg};
}

Result<Stmt> Prepare(sqlite3* db, const std::string& path, const std::string& sql, const std::string& where) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK) {
    sqlite3_finalize(s);
    return DbError(path, db, where);
  }
  return Stmt(s);
}

Status Exec(sqlite3* db, const std::string& path, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "error";
    sqlite3_free(err);
    return Error{path, "", "SQLite: " + msg};
  }
  return Status::Ok();
}

std::string Text(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  if (t == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(s, col)));
}

Result<Db> OpenReadOnly(const std::string& path) {
  // Only a regular file: a FIFO must not block open() (base/mapped_file.h).
  auto header = ReadFileHead(path, 16);
  if (!header.ok()) return header.error();
  if (header->size() < 16 || memcmp(header->data(), "SQLite format 3", 16) != 0) {
    return Error{path, "byte 0", "not an SQLite database (a .vis.db starts with \"SQLite format 3\")"};
  }
  // Immutable unless msprobe left a write-ahead log beside it: then the log
  // holds rows the main file does not, and SQLite must read it.
  struct stat st;
  bool has_wal = stat((path + "-wal").c_str(), &st) == 0 && st.st_size > 0;
  sqlite3* db = nullptr;
  // A connection is used by one thread at a time: no locking inside SQLite.
  int rc = sqlite3_open_v2(FileUri(path, !has_wal).c_str(), &db,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  Db owned(db);
  if (rc != SQLITE_OK) return DbError(path, db, "open");
  return owned;
}

}  // namespace graph_ascend::formats
