// Checkpoint similarity on the graph (graph --ckpt / --ckpt-json, info): the
// samples' Megatron-style GPT dump (samples/layer_mapping/npu, 2 layers) with
// checkpoints of the same model written by real torch.save (samples/ckpt,
// 4 layers), the module values checked against msprobe 26.2.0's own
// ckpt_compare output on those checkpoints (samples/ckpt/msprobe/).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "vis/vis_file.h"
#include "weights/ckpt_similarity.h"

namespace graph_ascend::testing {
namespace {

using weights::ModulePathOf;

Json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

vis::CkptSimilarity ReadCkpt(const std::string& vis_path, vis::FileMeta* meta = nullptr) {
  auto r = vis::VisReader::Open(vis_path);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
  if (!r.ok()) return {};
  if (meta) *meta = (*r)->meta();
  auto s = (*r)->ReadCkpt();
  EXPECT_TRUE(s.ok());
  return s.ok() ? *s : vis::CkptSimilarity();
}

std::string BuildJson() { return Sample("layer_mapping/build.json"); }

TEST(CkptModulePath, DumpNamesToModulePaths) {
  EXPECT_EQ(ModulePathOf("Module.decoder.layers.0.self_attention.linear_qkv.ColumnParallelLinear.forward.0"),
            "decoder.layers.0.self_attention.linear_qkv");
  EXPECT_EQ(ModulePathOf("Module.decoder.layers.1.mlp.linear_fc2.RowParallelLinear.backward.3"),
            "decoder.layers.1.mlp.linear_fc2");
  // DDP / Float16Module wrappers, and the chunk index of a model list before them.
  EXPECT_EQ(ModulePathOf("Module.module.module.output_layer.ColumnParallelLinear.forward.0"), "output_layer");
  EXPECT_EQ(ModulePathOf("Module.1.module.module.decoder.layers.0.TransformerLayer.forward.0"), "decoder.layers.0");
  // An nn.Sequential child keeps its number; the model itself has the empty path.
  EXPECT_EQ(ModulePathOf("Module.0.Linear.forward.0"), "0");
  EXPECT_EQ(ModulePathOf("Module.GPTModel.forward.0"), "");
  // Not module calls.
  EXPECT_FALSE(ModulePathOf("Module.fc.Linear.parameters_grad"));
  EXPECT_FALSE(ModulePathOf("Torch.matmul.0.forward"));
  EXPECT_FALSE(ModulePathOf("Apis_Between_Modules.0"));
}

TEST(CkptModulePath, FusedLayerNormGoesBackToLinearQkv) {
  // Transformer Engine's fused norm: ckpt_compare names it input_layernorm, the model has no such module.
  auto params = weights::ParseCkptJson(R"({
      "decoder.layers.0.input_layernorm.weight": {"l2": 0.5, "cos": 0.9, "numel": 4, "shape": [4]},
      "decoder.layers.0.self_attention.linear_qkv.weight": {"l2": 0.0, "cos": 1.0, "numel": 8, "shape": [2, 4]},
      "decoder.layers.0.mlp.linear_fc1.weight": {"l2": null, "cos": null, "numel": [8, 16], "shape": [[2, 4], [4, 4]]},
      "decoder.layers.7.mlp.linear_fc1.weight": {"l2": 1.0, "cos": 0.5, "numel": 8, "shape": [2, 4]}})",
                                       "test.json");
  ASSERT_TRUE(params.ok()) << params.error().ToString();
  std::vector<std::string> names = {
      "DefaultModel",
      "Module.module.decoder.layers.0.self_attention.linear_qkv.TELayerNormColumnParallelLinear.forward.0",
      "Module.module.decoder.layers.0.mlp.linear_fc1.TELayerNormColumnParallelLinear.forward.0",
      "Module.module.decoder.layers.0.mlp.linear_fc1.TELayerNormColumnParallelLinear.backward.0"};
  vis::CkptSimilarity s = weights::MapOntoModules(*params, static_cast<uint32_t>(names.size()),
                                                  [&](uint32_t n) { return std::string_view(names[n]); });
  ASSERT_EQ(s.module_size(), 2);
  const vis::CkptModule& qkv = s.module(0);
  EXPECT_EQ(qkv.path(), "decoder.layers.0.self_attention.linear_qkv");
  EXPECT_EQ(qkv.param_size(), 2);
  EXPECT_DOUBLE_EQ(qkv.worst_cos(), 0.9);
  EXPECT_DOUBLE_EQ(qkv.max_l2(), 0.5);
  const vis::CkptModule& fc1 = s.module(1);
  EXPECT_TRUE(fc1.incomparable());
  EXPECT_EQ(fc1.node_size(), 2);  // forward and backward calls
  EXPECT_TRUE(weights::Differs(fc1, weights::Tolerance{}));
  // Layer 7 has no node: unmapped, not guessed.
  int unmapped = 0;
  for (const vis::CkptParam& p : s.param()) unmapped += p.module() < 0;
  EXPECT_EQ(unmapped, 1);
  // Tolerances: equal within 1e-6 is equal; l2 tolerance lets small changes pass.
  EXPECT_TRUE(weights::Differs(qkv, weights::Tolerance{}));
  EXPECT_FALSE(weights::Differs(qkv, weights::Tolerance{0.2, 0.6}));
}

TEST(CkptGraph, ModulesShowTheirParametersAsMsprobeComparesThem) {
  TempDir out;
  auto files = Graph(BuildJson(), out / "o", {"--ckpt", Sample("ckpt/tp2pp2_a"), Sample("ckpt/tp2pp2_b")});
  ASSERT_EQ(files.size(), 1u);
  vis::FileMeta meta;
  vis::CkptSimilarity s = ReadCkpt(files[0], &meta);
  Json ref = ReadJsonFile(Sample("ckpt/msprobe/tp2pp2.json"));
  ASSERT_EQ(s.param_size(), static_cast<int>(ref.size()));
  EXPECT_TRUE(meta.ckpt_compared());
  EXPECT_EQ(meta.ckpt_param_count(), ref.size());
  // The dump has layers 0 and 1; the checkpoints' layers 2 and 3 (6 parameters each) have no node.
  uint32_t unmapped = 0;
  for (const vis::CkptParam& p : s.param()) {
    bool deep = p.name().rfind("decoder.layers.2.", 0) == 0 || p.name().rfind("decoder.layers.3.", 0) == 0;
    EXPECT_EQ(p.module() < 0, deep) << p.name();
    unmapped += p.module() < 0;
  }
  EXPECT_EQ(unmapped, 12u);
  EXPECT_EQ(meta.ckpt_unmapped_count(), 12u);
  // Each module: the worst cos and the largest l2 of its parameters, as msprobe computed them.
  ASSERT_EQ(s.module_size(), static_cast<int>(ref.size()) - 12);
  for (const vis::CkptModule& m : s.module()) {
    double cos = 2, l2 = -1;
    for (auto& [name, v] : ref.items()) {
      if (name.rfind(m.path() + ".", 0) != 0 || name.find('.', m.path().size() + 1) != std::string::npos) continue;
      cos = std::min(cos, v["cos"].get<double>());
      l2 = std::max(l2, v["l2"].get<double>());
    }
    ASSERT_GE(l2, 0) << m.path() << " has parameters in msprobe's output";
    EXPECT_NEAR(m.worst_cos(), cos, 1e-6) << m.path();
    EXPECT_NEAR(m.max_l2(), l2, 1e-5 * std::max(1.0, l2)) << m.path();
    ASSERT_GE(m.node_size(), 1);
  }
  // info: the worst ten, the lowest cos first (output_layer in msprobe's numbers too).
  std::string worst;
  double lowest = 2;
  for (auto& [name, v] : ref.items()) {
    if (name.rfind("decoder.layers.2.", 0) == 0 || name.rfind("decoder.layers.3.", 0) == 0) continue;
    if (v["cos"].get<double>() < lowest) lowest = v["cos"].get<double>(), worst = name.substr(0, name.rfind('.'));
  }
  RunResult info = RunTool({"info", files[0]});
  ASSERT_EQ(info.status, 0) << info.err;
  std::vector<std::string> lines = Lines(info.out);
  auto head = std::find(lines.begin(), lines.end(), "modules whose weights differ most:");
  ASSERT_NE(head, lines.end()) << info.out;
  ASSERT_GE(lines.end() - head, 11);
  EXPECT_NE(head[1].find(" " + worst + " "), std::string::npos) << head[1];
  EXPECT_NE(info.out.find("27 parameters, 12 on no module node"), std::string::npos) << info.out;
}

TEST(CkptGraph, MsprobesJsonGivesTheSameModules) {
  TempDir out;
  auto ours = Graph(BuildJson(), out / "a", {"--ckpt", Sample("ckpt/tp2pp2_a"), Sample("ckpt/tp2pp2_b")});
  auto theirs = Graph(BuildJson(), out / "b", {"--ckpt-json", Sample("ckpt/msprobe/tp2pp2.json")});
  ASSERT_EQ(ours.size(), 1u);
  ASSERT_EQ(theirs.size(), 1u);
  vis::CkptSimilarity a = ReadCkpt(ours[0]), b = ReadCkpt(theirs[0]);
  ASSERT_EQ(a.module_size(), b.module_size());
  for (int i = 0; i < a.module_size(); ++i) {
    EXPECT_EQ(a.module(i).path(), b.module(i).path());
    EXPECT_EQ(a.module(i).node_size(), b.module(i).node_size());
    EXPECT_NEAR(a.module(i).worst_cos(), b.module(i).worst_cos(), 1e-6);
  }
  EXPECT_NE(b.json().find("tp2pp2.json"), std::string::npos);
  EXPECT_TRUE(b.checkpoint_a().empty());
}

TEST(CkptGraph, EqualCheckpointsDifferNowhere) {
  // tp1pp1_b holds tp2pp2_b's weights unsplit.
  TempDir out;
  auto files = Graph(BuildJson(), out / "o", {"--ckpt", Sample("ckpt/tp2pp2_b"), Sample("ckpt/tp1pp1_b")});
  ASSERT_EQ(files.size(), 1u);
  vis::FileMeta meta;
  vis::CkptSimilarity s = ReadCkpt(files[0], &meta);
  EXPECT_GT(s.module_size(), 0);
  EXPECT_EQ(meta.ckpt_differing_modules(), 0u);
  RunResult info = RunTool({"info", files[0]});
  EXPECT_NE(info.out.find("none: every module's parameters are equal"), std::string::npos) << info.out;
}

TEST(CkptGraph, CompareFilesCarryItOnTheNpuSide) {
  TempDir out;
  auto files = Graph(Sample("layer_mapping/compare.json"), out / "o",
                     {"-lm", Sample("layer_mapping/layer_mapping.yaml"), "--ckpt-json",
                      Sample("ckpt/msprobe/tp2pp2.json")});
  ASSERT_EQ(files.size(), 1u);
  vis::FileMeta meta;
  vis::CkptSimilarity s = ReadCkpt(files[0], &meta);
  EXPECT_EQ(meta.kind(), vis::GRAPH_COMPARE);
  EXPECT_EQ(s.module_size(), 15);
  EXPECT_EQ(meta.ckpt_differing_modules(), 15u);
}

TEST(CkptGraph, BadInputIsOneMessageAndNoFile) {
  TempDir out;
  std::string bad = out / "bad.json";
  std::ofstream(bad) << "{\"decoder.x.weight\": {\"l2\": \"big\", \"cos\": 1}}";
  RunResult r = RunTool({"graph", "-i", BuildJson(), "-o", out / "o1", "--ckpt-json", bad});
  ExpectOneError(r, {bad, "line 1", "expected a number or null"});
  EXPECT_TRUE(Files(out / "o1").empty());
  std::string not_json = out / "not.json";
  std::ofstream(not_json) << "[1, 2]";
  r = RunTool({"graph", "-i", BuildJson(), "-o", out / "o2", "--ckpt-json", not_json});
  ExpectOneError(r, {not_json, "ckpt_compare"});
  r = RunTool({"graph", "-i", BuildJson(), "-o", out / "o3", "--ckpt", Sample("ckpt/bad/truncated"),
               Sample("ckpt/tp2pp2_b")});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(Lines(r.err).size(), 1u) << r.err;
  EXPECT_TRUE(Files(out / "o3").empty());
  r = RunTool({"graph", "-i", BuildJson(), "-o", out / "o4", "--ckpt", Sample("ckpt/tp2pp2_a")});
  ExpectOneError(r, {"--ckpt needs two checkpoint folders"});
  r = RunTool({"graph", "-i", BuildJson(), "-o", out / "o5", "--ckpt", Sample("ckpt/tp2pp2_a"),
               Sample("ckpt/tp2pp2_b"), "--ckpt-json", bad});
  ExpectOneError(r, {"cannot be used together"});
}

}  // namespace
}  // namespace graph_ascend::testing
