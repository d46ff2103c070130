// MSAdapter (mindtorch) on a real dump (issue 33 point 3): samples/msadapter/npu
// was written by msprobe 26.2.0 around mindnlp 0.5.1's mindtorch on MindSpore
// 2.7.0 (framework "mindtorch", PyTorch API names, mindspore.Tensor leaves; its
// float16 exp overflows), samples/msadapter/bench by msprobe around PyTorch
// running the same model and weights. Build, compare against PyTorch and
// against itself, the overflow check and op_generate; bad input gets one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"

namespace {

namespace fs = std::filesystem;
using graph_ascend::testing::CountMatched;
using graph_ascend::testing::ExpectOneError;
using graph_ascend::testing::Export;
using graph_ascend::testing::Files;
using graph_ascend::testing::Graph;
using graph_ascend::testing::Index;
using graph_ascend::testing::InfoLine;
using graph_ascend::testing::Json;
using graph_ascend::testing::ReadFile;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::Sample;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

const std::string kNpu = "msadapter/npu/step0/rank0";

std::string Info(const std::string& vis) {
  RunResult r = RunTool({"info", vis});
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

TEST(MsAdapterSampleTest, BuildKeepsPyTorchNamesAndTheFramework) {
  TempDir dir;
  std::vector<std::string> files = Graph(Sample("msadapter/build.json"), dir / "out");
  ASSERT_EQ(files.size(), 1u);
  std::string info = Info(files[0]);
  EXPECT_NE(InfoLine(info, "npu dump: ").find("(mindtorch)"), std::string::npos) << info;
  EXPECT_EQ(InfoLine(info, "NPU: "), "NPU: 41 nodes");
  Json doc = Export(files[0]);
  const Json& node = doc["node"];
  // msprobe in mindtorch mode hooks torch.nn.functional, torch.Tensor and torch: PyTorch's prefixes.
  for (const char* name : {"Module.fc1.Linear.forward.0", "Functional.linear.0.forward", "Torch.exp.0.forward",
                           "Tensor.to.0.forward", "Module.norm.LayerNorm.parameters_grad.0",
                           "Functional.layer_norm.0.backward"}) {
    EXPECT_TRUE(node.contains(name)) << name;
  }
  EXPECT_EQ(node["Torch.exp.0.forward"]["upnode"], "Module.softmax.NaiveSoftmax.forward.0");
  const Json& in = node["Functional.linear.0.forward"]["input_data"]["Functional.linear.0.forward.input.0"];
  EXPECT_EQ(in["type"], "mindspore.Tensor");
  EXPECT_EQ(in["dtype"], "mindspore.float32");
}

TEST(MsAdapterSampleTest, AgainstPyTorchNeedsALayerMappingAsInMsprobe) {
  TempDir dir;
  // msprobe 26.2.0 counts a mindtorch dump as MindSpore (its tensors' type) and refuses a compare
  // with a PyTorch one without -lm (CROSS_FRAME_ERROR); so does graph-ascend, naming mindtorch.
  RunResult r = RunTool({"graph", "-i", Sample("msadapter/compare.json"), "-o", dir / "out"});
  ExpectOneError(r, {"msadapter/compare.json", "mindtorch (MindSpore tensors)", "bench dump is pytorch",
                     "-lm alone pairs mindtorch's PyTorch names"});
  EXPECT_TRUE(Files(dir / "out").empty());
}

TEST(MsAdapterSampleTest, AgainstPyTorchPairsByName) {
  TempDir dir;
  std::vector<std::string> files = Graph(Sample("msadapter/compare.json"), dir / "out", {"-lm"});
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  const Json& npu = doc["NPU"]["node"];
  // msprobe 26.2.0 with a bare -lm pairs the same 37 of 41 nodes: all but the casts PyTorch does not dump.
  EXPECT_EQ(CountMatched(doc["NPU"]), 37);
  EXPECT_EQ(CountMatched(doc["Bench"]), 37);
  std::set<std::string> unmatched;
  for (auto& [name, node] : npu.items()) {
    if (node["matched_node_link"].empty()) unmatched.insert(name);
  }
  EXPECT_EQ(unmatched, (std::set<std::string>{"Tensor.to.0.forward", "Tensor.to.1.forward", "Tensor.to.0.backward",
                                              "Tensor.to.1.backward"}));
  for (const char* name : {"Module.fc1.Linear.forward.0", "Functional.linear.0.forward",
                           "Functional.layer_norm.0.forward", "Functional.linear.1.forward", "Torch.exp.0.forward"}) {
    ASSERT_FALSE(npu[name]["matched_node_link"].empty()) << name;
    EXPECT_EQ(npu[name]["matched_node_link"].back(), name) << "paired with the bench node of the same name";
  }
  // Before the float16 cast MindSpore's CPU kernels agree with PyTorch's to a few float32 ulps.
  EXPECT_LT(Index(npu["Functional.layer_norm.0.forward"]), 0.2);
  std::string info = Info(files[0]);
  EXPECT_EQ(InfoLine(info, "first divergence"),
            "first divergence, in execution order: Tensor.to.0.forward (api, unmatched)");
  EXPECT_NE(info.find("overflow appeared                    Torch.exp.0.forward"), std::string::npos) << info;
  // msprobe 26's grading marks every pair an error: "The dtype of NPU and Bench are inconsistent"
  // (mindspore.float32 against torch.float32), as msprobe 26.2.0 does on this pair.
  EXPECT_EQ(InfoLine(info, "msprobe 26 grades"),
            "msprobe 26 grades (NPU nodes): pass 0, warning 0, error 36, unmatched 4");
}

TEST(MsAdapterSampleTest, AgainstItselfDoesNotDiverge) {
  TempDir dir;
  // msprobe 26.2.0 refuses this one ("Unrecognized framework, target now is mindtorch, golden now is
  // mindtorch"): its compare takes a mindtorch dump only against PyTorch or MindSpore.
  std::vector<std::string> files = Graph(Sample("msadapter/self.json"), dir / "out");
  ASSERT_EQ(files.size(), 1u);
  std::string info = Info(files[0]);
  EXPECT_EQ(InfoLine(info, "NPU: "), "NPU: 41 nodes");
  EXPECT_EQ(InfoLine(info, "  matched"), "  matched 41, unmatched 0");
  // The overflow is in both runs: not where they part (msprobe 26 sets aside Inf/NaN the bench shows too).
  EXPECT_EQ(InfoLine(info, "first divergence"),
            "first divergence, in execution order: none: no divergence beyond noise");
  EXPECT_EQ(InfoLine(info, "msprobe 26 grades"),
            "msprobe 26 grades (NPU nodes): pass 40, warning 0, error 0, unmatched 0");
  RunResult check = RunTool({"check", files[0]});
  EXPECT_EQ(check.status, 0) << check.out << check.err;
}

TEST(MsAdapterSampleTest, OverflowCheckFindsTheFloat16Exp) {
  TempDir dir;
  std::vector<std::string> files = Graph(Sample("msadapter/build.json"), dir / "out", {"-oc"});
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  std::map<std::string, std::string> levels;
  for (auto& [name, node] : doc["node"].items()) {
    if (node["data"].contains("overflow_level")) levels[name] = node["data"]["overflow_level"];
  }
  // What msprobe 26.2.0's graph_visualize -oc writes for this dump, node by node.
  const std::map<std::string, std::string> msprobe = {
      {"Torch.exp.0.forward", "critical"},
      {"Tensor.sum.0.forward", "high"},
      {"Tensor.__truediv__.0.forward", "high"},
      {"Tensor.to.1.forward", "high"},
      {"Module.softmax.NaiveSoftmax.forward.0", "critical"},
      {"Tensor.__mul__.1.forward", "high"},
      {"Tensor.sum.1.forward", "high"},
      {"Tensor.mean.0.forward", "high"},
      {"Tensor.__mul__.1.backward", "critical"},
      {"Tensor.__truediv__.0.backward", "critical"},
      {"Tensor.sum.0.backward", "high"},
      {"Torch.exp.0.backward", "high"},
      {"Tensor.to.0.backward", "high"},
      {"Module.softmax.NaiveSoftmax.backward.0", "critical"},
      {"Tensor.__mul__.0.backward", "high"},
      {"Functional.linear.1.backward", "high"},
      {"Module.fc2.Linear.backward.0", "high"},
      {"Functional.layer_norm.0.backward", "high"},
      {"Module.norm.LayerNorm.backward.0", "high"},
      {"Functional.relu.0.backward", "high"},
      {"Module.act.ReLU.backward.0", "high"},
      {"Functional.linear.0.backward", "high"},
      {"Module.fc1.Linear.backward.0", "medium"},
  };
  EXPECT_EQ(levels, msprobe);
  EXPECT_EQ(InfoLine(Info(files[0]), "  overflow"), "  overflow: critical 5, high 17, medium 1");
}

TEST(MsAdapterSampleTest, OpGenerateWritesAPyTorchScript) {
  TempDir dir;
  WriteFile(dir / "config_op.json", R"({"dump_json_path": ")" + Sample(kNpu + "/dump.json") +
                                        R"(", "api_name": "Torch.exp.0", "extract_api_path": ")" +
                                        (dir / "Torch.exp.0.json") +
                                        R"(", "propagation": "forward", "data_mode": "random_data",
                                        "random_seed": 1234, "iter_times": 1})");
  RunResult r = RunTool({"op_generate", "-i", dir / "config_op.json", "-o", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string script = ReadFile(dir / "out/Torch.exp.0.forward.py");
  // PyTorch's names run in PyTorch (tests/python/test_op_generate_scripts.py runs it, case mindtorch_exp_fp16);
  // the mindtorch tensors' types and dtypes are rebuilt as torch tensors.
  EXPECT_NE(script.find("\nimport torch\n"), std::string::npos);
  EXPECT_NE(script.find("\"mindspore.Tensor\""), std::string::npos);
  EXPECT_NE(script.find("mindspore.float16"), std::string::npos);
  EXPECT_EQ(script.find("import mindspore"), std::string::npos);
}

TEST(MsAdapterSampleTest, MalformedMindtorchDumpIsOneLine) {
  TempDir dir;
  fs::copy(Sample(kNpu), dir / "npu", fs::copy_options::recursive);
  std::string text = ReadFile(dir / "npu/dump.json");
  std::string bad = text;
  bad.replace(bad.find("\"framework\": \"mindtorch\""), 24, "\"framework\": [\"mindtorch\"]");
  WriteFile(dir / "npu/dump.json", bad);
  WriteFile(dir / "build.json", R"({"npu_path": "npu"})");
  RunResult r = RunTool({"graph", "-i", dir / "build.json", "-o", dir / "out"});
  ExpectOneError(r, {"npu/dump.json", "line 4", "key framework: expected a string or null"});
  EXPECT_TRUE(Files(dir / "out").empty());
  // Cut short inside an entry: the byte where the text ends.
  WriteFile(dir / "npu/dump.json", text.substr(0, text.size() / 2));
  r = RunTool({"graph", "-i", dir / "build.json", "-o", dir / "out"});
  ExpectOneError(r, {"npu/dump.json", "byte"});
  EXPECT_TRUE(Files(dir / "out").empty());
}

}  // namespace
