// A code_mapping result as the stack source of a MindSpore static-graph dump (graph and
// graph_visualize --code_mapping; issue 15, point 3), on real MindSpore 2.10 CPU data
// (testdata/code_mapping/static_graph, made by make_static_dump.sh): the save_graphs IR and kernel
// dump of one training step, and the cell dump of the same step in msprobe's static-graph layout
// (dump.json / construct.json / stack.json written by msprobe 26.2.0's own post-processing, every
// stack empty). Then bad mapping files.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace graph_ascend::testing {
namespace {

std::string Data(const std::string& rel) { return SourceDir() + "/tests/companions/testdata/code_mapping/" + rel; }
std::string Cells() { return Data("static_graph/cells/step0/rank"); }

// graph-ascend code_mapping on the kernel dump: the code_mapping_<time>.csv it wrote.
std::string MakeMapping(const TempDir& dir) {
  RunResult r = RunTool({"code_mapping", "--ir", Data("static_graph/graph_build_0.ir"), "--dump_data",
                         Data("static_graph/kernels"), "--output", dir / "mapping"});
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> files = Files(dir / "mapping");
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? "" : dir / ("mapping/" + files[0]);
}

std::string BuildJson(const TempDir& dir, const std::string& npu) {
  WriteFile(dir / "build.json", "{\"npu_path\": \"" + npu + "\"}");
  return dir / "build.json";
}

std::vector<std::string> StackOf(const Json& graph, const std::string& node) {
  std::vector<std::string> lines;
  for (const auto& l : graph["node"].at(node)["stack_info"]) lines.push_back(l.get<std::string>());
  return lines;
}

const char* kCells[] = {"Cell.dense.Dense.forward.0", "Cell.relu.ReLU.forward.0", "Cell.relu.ReLU.backward.0",
                        "Cell.dense.Dense.backward.0"};

TEST(CodeMappingGraph, MsprobesStaticCellDumpHasNoStacks) {
  TempDir dir;
  std::vector<std::string> vis = Graph(BuildJson(dir, Cells()), dir / "out");
  ASSERT_EQ(vis.size(), 1u);
  Json g = Export(vis[0]);
  for (const char* cell : kCells) EXPECT_EQ(StackOf(g, cell), std::vector<std::string>{}) << cell;
}

TEST(CodeMappingGraph, CellsTakeTheCallLineOfTheirKernels) {
  TempDir dir;
  std::string mapping = MakeMapping(dir);
  std::vector<std::string> vis = Graph(BuildJson(dir, Cells()), dir / "out", {"--code_mapping", mapping});
  ASSERT_EQ(vis.size(), 1u);
  Json g = Export(vis[0]);
  // graph simplifies a module's stack to the line that calls it (-cs keeps it whole).
  auto dense = StackOf(g, "Cell.dense.Dense.forward.0");
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_NE(dense[0].find("static_cell_dump.py:"), std::string::npos) << dense[0];
  EXPECT_NE(dense[0].find("y = self.dense(x)"), std::string::npos) << dense[0];
  auto relu = StackOf(g, "Cell.relu.ReLU.forward.0");
  ASSERT_EQ(relu.size(), 1u);
  EXPECT_NE(relu[0].find("y = self.relu(y)"), std::string::npos) << relu[0];
  // Backward cells: the gradient kernels carry the forward call's code.
  EXPECT_EQ(StackOf(g, "Cell.dense.Dense.backward.0"), dense);
  EXPECT_EQ(StackOf(g, "Cell.relu.ReLU.backward.0"), relu);

  RunResult info = RunTool({"info", vis[0]});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(InfoLine(info.out, "npu stacks:"), "npu stacks: 4 nodes from code mapping " + mapping) << info.out;
}

TEST(CodeMappingGraph, CompleteStacksAreTheLinesTheCellsKernelsShare) {
  TempDir dir;
  std::string mapping = MakeMapping(dir);
  std::vector<std::string> vis = Graph(BuildJson(dir, Cells()), dir / "out", {"-cs", "--code_mapping", mapping});
  ASSERT_EQ(vis.size(), 1u);
  Json g = Export(vis[0]);
  auto dense = StackOf(g, "Cell.dense.Dense.forward.0");
  ASSERT_GE(dense.size(), 4u);
  // Outermost first, as code_mapping writes them: TrainOneStepCell's construct down to the Dense call.
  EXPECT_NE(dense.front().find("cell_wrapper.py"), std::string::npos) << dense.front();
  bool call = false, matmul = false;
  for (const std::string& line : dense) {
    EXPECT_EQ(line.rfind("In file ", 0), 0u) << line;
    call |= line.find("y = self.dense(x)") != std::string::npos;
    matmul |= line.find("self.matmul(") != std::string::npos;
  }
  EXPECT_TRUE(call);
  EXPECT_FALSE(matmul) << "the MatMul line is only one kernel's, not the cell's";

  // graph_visualize keeps whole stacks too.
  RunResult r = RunTool({"graph_visualize", "-tp", Cells(), "-o", dir / "out26", "--code_mapping", mapping});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> files = Files(dir / "out26");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(StackOf(Export(dir / ("out26/" + files[0])), "Cell.dense.Dense.forward.0"), dense);
}

TEST(CodeMappingGraph, StatisticCsvColumnsAndMsprobesCsvWorkToo) {
  TempDir dir;
  // A statistic.csv that code_mapping gave its Code Stack / Scope Name columns.
  fs::copy(Data("statistic"), dir / "statistic", fs::copy_options::recursive);
  RunResult r = RunTool(
      {"code_mapping", "--ir", Data("static_graph/graph_build_0.ir"), "--dump_data", dir / "statistic", "--no-backup"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> vis =
      Graph(BuildJson(dir, Cells()), dir / "out", {"--code_mapping", dir / "statistic/rank_0/Net/0/0/statistic.csv"});
  ASSERT_EQ(vis.size(), 1u);
  auto dense = StackOf(Export(vis[0]), "Cell.dense.Dense.forward.0");
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_NE(dense[0].find("static_cell_dump.py:"), std::string::npos) << dense[0];

  // msprobe 8.3.3's own code_mapping CSV (of train_step.py, the same Net): its lines name that file.
  vis = Graph(BuildJson(dir, Cells()), dir / "out_msprobe",
              {"--code_mapping", Data("msprobe-8.3.3/code_mapping_npy.csv")});
  ASSERT_EQ(vis.size(), 1u);
  dense = StackOf(Export(vis[0]), "Cell.dense.Dense.forward.0");
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_NE(dense[0].find("train_step.py:"), std::string::npos) << dense[0];
  EXPECT_NE(dense[0].find("y = self.dense(x)"), std::string::npos) << dense[0];
}

TEST(CodeMappingGraph, StackJsonMayBeAbsentWithAMapping) {
  TempDir dir;
  std::string mapping = MakeMapping(dir);
  fs::copy(Cells(), dir / "cells", fs::copy_options::recursive);
  fs::remove(dir / "cells/stack.json");
  std::vector<std::string> vis = Graph(BuildJson(dir, dir / "cells"), dir / "out", {"--code_mapping", mapping});
  ASSERT_EQ(vis.size(), 1u);
  EXPECT_EQ(StackOf(Export(vis[0]), "Cell.relu.ReLU.forward.0").size(), 1u);
  // Without the mapping the build has no stacks, and says so (dump_only_test.cc).
  RunResult r = RunTool({"graph", "-i", dir / "build.json", "-o", dir / "out2"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "graph-ascend: warning: " + dir / "cells/dump.json" + ": no stack.json beside it: no call stacks\n");
}

// Lines of a real mapping, with `edit` applied, written to `path`.
std::string Edited(const std::string& from, const std::string& path, const std::function<void(std::string*)>& edit) {
  std::string text = ReadFile(from);
  edit(&text);
  WriteFile(path, text);
  return path;
}

TEST(CodeMappingGraph, BadMappingIsOneLineExitTwoAndNothingWritten) {
  TempDir dir;
  std::string mapping = MakeMapping(dir);
  std::string build = BuildJson(dir, Cells());
  std::string text = ReadFile(mapping);
  std::vector<std::string> lines = Lines(text);
  ASSERT_GT(lines.size(), 10u);
  struct Case {
    const char* what;
    std::string file;
    std::vector<std::string> parts;
  };
  std::vector<Case> cases = {
      {"a missing file", dir / "none.csv", {dir / "none.csv"}},
      {"an unterminated quote",
       Edited(mapping, dir / "cut.csv", [](std::string* t) { t->resize(t->rfind('"')); }),
       {dir / "cut.csv", "unterminated quoted field", "line "}},
      {"no Code Stack column",
       Edited(mapping, dir / "header.csv", [](std::string* t) { t->replace(t->find("Code Stack"), 10, "Code"); }),
       {dir / "header.csv", "line 1", "no \"Code Stack\" and \"Scope Name\" columns"}},
      {"a short row",
       Edited(mapping, dir / "short.csv", [](std::string* t) { t->insert(t->find('\n') + 1, "x.npy\n"); }),
       {dir / "short.csv", "line 2", "has 1 fields"}},
      {"text after a closing quote",
       Edited(mapping, dir / "quote.csv", [](std::string* t) { t->insert(t->find("\",") + 1, "x"); }),
       {dir / "quote.csv", "text after the closing quote"}},
      {"no row with a scope",
       Edited(Data("msprobe-8.3.3/code_mapping_npy.csv"), dir / "noscope.csv",
              [](std::string* t) {
                t->resize(t->find('\n') + 1);
                t->append("/a/Parameter.x.npy,,\n");
              }),
       {dir / "noscope.csv", "none of its 1 rows has a scope"}},
      {"a header only",
       Edited(mapping, dir / "header_only.csv", [](std::string* t) { t->resize(t->find('\n') + 1); }),
       {dir / "header_only.csv", "no data rows"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ExpectOneError(RunTool({"graph", "-i", build, "-o", dir / "out", "--code_mapping", c.file}), c.parts);
    EXPECT_TRUE(Files(dir / "out").empty());
  }
  // Rows that name no cell of the dump: only the optimizer's kernels.
  std::string sgd_only = lines[0] + "\n";
  bool in_sgd = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].rfind("/", 0) == 0) in_sgd = lines[i].find("/SGD.Default_optimizer") != std::string::npos;
    if (in_sgd) sgd_only += lines[i] + "\n";
  }
  ASSERT_NE(sgd_only.find("Default/optimizer-SGD/SGD-op0"), std::string::npos);
  WriteFile(dir / "sgd.csv", sgd_only);
  ExpectOneError(RunTool({"graph", "-i", build, "-o", dir / "out", "--code_mapping", dir / "sgd.csv"}),
                 {dir / "sgd.csv", "names no Cell node of " + Cells()});
  EXPECT_TRUE(Files(dir / "out").empty());
  // A second file is for a compare's bench side.
  ExpectOneError(RunTool({"graph", "-i", build, "-o", dir / "out", "--code_mapping", mapping, mapping}),
                 {"a second --code_mapping file is for the bench side"});
  ExpectOneError(RunTool({"graph", "-i", build, "-o", dir / "out", "--code_mapping"}), {"--code_mapping takes"});
}

}  // namespace
}  // namespace graph_ascend::testing
