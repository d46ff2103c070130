// More than two runs of one job (issue 33 point 4): each run compared with the
// reference, and where the runs first disagree. samples/repeat_runs is three
// real runs of one training step whose only difference is a threaded
// reduction's order (samples/generate/repeat_runs.py); dist_gloo's two ranks
// are data-parallel replicas.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "runs/run_spread.h"
#include "test_files.h"

namespace {

namespace fs = std::filesystem;
using graph_ascend::runs::FirstDisagreement;
using graph_ascend::testing::ExpectOneError;
using graph_ascend::testing::Files;
using graph_ascend::testing::Lines;
using graph_ascend::testing::ReadFile;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::Sample;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

std::vector<std::string> RepeatRuns() {
  std::vector<std::string> dirs;
  for (int i = 0; i < 3; ++i) dirs.push_back(Sample("repeat_runs/run" + std::to_string(i) + "/step0/rank0"));
  return dirs;
}

TEST(RunSpreadTest, TheThreadedReductionIsWhereTheRunsFirstDisagree) {
  auto g = FirstDisagreement(RepeatRuns(), 0);
  ASSERT_TRUE(g.ok()) << g.error().ToString();
  ASSERT_FALSE(g->agree);
  EXPECT_EQ(g->first.name, "Module.pool.Pool.forward.0");
  EXPECT_EQ(g->first.index, 5u) << "fc1, its linear, norm, its layer_norm and gelu agree bit for bit";
  EXPECT_EQ(g->first.item, "Module.pool.Pool.forward.0.output.0");
  ASSERT_EQ(g->first.values.size(), 3u);
  ASSERT_FALSE(g->first.differing_runs.empty());
  for (int r : g->first.differing_runs) {
    EXPECT_NE(r, 0);
    EXPECT_NE(g->first.values[r], g->first.values[0]) << g->first.field;
  }
  // A few float32 ulps of a value near 100: a real spread, far below any precision threshold.
  EXPECT_GT(g->first.spread, 0.0);
  EXPECT_LT(g->first.relative_spread, 1e-5);
}

TEST(RunSpreadTest, AnyRunCanBeTheReference) {
  auto g = FirstDisagreement(RepeatRuns(), 2);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->first.name, "Module.pool.Pool.forward.0");
  for (int r : g->first.differing_runs) EXPECT_NE(r, 2);
}

TEST(RunSpreadTest, CopiesOfOneRunAgree) {
  TempDir dir;
  for (const char* run : {"a", "b"}) fs::copy(Sample("repeat_runs/run1/step0/rank0"), dir / run);
  auto g = FirstDisagreement({dir / "a", dir / "b"}, 0);
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->agree);
  EXPECT_EQ(g->entries, 27u);
  EXPECT_EQ(graph_ascend::runs::Describe(*g, 0), "the 2 runs agree on all 27 entries");
}

TEST(RunsCommandTest, EachRunAgainstTheReferenceAndTheSummary) {
  TempDir out;
  RunResult r = RunTool({"graph", "-i", Sample("repeat_runs/runs.json"), "-o", out / "o"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_NE(lines[0].find("/run1/compare_step0_rank0_"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("/run2/compare_step0_rank0_"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2], out / "o/runs.json");
  EXPECT_EQ(lines[3].rfind("runs: step0 rank0: first disagreement at Module.pool.Pool.forward.0 (entry 5), output.0 ",
                           0),
            0u)
      << lines[3];
  EXPECT_EQ(Files(out / "o/run1").size(), 1u);
  EXPECT_EQ(Files(out / "o/run2").size(), 1u);
  std::string summary = ReadFile(out / "o/runs.json");
  EXPECT_NE(summary.find("\"name\": \"Module.pool.Pool.forward.0\""), std::string::npos) << summary;
  // info reads the summary back.
  RunResult info = RunTool({"info", out / "o/runs.json"});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("reference: run 0 " + Sample("repeat_runs/run0")), std::string::npos) << info.out;
  EXPECT_NE(info.out.find(lines[3].substr(6)), std::string::npos) << info.out;
}

TEST(RunsCommandTest, DataParallelReplicasPartAtTheirInputs) {
  TempDir out;
  RunResult r = RunTool({"graph", "-i", Sample("dist_gloo/replicas.json"), "-o", out.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  // Rank 0 loads each batch and sends rank 1 its shard (rank 1 receives it: a call only one replica makes);
  // the first call both make works on each rank's own shard.
  EXPECT_NE(r.out.find("runs: first disagreement at Tensor.sum.0.forward (entry 1), input.0 "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("; run 1 differs from run 0; 1 call is not made by every run"), std::string::npos) << r.out;
}

TEST(RunsCommandTest, EveryStageOfAStagesLayoutHasItsLine) {
  TempDir out;
  const std::string npu = Sample("rl_stages/npu"), bench = Sample("rl_stages/bench");
  WriteFile(out / "runs.json", R"({"runs": [")" + bench + R"(", ")" + npu + R"("]})");
  RunResult r = RunTool({"graph", "-i", out / "runs.json", "-o", out / "o"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Six stages (2 steps x 3): the actor's log-probs agree, the reference model (eps 1e-2) differs.
  EXPECT_NE(r.out.find("runs: step_1/actor_compute_log_prob step0 rank0: the 2 runs agree on all "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("runs: step_2/ref_compute_log_prob step0 rank0: first disagreement at "), std::string::npos)
      << r.out;
  size_t lines = 0;
  for (const std::string& line : Lines(r.out)) lines += line.rfind("runs: step_", 0) == 0;
  EXPECT_EQ(lines, 6u) << r.out;
  EXPECT_NE(ReadFile(out / "o/runs.json").find("\"stage\": \"step_1/actor_update\""), std::string::npos);
}

TEST(RunsCommandTest, BadRunListsAreOneLineErrors) {
  TempDir dir;
  struct Case {
    std::string json;
    std::vector<std::string> parts;
  };
  const std::string run0 = Sample("repeat_runs/run0"), run1 = Sample("repeat_runs/run1");
  std::vector<Case> cases = {
      {R"({"runs": [")" + run0 + R"("]})", {"key runs", "at least two"}},
      {R"({"runs": [")" + run0 + R"(", ")" + run1 + R"("], "npu_path": ")" + run0 + R"("})", {"key runs", "not both"}},
      {R"({"runs": [")" + run0 + R"(", ")" + run1 + R"("], "reference": 2})", {"key reference", "0 to 1"}},
      {R"({"runs": [")" + run0 + R"(", ")" + run1 + R"("], "reference": "elsewhere"})", {"key reference", "elsewhere"}},
      {R"({"runs": [")" + run0 + R"(", ")" + run0 + R"("]})", {"key runs", "twice"}},
      {R"({"runs": [")" + run0 + R"(", 3]})", {"key runs", "path string"}},
      {R"({"runs": [")" + run0 + R"(", ")" + Sample("dist_gloo/npu") + R"("]})", {"run 1 against the reference", "step folders"}},
  };
  for (const Case& c : cases) {
    WriteFile(dir / "runs.json", c.json);
    RunResult r = RunTool({"graph", "-i", dir / "runs.json", "-o", dir / "out"});
    ExpectOneError(r, c.parts);
    EXPECT_FALSE(fs::exists(dir / "out")) << c.json;
  }
}

}  // namespace
