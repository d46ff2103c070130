// graph-ascend check, the CI gate (issue 32): exit 1 and the first divergence
// when a compare diverges beyond noise, 0 when it does not, 2 on bad input;
// on compares of the real samples.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"

namespace {

namespace fs = std::filesystem;
using graph_ascend::testing::ExpectOneError;
using graph_ascend::testing::Graph;
using graph_ascend::testing::Lines;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::Sample;
using graph_ascend::testing::SourceDir;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The sample's compare: its culprit (samples/README.md) diverges.
    std::vector<std::string> files = Graph(Sample("gpt_statistics/compare.json"), dir_ / "diverges");
    ASSERT_EQ(files.size(), 1u);
    diverging_ = files[0];
    // The bench run against itself: nothing diverges.
    WriteFile(dir_ / "same.json", "{\"npu_path\": \"" + Sample("gpt_statistics/bench/step0/rank0") +
                                      "\", \"bench_path\": \"" + Sample("gpt_statistics/bench/step0/rank0") + "\"}");
    files = Graph(dir_ / "same.json", dir_ / "same");
    ASSERT_EQ(files.size(), 1u);
    same_ = files[0];
  }

  TempDir dir_;
  std::string diverging_, same_;
};

TEST_F(CheckTest, ADivergingCompareIsExitOneWithItsFirstDivergence) {
  RunResult r = RunTool({"check", diverging_});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(Lines(r.out), std::vector<std::string>{diverging_ +
                                                   ": diverges at Functional.linear.11.forward (api, dtype/shape "
                                                   "changed, > 1e6x the noise: its kind shows none, index 0.00248837) "
                                                   "output.0 dtype torch.bfloat16 vs torch.float32"});
}

TEST_F(CheckTest, ACompareOfARunWithItselfPasses) {
  RunResult r = RunTool({"check", same_});
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(Lines(r.out).size(), 1u) << r.out;
  EXPECT_EQ(Lines(r.out)[0].rfind(same_ + ": no divergence beyond noise", 0), 0u) << r.out;
}

TEST_F(CheckTest, AllowedNamesAndSmallIndicesAreAccepted) {
  // The culprit's kind allowed: the next entry of the ranking is the first divergence.
  RunResult r = RunTool({"check", diverging_, "--allow", "Functional.linear.*"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out.find("Functional.linear."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": diverges at "), std::string::npos) << r.out;

  // Every entry of this compare has an index below 1.
  r = RunTool({"check", "--max-index", "1", diverging_});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(": no divergence beyond noise other than the "), std::string::npos) << r.out;

  // A bound below the culprit's index accepts nothing before it.
  r = RunTool({"check", "--max-index", "0.001", diverging_});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("diverges at Functional.linear.11.forward"), std::string::npos) << r.out;
}

TEST_F(CheckTest, AFolderIsEveryCompareInItAndTheWorstDecides) {
  fs::create_directories(dir_ / "both");
  fs::copy_file(diverging_, dir_ / "both/a.vis");
  fs::copy_file(same_, dir_ / "both/b.vis");
  RunResult r = RunTool({"check", dir_ / "both"});
  EXPECT_EQ(r.status, 1) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0].rfind(dir_ / "both/a.vis: diverges at ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind(dir_ / "both/b.vis: no divergence beyond noise", 0), 0u) << lines[1];
}

// Bad input is exit 2 with one line, even beside a file that diverges, and
// nothing on stdout: a CI log never reads a half verdict.
TEST_F(CheckTest, BadInputIsExitTwo) {
  std::vector<std::string> build = Graph(Sample("gpt_statistics/build.json"), dir_ / "build");
  ASSERT_EQ(build.size(), 1u);
  ExpectOneError(RunTool({"check", diverging_, build[0]}), {build[0], "a build of one run, not a compare"});
  ExpectOneError(RunTool({"check", dir_ / "missing.vis"}), {"missing.vis", "cannot open"});
  fs::create_directories(dir_ / "empty");
  ExpectOneError(RunTool({"check", dir_ / "empty"}), {"empty", "holds no .vis file"});
  ExpectOneError(RunTool({"check", SourceDir() + "/tests/data/msprobe_outputs/dist_gloo_batch_26.2.0.vis.db"}),
                 {"dist_gloo_batch_26.2.0.vis.db", "msprobe .vis.db", "no divergence ranking"});
  // Usage errors: the one error line, then the usage.
  for (auto [args, part] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"check", diverging_, "--max-index", "-1"}, "--max-index '-1'"},
           {{"check", diverging_, "--allow"}, "--allow needs a value"},
           {{"check", diverging_, "--strict"}, "unknown option '--strict'"},
           {{"check"}, "check needs a .vis file"}}) {
    RunResult r = RunTool(args);
    EXPECT_EQ(r.status, 2) << part;
    EXPECT_EQ(r.out, "") << part;
    EXPECT_EQ(Lines(r.err).at(0).rfind("graph-ascend: error: ", 0), 0u) << r.err;
    EXPECT_NE(Lines(r.err).at(0).find(part), std::string::npos) << r.err;
  }
  WriteFile(dir_ / "damaged.vis", "not a vis file");
  ExpectOneError(RunTool({"check", dir_ / "damaged.vis"}), {"damaged.vis"});
}

}  // namespace
