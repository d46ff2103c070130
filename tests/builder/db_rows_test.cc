// graph --output_format db writes each pair's rows from its graph in memory
// (job/graph_job.cc RunGraphDb, issue 29 point 3): the .vis.db must hold,
// table by table and row by row, what the .vis route gives (the .vis files
// of the same run exported by formats::ExportVisDb), on the real samples: a
// statistics compare, an md5 compare, a build, a batch of steps run two
// pairs at once, and a batch of linked ranks (which keeps the .vis route).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "formats/foreign_file.h"
#include "job/graph_job.h"
#include "sqlite_rows.h"
#include "test_files.h"

namespace graph_ascend::job {
namespace {

using testing::Sample;
using testing::SqlRows;
using testing::TempDir;

// Every row of every table, in rowid order, each value with its SQLite type; the schema first.
std::vector<std::string> Rows(const std::string& path) {
  std::vector<std::string> out = SqlRows(path, "SELECT type, name, sql FROM sqlite_master ORDER BY name");
  for (const std::string& t : SqlRows(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
    // "t<bytes>:<name>|"
    const std::string table = t.substr(t.find(':') + 1, t.size() - t.find(':') - 2);
    for (std::string& row : SqlRows(path, "SELECT * FROM " + table + " ORDER BY rowid")) out.push_back(table + " " + row);
  }
  return out;
}

struct Written {
  std::string db;
  int db_stages = 0;  // "writing .vis.db" stages: one per pair written from memory, and the commit's
};

GraphOptions Options(int jobs) {
  GraphOptions o;
  o.timestamp = "20260101000000";
  o.jobs = jobs;
  o.threads = 2;
  return o;
}

// The db of `config` by graph --output_format db.
Written FromMemory(const CompareConfig& config, const std::string& dir, int jobs) {
  Written w;
  GraphOptions o = Options(jobs);
  o.output_format = OutputFormat::kVisDb;
  o.stage = [&w](const std::string& s) { w.db_stages += s == "writing .vis.db"; };
  auto result = RunGraph(config, dir, o);
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().ToString());
  if (result.ok() && result->outputs.size() == 1) w.db = result->outputs[0];
  return w;
}

// The db of `config` by the .vis route: graph writes the .vis files, export streams them.
std::string FromVis(const CompareConfig& config, const std::string& dir, int jobs) {
  auto result = RunGraph(config, dir, Options(jobs));
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().ToString());
  if (!result.ok()) return "";
  std::string db = dir + "/export.vis.db";
  Status st = formats::ExportVisDb(result->outputs, db);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().ToString());
  return db;
}

CompareConfig Visualize(const std::string& npu, const std::string& bench) {
  auto config = VisualizeConfig(Sample(npu), bench.empty() ? "" : Sample(bench));
  EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().ToString());
  return config.ok() ? *config : CompareConfig();
}

// Checks both routes' rows equal; returns the in-memory route's db stages.
int ExpectSameRows(const CompareConfig& config, int jobs) {
  TempDir dir;
  Written memory = FromMemory(config, dir / "db", jobs);
  std::string vis = FromVis(config, dir / "vis", jobs);
  std::vector<std::string> got = Rows(memory.db), want = Rows(vis);
  EXPECT_GT(want.size(), 100u);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (got[i] != want[i]) {
      ADD_FAILURE() << "row " << i << " differs:\n  memory: " << got[i].substr(0, 600)
                    << "\n  .vis:   " << want[i].substr(0, 600);
      break;
    }
  }
  // No scratch .vis file is left beside the db.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "db")) files += e.path() != memory.db;
  EXPECT_EQ(files, 0u);
  return memory.db_stages;
}

TEST(DbRowsTest, StatisticsCompareFromMemoryIsTheVisRoute) {
  auto config = ReadCompareConfig(Sample("gpt_statistics/compare.json"));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(ExpectSameRows(*config, 1), 2);  // the pair's rows, then the commit
}

TEST(DbRowsTest, Md5CompareFromMemoryIsTheVisRoute) {
  auto config = ReadCompareConfig(Sample("cnn_md5/compare.json"));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(ExpectSameRows(*config, 1), 2);
}

TEST(DbRowsTest, BuildFromMemoryIsTheVisRoute) {
  EXPECT_EQ(ExpectSameRows(Visualize("gpt_statistics/npu", ""), 1), 3);  // two steps
}

TEST(DbRowsTest, StepsRunTwoAtOnceKeepThePlanOrder) {
  EXPECT_EQ(ExpectSameRows(Visualize("cnn_statistics/npu", "cnn_statistics/bench"), 2), 3);
}

TEST(DbRowsTest, LinkedRanksKeepTheVisRoute) {
  // 2 steps x 4 ranks, linked after the batch: every file streamed once linked.
  EXPECT_EQ(ExpectSameRows(Visualize("rank_origin/npu", "rank_origin/bench"), 2), 1);
}

TEST(DbRowsTest, ParallelMergeFromMemoryIsTheVisRoute) {
  auto config = ReadCompareConfig(Sample("parallel_merge/compare.json"));
  ASSERT_TRUE(config.ok());
  EXPECT_GE(ExpectSameRows(*config, 1), 2);
}

// A pair that fails leaves nothing (no .vis.db, no temporary, no scratch .vis), and the run's error is its
// own, not that of a later pair stopped while it waited for its turn to write its rows.
TEST(DbRowsTest, AFailedPairLeavesNothing) {
  TempDir dir;
  std::filesystem::copy(Sample("gpt_statistics/npu"), dir / "npu", std::filesystem::copy_options::recursive);
  testing::WriteFile(dir / "npu/step0/rank0/dump.json", "{\"task\": \"statistics\", \"data\": {");
  auto config = VisualizeConfig(dir / "npu", "");
  ASSERT_TRUE(config.ok());
  GraphOptions o = Options(2);
  o.output_format = OutputFormat::kVisDb;
  auto result = RunGraph(*config, dir / "out", o);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().ToString().find("step0/rank0/dump.json"), std::string::npos) << result.error().ToString();
  EXPECT_TRUE(std::filesystem::is_empty(dir / "out"));
}

}  // namespace
}  // namespace graph_ascend::job
