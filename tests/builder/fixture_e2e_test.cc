// End to end on small hand-written dumps: what the samples do not show.
// MindSpore and MSAdapter dumps (framework detection, .npy tensors in a
// real-data compare, reference §3.5, §6.2, §6.7), micro steps and API
// collections in a compare (§5.10, §6.9), and compare.json variants (§2.3,
// §2.4).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"

namespace graph_ascend {
namespace {

namespace fs = std::filesystem;
using graph_ascend::testing::Export;
using graph_ascend::testing::Files;
using graph_ascend::testing::Graph;
using graph_ascend::testing::HasIndex;
using graph_ascend::testing::Index;
using graph_ascend::testing::Json;
using graph_ascend::testing::Lines;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::Sample;
using graph_ascend::testing::SourceDir;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::Tensor;
using graph_ascend::testing::WriteDumpDir;
using graph_ascend::testing::WriteFile;

std::string TensorFixture(const std::string& name) { return SourceDir() + "/tests/builder/testdata/tensors/" + name; }

// A MindSpore tensor leaf of a tensor dump.
std::string MsLeaf(const std::string& dtype, const std::string& shape, const std::string& max,
                   const std::string& data_name) {
  return R"({"type": "mindspore.Tensor", "dtype": ")" + dtype + R"(", "shape": )" + shape + R"(, "Max": )" + max +
         R"(, "Min": -1.0, "Mean": 0.5, "Norm": 2.0, "data_name": ")" + data_name + "\"}";
}

std::string MsDump(const std::string& framework, const std::string& task, const std::string& data) {
  return R"({"task": ")" + task + R"(", "level": "mix", "framework": ")" + framework +
         R"(", "dump_data_dir": "/elsewhere/dump_tensor_data", "data": {)" + data + "}}";
}

// A MindSpore tensor dump whose Dense output differs: npu and bench read
// .npy files written by numpy and ml_dtypes (testdata/tensors).
class MindSporeTensorTest : public ::testing::Test {
 protected:
  void WriteSide(const std::string& side, const std::string& dense_output_file) {
    const std::string data = R"("Cell.net.Dense.forward.0": {"input_args": [)" +
                             MsLeaf("Float32", "[2, 3]", "3.0", "Cell.net.Dense.forward.0.input.0.npy") +
                             R"(], "input_kwargs": {}, "output": [)" +
                             MsLeaf("Float32", "[2, 3]", "3.0", "Cell.net.Dense.forward.0.output.0.npy") +
                             R"(], "parameters": {"weight": )" +
                             MsLeaf("BFloat16", "[4]", "3.140625", "Cell.net.Dense.forward.0.parameters.weight.npy") +
                             R"(}}, "Mint.add.0.forward": {"input_args": [)" +
                             MsLeaf("Float16", "[7]", "65504.0", "Mint.add.0.forward.input.0.npy") +
                             R"(, {"type": "int", "value": 1}], "input_kwargs": {}, "output": [)" +
                             MsLeaf("Int32", "[3]", "2147483647", "Mint.add.0.forward.output.0.npy") + "]}";
    const std::string dir = dir_ / side;
    WriteDumpDir(dir, MsDump("mindspore", "tensor", data),
                 R"({"Cell.net.Dense.forward.0": null, "Mint.add.0.forward": "Cell.net.Dense.forward.0",
                     "Mint.mul.0.forward": null, "Primitive.relu.0.forward": null})",
                 R"js({"Cell.net.Dense.forward.0": ["File net.py, line 3, in construct, \n x = self.Dense(x)"]})js");
    fs::create_directories(dir + "/dump_tensor_data");
    auto put = [&](const std::string& fixture, const std::string& name) {
      fs::copy_file(TensorFixture(fixture), dir + "/dump_tensor_data/" + name);
    };
    put("f32.npy", "Cell.net.Dense.forward.0.input.0.npy");
    put(dense_output_file, "Cell.net.Dense.forward.0.output.0.npy");
    put("bf16.npy", "Cell.net.Dense.forward.0.parameters.weight.npy");
    put("f16.npy", "Mint.add.0.forward.input.0.npy");
    put("i32.npy", "Mint.add.0.forward.output.0.npy");
  }

  TempDir dir_;
};

TEST_F(MindSporeTensorTest, CompareReadsNpyFiles) {
  WriteSide("npu", "f32.npy");
  WriteSide("bench", "f32_fortran.npy");  // the same shape, other values
  WriteFile(dir_ / "compare.json", R"({"npu_path": "npu", "bench_path": "bench"})");
  std::vector<std::string> files = Graph(dir_ / "compare.json", dir_ / "out");
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  EXPECT_EQ(doc["task"], "all");
  const Json& npu = doc["NPU"]["node"];
  const Json& dense = npu.at("Cell.net.Dense.forward.0");
  EXPECT_EQ(dense["node_type"], 0);
  EXPECT_EQ(Index(dense), 1.0) << "identical inputs (ratio 1), no output element within 1/1000 (ratio 0)";
  const Json& out = dense["output_data"].at("Cell.net.Dense.forward.0.output.0");
  EXPECT_EQ(out["One Thousandth Err Ratio"], "0.0");
  EXPECT_EQ(out["MaxAbsErr"], "1.000000e+30");
  EXPECT_EQ(out["data_name"], "Cell.net.Dense.forward.0.output.0.npy");
  const Json& weight = dense["input_data"].at("Cell.net.Dense.forward.0.parameters.weight");
  EXPECT_EQ(weight["Cosine"], "1.0") << "bfloat16 .npy read on both sides";
  EXPECT_EQ(weight["dtype"], "BFloat16");

  const Json& add = npu.at("Mint.add.0.forward");
  EXPECT_EQ(add["node_type"], 1);
  EXPECT_EQ(Index(add), 0.0);
  const Json& f16 = add["input_data"].at("Mint.add.0.forward.input.0");
  EXPECT_EQ(f16["One Thousandth Err Ratio"], "1.0") << "inf and nan at the same places are set aside";
  EXPECT_EQ(add["input_data"].at("Mint.add.0.forward.input.1")["Cosine"], "unsupported") << "no data file";
  EXPECT_EQ(add["output_data"].at("Mint.add.0.forward.output.0")["MaxAbsErr"], "0.0") << "int32 .npy";

  EXPECT_EQ(Index(npu.at("Apis_Between_Modules.0")), 0) << "children without data: 0";
  EXPECT_EQ(doc["NPU"]["dump_data_dir"], "/elsewhere/dump_tensor_data") << "copied, not used for reading";
  RunResult info = RunTool({"info", files[0]});
  EXPECT_NE(info.out.find("(mindspore)"), std::string::npos) << info.out;
}

TEST_F(MindSporeTensorTest, MissingTensorFileIsUnsupportedNotAnError) {
  WriteSide("npu", "f32.npy");
  WriteSide("bench", "f32.npy");
  fs::remove(dir_ / "bench/dump_tensor_data/Cell.net.Dense.forward.0.output.0.npy");
  WriteFile(dir_ / "compare.json", R"({"npu_path": "npu", "bench_path": "bench"})");
  std::vector<std::string> files = Graph(dir_ / "compare.json", dir_ / "out");
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  const Json& out =
      doc["NPU"]["node"].at("Cell.net.Dense.forward.0")["output_data"].at("Cell.net.Dense.forward.0.output.0");
  EXPECT_EQ(out["Cosine"], "unsupported");
  EXPECT_EQ(Index(doc["NPU"]["node"].at("Cell.net.Dense.forward.0")), 0);
}

// MSAdapter: PyTorch names, MindSpore tensors, framework "mindtorch" (§6.2).
std::string MsAdapterDump(const std::string& output_max) {
  const std::string leaf = R"({"type": "mindspore.Tensor", "dtype": "Float32", "shape": [2, 4], "Max": 1.0,
                               "Min": -1.0, "Mean": 0.0, "Norm": 2.0, "requires_grad": true})";
  const std::string out = R"({"type": "mindspore.Tensor", "dtype": "Float32", "shape": [2, 3], "Max": )" + output_max +
                          R"(, "Min": -2.0, "Mean": 0.1, "Norm": 3.0, "requires_grad": true})";
  return MsDump("mindtorch", "statistics",
                R"("Module.fc.Linear.forward.0": {"input_args": [)" + leaf + R"(], "input_kwargs": {}, "output": [)" +
                    out + R"(]}, "Torch.matmul.0.forward": {"input_args": [)" + leaf + R"(], "output": [)" + out +
                    "]}");
}
const char* const kFcConstruct =
    R"({"Module.fc.Linear.forward.0": null, "Torch.matmul.0.forward": "Module.fc.Linear.forward.0"})";

TEST(MsAdapterTest, StatisticsCompare) {
  TempDir dir;
  WriteDumpDir(dir / "npu", MsAdapterDump("2.0"), kFcConstruct);
  WriteDumpDir(dir / "bench", MsAdapterDump("2.5"), kFcConstruct);
  WriteFile(dir / "compare.json", R"({"npu_path": "npu", "bench_path": "bench"})");
  std::vector<std::string> files = Graph(dir / "compare.json", dir / "out");
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  EXPECT_EQ(Index(doc["NPU"]["node"].at("Module.fc.Linear.forward.0")), 0.2) << "|2.0 - 2.5| / 2.5";
  EXPECT_EQ(doc["NPU"]["node"].at("Torch.matmul.0.forward")["node_type"], 1);
  RunResult info = RunTool({"info", files[0]});
  EXPECT_NE(info.out.find("(mindtorch)"), std::string::npos) << info.out;
}

TEST(MsAdapterTest, AgainstPyTorchIsCrossFramework) {
  TempDir dir;
  WriteDumpDir(dir / "npu", MsAdapterDump("2.0"), kFcConstruct);
  const std::string t = Tensor("[2, 4]", "1.0", "-1.0", "0.0", "2.0");
  WriteDumpDir(dir / "bench",
               graph_ascend::testing::DumpJson(R"("Module.fc.Linear.forward.0": {"input_args": [)" + t +
                                               R"(], "output": [)" + t + "]}"),
               kFcConstruct);
  WriteFile(dir / "compare.json", R"({"npu_path": "npu", "bench_path": "bench"})");
  RunResult r = RunTool({"graph", "-i", dir / "compare.json", "-o", dir / "out"});
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(Lines(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("cross-framework"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-lm"), std::string::npos) << r.err;
  EXPECT_TRUE(Files(dir / "out").empty());
}

// §5.10 in a compare: the NPU splits micro steps, matched Bench top-level
// nodes follow, unmatched ones take their numeric suffix; §6.9: collections
// take the worst index of their children.
TEST(CompareFixtureTest, MicroStepsAndApiCollections) {
  TempDir dir;
  auto entry = [](const std::string& max) {
    const std::string t = Tensor("[2]", max, "0.0", "0.5", "1.0");
    return R"({"input_args": [)" + t + R"(], "output": [)" + t + "]}";
  };
  const std::string npu_data = R"("Module.a.A.forward.0": )" + entry("1.0") + R"(, "Torch.x.0.forward": )" +
                               entry("1.5") + R"(, "Torch.y.0.forward": )" + entry("1.25");
  const std::string bench_data = R"("Module.a.A.forward.0": )" + entry("1.0") + R"(, "Torch.x.0.forward": )" +
                                 entry("1.0") + R"(, "Torch.y.0.forward": )" + entry("1.0");
  WriteDumpDir(dir / "npu", graph_ascend::testing::DumpJson(npu_data),
               R"({"Module.a.A.forward.0": null, "Module.a.A.backward.0": null, "Module.a.A.forward.1": null,
                   "Torch.x.0.forward": null, "Torch.y.0.forward": null, "Module.a.A.backward.1": null})");
  WriteDumpDir(dir / "bench", graph_ascend::testing::DumpJson(bench_data),
               R"({"Module.a.A.forward.0": null, "Module.a.A.backward.0": null, "Module.a.A.forward.1": null,
                   "Torch.x.0.forward": null, "Torch.y.0.forward": null, "Module.b.B.forward.3": null})");
  WriteFile(dir / "compare.json", R"({"npu_path": "npu", "bench_path": "bench"})");
  std::vector<std::string> files = Graph(dir / "compare.json", dir / "out");
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  EXPECT_EQ(doc["MicroSteps"], 2);
  std::map<std::string, int> npu_steps, bench_steps;
  for (auto& [name, node] : doc["NPU"]["node"].items()) {
    if (node.contains("micro_step_id")) npu_steps[name] = node["micro_step_id"];
  }
  for (auto& [name, node] : doc["Bench"]["node"].items()) {
    if (node.contains("micro_step_id")) bench_steps[name] = node["micro_step_id"];
  }
  EXPECT_EQ(npu_steps, (std::map<std::string, int>{{"Module.a.A.forward.0", 0},
                                                   {"Module.a.A.backward.0", 0},
                                                   {"Module.a.A.forward.1", 1},
                                                   {"Apis_Between_Modules.0", 1},
                                                   {"Module.a.A.backward.1", 1}}));
  EXPECT_EQ(bench_steps, (std::map<std::string, int>{{"Module.a.A.forward.0", 0},
                                                     {"Module.a.A.backward.0", 0},
                                                     {"Module.a.A.forward.1", 1},
                                                     {"Apis_Between_Modules.0", 1},
                                                     {"Module.b.B.forward.3", 3}}));
  const Json& npu = doc["NPU"]["node"];
  EXPECT_EQ(Index(npu.at("Torch.x.0.forward")), 0.5);
  EXPECT_EQ(Index(npu.at("Torch.y.0.forward")), 0.25);
  EXPECT_EQ(Index(npu.at("Apis_Between_Modules.0")), 0.5) << "the worst child";
  EXPECT_EQ(Index(npu.at("Module.a.A.forward.0")), 0);
  EXPECT_FALSE(HasIndex(npu.at("Module.a.A.backward.0"))) << "matched, but nothing to compare";
  EXPECT_TRUE(npu.at("Module.a.A.backward.1")["matched_node_link"].empty());
}

// §2.3 / §2.4: compare.json variants.
class CompareJsonTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::copy(Sample("dist_gloo/npu/step0/rank0"), dir_ / "npu", fs::copy_options::recursive); }
  RunResult Run(const std::string& compare_json) {
    WriteFile(dir_ / "c.json", compare_json);
    return RunTool({"graph", "-i", dir_ / "c.json", "-o", dir_ / "out"});
  }
  TempDir dir_;
};

TEST_F(CompareJsonTest, NullOrEmptyBenchPathIsABuild) {
  RunResult a = Run(R"({"npu_path": "npu", "bench_path": null, "is_print_compare_log": false, "extra": [1, {}]})");
  EXPECT_EQ(a.status, 0) << a.err;
  RunResult b = Run(R"({"npu_path": "npu", "bench_path": ""})");
  EXPECT_EQ(b.status, 0) << b.err;
  std::vector<std::string> files = Files(dir_ / "out");
  ASSERT_FALSE(files.empty());
  for (const std::string& f : files) EXPECT_EQ(f.rfind("build_", 0), 0u) << f;
}

TEST_F(CompareJsonTest, RelativePathsAreResolvedBesideTheFile) {
  fs::create_directories(dir_ / "cfg");
  WriteFile(dir_ / "cfg/c.json", R"({"npu_path": "../npu"})");
  RunResult r = RunTool({"graph", "-i", dir_ / "cfg/c.json", "-o", dir_ / "out"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(CompareJsonTest, WrongTypesAreNamed) {
  RunResult r = Run(R"({"npu_path": "npu", "is_print_compare_log": "yes"})");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("key is_print_compare_log"), std::string::npos) << r.err;
  RunResult b = Run(R"({"npu_path": "npu", "bench_path": ["bench"]})");
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.err.find("key bench_path"), std::string::npos) << b.err;
  EXPECT_TRUE(Files(dir_ / "out").empty());
}

// A single unnumbered "rank" folder is rank 0 named "rank" (§2.4, §2.5).
TEST_F(CompareJsonTest, UnnumberedRankFolder) {
  fs::create_directories(dir_ / "n");
  fs::create_directories(dir_ / "b");
  fs::copy(Sample("dist_gloo/npu/step0/rank0"), dir_ / "n/rank", fs::copy_options::recursive);
  fs::copy(Sample("dist_gloo/bench/step0/rank0"), dir_ / "b/rank", fs::copy_options::recursive);
  RunResult r = Run(R"({"npu_path": "n", "bench_path": "b"})");
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> files = Files(dir_ / "out");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].substr(0, 13), "compare_rank_");
  EXPECT_EQ(files[0].size(), std::string("compare_rank_20260101000000.vis").size());
}

}  // namespace
}  // namespace graph_ascend
