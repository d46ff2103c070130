// Rows of a SQLite file as text, for tests that compare databases.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <string>
#include <vector>

namespace graph_ascend::testing {

// Every row of `sql` on the file at `path` (opened read-only), each value with its
// type (i, r, t<bytes>:, n), texts byte for byte; a failure is a test failure.
inline std::vector<std::string> SqlRows(const std::string& path, const std::string& sql) {
  std::vector<std::string> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path;
    sqlite3_close(db);
    return out;
  }
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
    return out;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    std::string line;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER: line += "i" + std::to_string(sqlite3_column_int64(st, c)); break;
        case SQLITE_FLOAT: {
          char buf[40];
          snprintf(buf, sizeof(buf), "r%.17g", sqlite3_column_double(st, c));
          line += buf;
          break;
        }
        case SQLITE_TEXT: {
          const char* p = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
          line += "t" + std::to_string(sqlite3_column_bytes(st, c)) + ":" +
                  std::string(p, static_cast<size_t>(sqlite3_column_bytes(st, c)));
          break;
        }
        case SQLITE_NULL: line += "n"; break;
        default: line += "?";
      }
      line += "|";
    }
    out.push_back(line);
  }
  if (rc != SQLITE_DONE) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

}  // namespace graph_ascend::testing
