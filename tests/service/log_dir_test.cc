#include "log_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

void Touch(const std::string& path, const std::string& text = "x") {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(ParseRunNameTest, BatchNamesGroupByKindAndTimestamp) {
  RunEntry e;
  ParseRunName("compare_step0_rank1_20250101120000.vis", &e);
  EXPECT_EQ(e.kind, "compare");
  EXPECT_EQ(e.step, "step0");
  EXPECT_EQ(e.rank, "rank1");
  EXPECT_EQ(e.group, "compare_20250101120000");
  ParseRunName("build_rank3_20250101120000.vis", &e);
  EXPECT_EQ(e.kind, "build");
  EXPECT_EQ(e.step, "");
  EXPECT_EQ(e.rank, "rank3");
  EXPECT_EQ(e.group, "build_20250101120000");
  ParseRunName("compare_20250101120000.vis", &e);
  EXPECT_EQ(e.group, "compare_20250101120000");
  EXPECT_EQ(e.rank, "");
  ParseRunName("compare_my_model_20250101120000.vis", &e);
  EXPECT_EQ(e.group, "compare_my_model_20250101120000");
  ParseRunName("notes.vis", &e);
  EXPECT_EQ(e.kind, "");
  EXPECT_EQ(e.group, "notes");
}

// docs/FORMAT.md "Stages": the stage follows the time stamp and may hold '_';
// each stage is a run of its own, its group the batch's plus the stage.
TEST(ParseRunNameTest, TheStageFollowsTheTimeStamp) {
  RunEntry e;
  ParseRunName("compare_step0_rank0_20250101120000_step_1.actor_update.vis", &e);
  EXPECT_EQ(e.kind, "compare");
  EXPECT_EQ(e.step, "step0");
  EXPECT_EQ(e.rank, "rank0");
  EXPECT_EQ(e.stage, "step_1.actor_update");
  EXPECT_EQ(e.group, "compare_20250101120000_step_1.actor_update");
  // A stage whose own parts look like a step, a rank or a time stamp stays whole.
  ParseRunName("build_rank_20250101120000_rank2_step3_2024.vis", &e);
  EXPECT_EQ(e.step, "");
  EXPECT_EQ(e.rank, "rank");
  EXPECT_EQ(e.stage, "rank2_step3_2024");
  EXPECT_EQ(e.group, "build_20250101120000_rank2_step3_2024");
  ParseRunName("compare_step0_rank1_20250101120000.vis", &e);
  EXPECT_EQ(e.stage, "");
  ParseRunName("compare_20250101120000_.vis", &e);
  EXPECT_EQ(e.stage, "");
  EXPECT_EQ(e.group, "compare_20250101120000_");
}

TEST(NaturalLessTest, DigitRunsCompareByValue) {
  EXPECT_TRUE(NaturalLess("rank2/a.vis", "rank10/a.vis"));
  EXPECT_FALSE(NaturalLess("rank10/a.vis", "rank2/a.vis"));
  EXPECT_TRUE(NaturalLess("a.vis", "b.vis"));
  EXPECT_FALSE(NaturalLess("a.vis", "a.vis"));
}

TEST(LogDirTest, ListsEveryVisRecursivelyByRelativePath) {
  TempDir dir;
  Touch(dir.Join("compare_20250101120000.vis"));
  Touch(dir.Join("x/run/compare_rank0_20250101120000.vis"));
  Touch(dir.Join("x/run/compare_rank10_20250101120000.vis"));
  Touch(dir.Join("x/run/compare_rank2_20250101120000.vis"));
  Touch(dir.Join("y/run/compare_rank0_20250101120000.vis"));  // same folder name elsewhere
  Touch(dir.Join("y/run/notes.txt"));
  Touch(dir.Join("y/run/compare.vis.config"));
  auto logdir = LogDir::Open(dir.path());
  ASSERT_TRUE(logdir.ok()) << logdir.error().ToString();
  auto runs = logdir->ListRuns();
  std::vector<std::string> paths;
  for (const auto& r : runs) paths.push_back(r.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"compare_20250101120000.vis", "x/run/compare_rank0_20250101120000.vis",
                                             "x/run/compare_rank2_20250101120000.vis",
                                             "x/run/compare_rank10_20250101120000.vis",
                                             "y/run/compare_rank0_20250101120000.vis"}));
  EXPECT_EQ(runs[1].group, "x/run/compare_20250101120000");
  EXPECT_EQ(runs[4].group, "y/run/compare_20250101120000");
  EXPECT_EQ(runs[1].dir, "x/run");
  EXPECT_EQ(runs[1].rank, "rank0");
  EXPECT_EQ(runs[0].dir, "");
  EXPECT_EQ(runs[0].size, 1u);
}

// A batch of one graph (a -tp/-gp compare of one rank folder, or of step0/rank0) is a single graph: no
// step or rank, so the page shows no pickers and no rank overview (issue 29 point 6). Two files are a batch.
TEST(LogDirTest, ABatchOfOneGraphIsListedAsASingleGraph) {
  TempDir dir;
  Touch(dir.Join("one/compare_rank0_20250101120000.vis"));
  Touch(dir.Join("steps/compare_step0_rank0_20250101120000.vis"));
  Touch(dir.Join("two/compare_rank0_20250101120000.vis"));
  Touch(dir.Join("two/compare_rank1_20250101120000.vis"));
  auto logdir = LogDir::Open(dir.path());
  ASSERT_TRUE(logdir.ok()) << logdir.error().ToString();
  auto runs = logdir->ListRuns();
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].path, "one/compare_rank0_20250101120000.vis");
  EXPECT_EQ(runs[0].rank, "");
  EXPECT_EQ(runs[0].step, "");
  EXPECT_EQ(runs[0].kind, "compare");
  EXPECT_EQ(runs[1].path, "steps/compare_step0_rank0_20250101120000.vis");
  EXPECT_EQ(runs[1].rank, "");
  EXPECT_EQ(runs[1].step, "");
  EXPECT_EQ(runs[2].rank, "rank0");
  EXPECT_EQ(runs[3].rank, "rank1");
  EXPECT_EQ(runs[2].group, runs[3].group);
}

TEST(LogDirTest, ResolveStaysInsideTheLogDirectory) {
  TempDir outside;
  TempDir dir;
  Touch(outside.Join("secret.vis"));
  Touch(dir.Join("a/good.vis"));
  fs::create_symlink(outside.Join("secret.vis"), dir.Join("a/escape.vis"));
  fs::create_symlink(outside.path(), dir.Join("outdir"));
  fs::create_symlink(dir.Join("a/good.vis"), dir.Join("inside.vis"));
  auto logdir = LogDir::Open(dir.path());
  ASSERT_TRUE(logdir.ok());

  EXPECT_TRUE(logdir->Resolve("a/good.vis").ok());
  EXPECT_TRUE(logdir->Resolve("inside.vis").ok());
  EXPECT_FALSE(logdir->Resolve("../" + fs::path(outside.path()).filename().string() + "/secret.vis").ok());
  EXPECT_FALSE(logdir->Resolve("a/../a/good.vis").ok());
  EXPECT_FALSE(logdir->Resolve(outside.Join("secret.vis")).ok());
  EXPECT_FALSE(logdir->Resolve("a/escape.vis").ok());
  EXPECT_FALSE(logdir->Resolve("outdir/secret.vis").ok());
  EXPECT_FALSE(logdir->Resolve("a").ok());  // a directory
  EXPECT_FALSE(logdir->Resolve(std::string("a/good.vis\0x", 12)).ok());
  bool missing = false;
  auto none = logdir->Resolve("a/none.vis", true, &missing);
  EXPECT_FALSE(none.ok());
  EXPECT_TRUE(missing);
  // A file to be written: its directory must be inside.
  auto config = logdir->Resolve("a/good.vis.config", false);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(*config, fs::canonical(dir.path()).string() + "/a/good.vis.config");
  EXPECT_FALSE(logdir->Resolve("outdir/new.config", false).ok());

  // Listing skips the escaping symlinks and does not descend into outdir.
  std::vector<std::string> paths;
  for (const auto& r : logdir->ListRuns()) paths.push_back(r.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"a/good.vis", "inside.vis"}));
}

TEST(LogDirTest, OpenFailsOnMissingDirectory) {
  auto logdir = LogDir::Open("/nonexistent/graph-ascend");
  ASSERT_FALSE(logdir.ok());
  EXPECT_EQ(logdir.error().file, "/nonexistent/graph-ascend");
}

}  // namespace
}  // namespace graph_ascend::service
