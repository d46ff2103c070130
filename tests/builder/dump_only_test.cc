// Dump folders holding dump.json alone (serving frameworks dump at level L1 and
// may write no construct.json or stack.json): built and compared as level L1
// dumps, with one warning per folder. The folders are real samples' dump.json
// files copied without their companions.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"

namespace {

namespace fs = std::filesystem;
using graph_ascend::testing::Export;
using graph_ascend::testing::ExpectOneError;
using graph_ascend::testing::Files;
using graph_ascend::testing::InfoLine;
using graph_ascend::testing::Json;
using graph_ascend::testing::Lines;
using graph_ascend::testing::PreOrder;
using graph_ascend::testing::ReadFile;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::Sample;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

// Copies the named files of samples/gpt_statistics/{npu,bench}/<step>/rank0
// into `dir` and writes a compare.json naming them.
void CopySample(const TempDir& dir, const std::vector<std::string>& files, const std::string& step = "step0") {
  for (const std::string side : {"npu", "bench"}) {
    std::string rel = side + "/" + step + "/rank0";
    fs::create_directories(dir / rel);
    for (const std::string& f : files) fs::copy_file(Sample("gpt_statistics/" + rel + "/" + f), dir / (rel + "/" + f));
  }
  WriteFile(dir / "compare.json", R"({"npu_path": "npu/)" + step + R"(/rank0", "bench_path": "bench/)" + step + R"(/rank0"})");
}

// Runs `graph` on dir/compare.json; returns the run and its one .vis.
RunResult Compare(const TempDir& dir, std::string* vis) {
  RunResult r = RunTool({"graph", "-i", dir / "compare.json", "-o", dir / "out"});
  std::vector<std::string> files = Files(dir / "out");
  EXPECT_EQ(files.size(), 1u) << r.err;
  if (files.size() == 1) *vis = dir / ("out/" + files[0]);
  return r;
}

std::string FirstDivergenceLine(const std::string& vis) {
  RunResult info = RunTool({"info", vis});
  EXPECT_EQ(info.status, 0) << info.err;
  return InfoLine(info.out, "first divergence");
}

TEST(DumpOnlyTest, ADumpJsonAloneIsAnL1DumpWithOneWarningPerFolder) {
  TempDir full, only;
  CopySample(full, {"dump.json", "construct.json", "stack.json"});
  CopySample(only, {"dump.json"});
  std::string full_vis, only_vis;
  RunResult full_run = Compare(full, &full_vis);
  RunResult only_run = Compare(only, &only_vis);
  ASSERT_EQ(full_run.status, 0) << full_run.err;
  ASSERT_EQ(only_run.status, 0) << only_run.err;
  EXPECT_EQ(full_run.err, "");
  const std::string what =
      "/rank0/dump.json: no construct.json or stack.json beside it: no module hierarchy: its APIs are laid out in "
      "dump order, as a level L1 dump's, and no call stacks";
  EXPECT_EQ(Lines(only_run.err), (std::vector<std::string>{"graph-ascend: warning: " + only / "npu/step0" + what,
                                                             "graph-ascend: warning: " + only / "bench/step0" + what}));

  // Every dump.json entry is a node, in dump order, right under the root or
  // under a group of APIs between modules (as msprobe groups a level L1
  // dump's top-level APIs where module entries are dumped); a module's
  // backward holds only its parameters' gradients.
  Json npu = Export(only_vis)["NPU"];
  Json dump = Json::parse(ReadFile(only / "npu/step0/rank0/dump.json"));
  std::vector<std::string> entries, nodes;
  for (auto& [name, entry] : dump["data"].items()) entries.push_back(name);
  for (const std::string& n : PreOrder(npu)) {
    if (n == npu["root"] || n.rfind("Apis_Between_Modules.", 0) == 0) continue;
    nodes.push_back(n);
    for (const Json& c : npu["node"][n]["subnodes"]) {
      EXPECT_NE(c.get<std::string>().find(".parameters_grad"), std::string::npos) << n << " holds " << c;
    }
    EXPECT_TRUE(npu["node"][n]["stack_info"].empty()) << n;
  }
  // Same nodes; same order but for the parameters' gradients, which sit in their module's backward.
  auto without_grads = [](std::vector<std::string> v) {
    std::erase_if(v, [](const std::string& n) { return n.find(".parameters_grad") != std::string::npos; });
    return v;
  };
  EXPECT_EQ(without_grads(nodes), without_grads(entries));
  std::sort(nodes.begin(), nodes.end());
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(nodes, entries);

  // The first divergence is the API the hierarchical compare names.
  EXPECT_EQ(FirstDivergenceLine(only_vis), FirstDivergenceLine(full_vis));
  EXPECT_EQ(FirstDivergenceLine(only_vis),
            "first divergence, in execution order: Functional.linear.11.forward (api, index 0.00248837)");
}

TEST(DumpOnlyTest, NoStackJsonKeepsTheHierarchyWithoutStacks) {
  TempDir full, nostack;
  CopySample(full, {"dump.json", "construct.json", "stack.json"});
  CopySample(nostack, {"dump.json", "construct.json"});
  std::string full_vis, nostack_vis;
  ASSERT_EQ(Compare(full, &full_vis).status, 0);
  RunResult r = Compare(nostack, &nostack_vis);
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> warnings = Lines(r.err);
  ASSERT_EQ(warnings.size(), 2u) << r.err;
  EXPECT_EQ(warnings[0], "graph-ascend: warning: " + nostack / "npu/step0/rank0/dump.json" +
                             ": no stack.json beside it: no call stacks");

  Json with = Export(full_vis)["NPU"], without = Export(nostack_vis)["NPU"];
  ASSERT_EQ(with["node"].size(), without["node"].size());
  int stacks = 0;
  for (auto& [name, node] : with["node"].items()) {
    EXPECT_EQ(node["subnodes"], without["node"][name]["subnodes"]) << name;
    EXPECT_TRUE(without["node"][name]["stack_info"].empty()) << name;
    stacks += !node["stack_info"].empty();
  }
  EXPECT_GT(stacks, 0) << "the full sample has stacks, so the test can tell";
}

TEST(DumpOnlyTest, ABatchOfDumpOnlyFoldersBuildsEveryStep) {
  TempDir dir;
  CopySample(dir, {"dump.json"}, "step0");
  CopySample(dir, {"dump.json"}, "step1");
  WriteFile(dir / "batch.json", R"({"npu_path": "npu", "bench_path": "bench"})");
  RunResult r = RunTool({"graph", "-i", dir / "batch.json", "-o", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.err).size(), 4u) << r.err;
  std::vector<std::string> files = Files(dir / "out");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].rfind("compare_step0_rank0_", 0), 0u) << files[0];
  EXPECT_EQ(files[1].rfind("compare_step1_rank0_", 0), 0u) << files[1];
}

// Only a missing companion is forgiven: no dump.json, or a damaged
// construct.json, is still the usual one-line error.
TEST(DumpOnlyTest, NoDumpJsonOrADamagedConstructJsonIsStillAnError) {
  TempDir dir;
  CopySample(dir, {"construct.json", "stack.json"});
  ExpectOneError(RunTool({"graph", "-i", dir / "compare.json", "-o", dir / "out"}),
                 {"npu/step0/rank0/dump.json", "cannot open"});
  EXPECT_TRUE(Files(dir / "out").empty());

  TempDir damaged;
  CopySample(damaged, {"dump.json", "stack.json"});
  WriteFile(damaged / "npu/step0/rank0/construct.json", "{\"Module.a\": ");
  ExpectOneError(RunTool({"graph", "-i", damaged / "compare.json", "-o", damaged / "out"}),
                 {"npu/step0/rank0/construct.json"});
  EXPECT_TRUE(Files(damaged / "out").empty());
}

}  // namespace
