// The .vis.db reader's row helpers that the opening screen leans on:
// CountStringList counts sub_nodes' names as SQLite's json_array_length
// counts them, without parsing the names.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <optional>
#include <string>

#include "formats/vis_db/vis_db_rows.h"

namespace graph_ascend::formats::db_rows {
namespace {

// json_array_length(text) from SQLite itself; nullopt when SQLite calls the text malformed.
std::optional<uint64_t> SqliteCount(const std::string& text) {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT json_array_length(?)", -1, &st, nullptr);
  sqlite3_bind_text(st, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  std::optional<uint64_t> out;
  if (sqlite3_step(st) == SQLITE_ROW) out = static_cast<uint64_t>(sqlite3_column_int64(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST(CountStringList, CountsAsSqliteDoes) {
  const std::string lists[] = {
      "[]",
      " [ ] ",
      "[\"Module.a.Linear.forward.0\"]",
      "[\"a\", \"b\",\"c\"]",
      "[\n  \"a\",\n  \"b\"\n]\n",
      "[\"say \\\"hi\\\"\", \"x\"]",           // escaped quotes inside a name
      "[\"ends in a backslash\\\\\", \"y\"]",  // an escaped backslash before the closing quote
      "[\"\\\\\\\"\", \"\"]",                  // backslash, quote; and an empty name
      "[\"comma, inside\", \"] bracket\"]",
      "[\"\xe4\xb8\xad\xe6\x96\x87\"]",  // UTF-8
  };
  for (const std::string& text : lists) {
    SCOPED_TRACE(text);
    std::optional<uint64_t> want = SqliteCount(text);
    ASSERT_TRUE(want.has_value());
    EXPECT_EQ(CountStringList(text), want);
  }
}

TEST(CountStringList, AnEmptyColumnHasNoChildren) { EXPECT_EQ(CountStringList(""), 0u); }

TEST(CountStringList, ANonListIsNone) {
  for (const std::string text : {"[", "]", "[\"a\"", "[\"a\",]", "[\"a\" \"b\"]", "[\"unterminated]", "[1, 2]",
                                 "{\"a\": 1}", "[\"a\"] x", "\"a\"", "[,\"a\"]", "[\"a\\\"]"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(CountStringList(text), std::nullopt);
  }
}

}  // namespace
}  // namespace graph_ascend::formats::db_rows
