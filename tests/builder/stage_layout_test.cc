// Stage folders above msprobe's layout (docs/FORMAT.md "Stages"): verl's
// step_<N>/<stage>/step0/rank0 on samples/rl_stages (a real msprobe run through
// verl's dumping calls), and msprobe's AclGraphDumper's pid<N> folders, in
// batch mode through graph and graph_visualize; bad layouts get one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"

namespace {

namespace fs = std::filesystem;
using graph_ascend::testing::ExpectOneError;
using graph_ascend::testing::Files;
using graph_ascend::testing::InfoLine;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::Sample;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

const std::vector<std::string> kStages = {"actor_compute_log_prob", "actor_update", "ref_compute_log_prob"};

// The output names with their time stamp written <ts>; every file has the same one.
std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  std::string ts;
  static const std::regex kStamp("_([0-9]{14})(_|\\.vis$)");
  for (const std::string& f : Files(dir)) {
    std::smatch m;
    if (!std::regex_search(f, m, kStamp)) {
      ADD_FAILURE() << "no time stamp in " << f;
      continue;
    }
    if (ts.empty()) ts = m[1];
    EXPECT_EQ(m[1], ts) << f;
    out.push_back(std::regex_replace(f, kStamp, "_<ts>$2"));
  }
  return out;
}

// stage -> the first divergence line of `info` of each output file.
std::map<std::string, std::string> FirstDivergences(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const std::string& f : Files(dir)) {
    RunResult info = RunTool({"info", dir + "/" + f});
    EXPECT_EQ(info.status, 0) << info.err;
    std::string stage = InfoLine(info.out, "stage: ");
    out[stage.substr(std::string("stage: ").size())] = InfoLine(info.out, "first divergence");
  }
  return out;
}

std::string Divergence(const std::string& node) { return "first divergence, in execution order: " + node; }

TEST(StageLayoutTest, VerlStagesArePairedByNameAndTheirDivergenceFoundInTheirStage) {
  TempDir out;
  RunResult r = RunTool({"graph", "-i", Sample("rl_stages/batch.json"), "-o", out.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> want;
  for (const std::string step : {"step_1", "step_2"}) {
    for (const std::string& stage : kStages) want.push_back("compare_step0_rank0_<ts>_" + step + "." + stage + ".vis");
  }
  EXPECT_EQ(Names(out.path()), want);

  // npu's reference model has LayerNorm eps 1e-2: in each step the actor's own log-probs agree, the reference
  // diverges at its layer_norm, and the update where its KL term reads the reference log-probs. (The KL term's
  // gradient does not depend on the reference log-probs, so the actors stay equal from step to step.)
  std::map<std::string, std::string> first = FirstDivergences(out.path());
  ASSERT_EQ(first.size(), 6u);
  for (const std::string step : {"step_1", "step_2"}) {
    EXPECT_EQ(first[step + "/actor_compute_log_prob"], Divergence("none: no divergence beyond noise"));
    EXPECT_EQ(first[step + "/ref_compute_log_prob"].rfind(Divergence("Functional.layer_norm.0.forward "), 0), 0u)
        << first[step + "/ref_compute_log_prob"];
    EXPECT_EQ(first[step + "/actor_update"].rfind(Divergence("Tensor.__sub__.1.forward "), 0), 0u)
        << first[step + "/actor_update"];
  }
}

TEST(StageLayoutTest, GraphVisualizePlansTheSameFilesFromTheRootOrOneStep) {
  TempDir root, step;
  RunResult r = RunTool({"graph_visualize", "-tp", Sample("rl_stages/npu"), "-gp", Sample("rl_stages/bench"), "-o",
                         root.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Names(root.path()).size(), 6u);
  EXPECT_EQ(Names(root.path())[1], "compare_step0_rank0_<ts>_step_1.actor_update.vis");
  r = RunTool({"graph_visualize", "-tp", Sample("rl_stages/npu/step_1"), "-gp", Sample("rl_stages/bench/step_1"),
               "-o", step.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> want;
  for (const std::string& stage : kStages) want.push_back("compare_step0_rank0_<ts>_" + stage + ".vis");
  EXPECT_EQ(Names(step.path()), want);
  EXPECT_EQ(FirstDivergences(step.path())["ref_compute_log_prob"].rfind(
                Divergence("Functional.layer_norm.0.forward "), 0),
            0u);
  // A build of a stages layout: one graph per stage.
  TempDir build;
  r = RunTool({"graph_visualize", "-tp", Sample("rl_stages/npu/step_2"), "-o", build.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  want.clear();
  for (const std::string& stage : kStages) want.push_back("build_step0_rank0_<ts>_" + stage + ".vis");
  EXPECT_EQ(Names(build.path()), want);
}

// Copies the sample's stages `stages` of `side` into dir/side.
void CopyStages(const TempDir& dir, const std::string& side, const std::vector<std::string>& stages) {
  for (const std::string& s : stages) {
    fs::create_directories(dir / (side + "/" + s));
    fs::copy(Sample("rl_stages/" + side + "/" + s), dir / (side + "/" + s), fs::copy_options::recursive);
  }
}

TEST(StageLayoutTest, OnlyTheStagesBothSidesHaveAreCompared) {
  TempDir dir;
  CopyStages(dir, "npu", {"step_1/actor_update", "step_1/ref_compute_log_prob", "step_2/actor_update"});
  CopyStages(dir, "bench", {"step_1/actor_update", "step_1/actor_compute_log_prob", "step_2/actor_update"});
  RunResult r = RunTool({"graph_visualize", "-tp", dir / "npu", "-gp", dir / "bench", "-o", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Names(dir / "out"), (std::vector<std::string>{"compare_step0_rank0_<ts>_step_1.actor_update.vis",
                                                          "compare_step0_rank0_<ts>_step_2.actor_update.vis"}));
}

TEST(StageLayoutTest, NoStageInCommonIsOneError) {
  TempDir dir;
  CopyStages(dir, "npu", {"step_1/actor_update"});
  CopyStages(dir, "bench", {"step_2/actor_update", "step_2/ref_compute_log_prob"});
  WriteFile(dir / "compare.json", R"({"npu_path": "npu", "bench_path": "bench"})");
  RunResult r = RunTool({"graph", "-i", dir / "compare.json", "-o", dir / "out"});
  ExpectOneError(r, {dir / "compare.json", "the npu and bench runs have no stage folder in common: npu has "
                                           "[step_1/actor_update], bench has [step_2/actor_update, "
                                           "step_2/ref_compute_log_prob]"});
  EXPECT_TRUE(Files(dir / "out").empty());
}

TEST(StageLayoutTest, BadStageLayoutsAreOneError) {
  {  // a stage folder beside msprobe's rank folder
    TempDir dir;
    CopyStages(dir, "npu", {"step_1/actor_update"});
    fs::create_directories(dir / "npu/step_1/rank0");
    fs::copy(Sample("rl_stages/npu/step_1/actor_update/step0/rank0/dump.json"), dir / "npu/step_1/rank0/dump.json");
    RunResult r = RunTool({"graph_visualize", "-tp", dir / "npu", "-o", dir / "out"});
    ExpectOneError(r, {dir / "npu/step_1", "the folder layout is not msprobe's", "not a mix of them"});
    EXPECT_TRUE(Files(dir / "out").empty());
  }
  {  // stages nested deeper than verl's step_<N>/<stage>
    TempDir dir;
    fs::create_directories(dir / "npu/run/step_1");
    fs::copy(Sample("rl_stages/npu/step_1"), dir / "npu/run/step_1", fs::copy_options::recursive);
    RunResult r = RunTool({"graph_visualize", "-tp", dir / "npu", "-o", dir / "out"});
    ExpectOneError(r, {dir / "npu/run/step_1: no msprobe dump",
                       "within 2 folder levels of " + dir / "npu"});
  }
  {  // stages on one side, step folders on the other
    TempDir dir;
    CopyStages(dir, "npu", {"step_1/actor_update"});
    fs::copy(Sample("rl_stages/bench/step_1/actor_update"), dir / "bench", fs::copy_options::recursive);
    WriteFile(dir / "compare.json", R"({"npu_path": "npu", "bench_path": "bench"})");
    RunResult r = RunTool({"graph", "-i", dir / "compare.json", "-o", dir / "out"});
    ExpectOneError(r, {dir / "compare.json", "inconsistent"});
  }
  {  // a .vis.db keys graphs by step and rank: the stages of one step and rank would collide
    TempDir dir;
    RunResult r = RunTool({"graph_visualize", "-tp", Sample("rl_stages/npu"), "-gp", Sample("rl_stages/bench"),
                           "--output_format", "db", "-o", dir / "out"});
    ExpectOneError(r, {Sample("rl_stages/npu"), "a .vis.db keys its graphs by step and rank alone"});
    EXPECT_TRUE(Files(dir / "out").empty());
  }
  {  // a folder of notes beside the stages
    TempDir dir;
    CopyStages(dir, "npu", {"step_1/actor_update"});
    WriteFile(dir / "npu/step_1/notes/readme.txt", "not a dump\n");
    RunResult r = RunTool({"graph_visualize", "-tp", dir / "npu", "-o", dir / "out"});
    ExpectOneError(r, {dir / "npu/step_1/notes", "no dump.json"});
  }
  {  // an empty stage folder
    TempDir dir;
    CopyStages(dir, "npu", {"step_1/actor_update"});
    fs::create_directories(dir / "npu/step_1/rollout");
    RunResult r = RunTool({"graph_visualize", "-tp", dir / "npu", "-o", dir / "out"});
    ExpectOneError(r, {dir / "npu/step_1/rollout", "the directory is empty"});
  }
}

// msprobe's AclGraphDumper (graph mode, vLLM-Ascend's aclgraph) writes step<N>/pid<PID>/dump.json when the process
// is not distributed (msprobe/pytorch/aclgraph_dumper.py, _step_rank_dir): a process folder as proc<pid> is.
TEST(StageLayoutTest, AclGraphPidFoldersPairAsOneProcess) {
  TempDir dir;
  for (const auto& [side, pid] : {std::pair<std::string, std::string>{"npu", "pid4242"}, {"bench", "pid77"}}) {
    fs::create_directories(dir / (side + "/step0/" + pid));
    fs::copy(Sample("rl_stages/" + side + "/step_1/ref_compute_log_prob/step0/rank0/dump.json"),
             dir / (side + "/step0/" + pid + "/dump.json"));
  }
  RunResult r = RunTool({"graph_visualize", "-tp", dir / "npu", "-gp", dir / "bench", "-o", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Names(dir / "out"), (std::vector<std::string>{"compare_step0_pid4242_<ts>.vis"}));
  RunResult info = RunTool({"info", dir / ("out/" + Files(dir / "out")[0])});
  EXPECT_EQ(InfoLine(info.out, "first divergence").rfind(Divergence("Functional.layer_norm.0.forward "), 0), 0u)
      << info.out;
}

}  // namespace
