// The msprobe files of tests/data/msprobe_outputs, and SQL run on a copy of
// one (formats_test.cc, formats_bad_input_test.cc).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace graph_ascend::formats {

// The files of tests/data/msprobe_outputs whose name ends with `suffix`, in name order.
inline std::vector<std::string> Fixtures(const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + "/tests/data/msprobe_outputs")) {
    std::string p = e.path().string();
    if (p.size() > suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Runs `sql` on the database `db_path` (a copy: it is written).
inline void ExecSql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

}  // namespace graph_ascend::formats
