// Cross-framework compare with a layer mapping (reference §6.2, §6.3.3): a
// MindSpore NPU dump (Cell.* modules, Mint/Functional APIs, a partial
// construct.json whose Embedding parent is never a key) against a PyTorch
// Bench dump of the same Megatron-style network (Module.* names, Tensor/NPU
// APIs), shaped like msprobe's own MindSpore/PyTorch test pair.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"

namespace graph_ascend {
namespace {

using graph_ascend::testing::DumpJson;
using graph_ascend::testing::Export;
using graph_ascend::testing::Files;
using graph_ascend::testing::Graph;
using graph_ascend::testing::Index;
using graph_ascend::testing::InfoLine;
using graph_ascend::testing::Json;
using graph_ascend::testing::Lines;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::Tensor;
using graph_ascend::testing::WriteDumpDir;
using graph_ascend::testing::WriteFile;

std::string MsTensor(const std::string& max) {
  return R"({"type": "mindspore.Tensor", "dtype": "Float32", "shape": [2, 3], "Max": )" + max +
         R"(, "Min": -1.0, "Mean": 0.5, "Norm": 2.0})";
}

std::string Entry(const std::string& name, const std::string& in, const std::string& out) {
  return "\"" + name + R"(": {"input_args": [)" + in + R"(], "input_kwargs": {}, "output": [)" + out + "]}";
}

const char* const kAttention = "Cell.net.model.layers.0.attention.ParallelAttention.forward.0";
const char* const kLayer = "Cell.net.model.layers.0.ParallelTransformerLayer.forward.0";
const char* const kVocab = "Cell.net.model.embedding.word_embeddings.VocabParallelEmbedding.forward.0";
const char* const kBenchAttention = "Module.module.model.layers.0.self_attention.ParallelAttention.forward.0";
const char* const kBenchFlash = "Module.module.model.layers.0.self_attention.core_attention_flash.FlashAttention.forward.0";
const char* const kBenchLayer = "Module.module.model.layers.0.ParallelTransformerLayer.forward.0";
const char* const kBenchVocab = "Module.module.model.embedding.word_embeddings.VocabParallelEmbedding.forward.0";

class CrossFrameworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string t = MsTensor("1.0");
    std::string npu = DumpJson(Entry("Tensor.__add__.0.forward", t, t) + "," +
                                   Entry("Mint.logical_or.0.forward", t, MsTensor("2.0")) + "," + Entry(kVocab, t, t) +
                                   "," + Entry("Functional.flash_attention_score.0.forward", t, t) + "," +
                                   Entry(kAttention, t, t) + "," + Entry(kLayer, t, t),
                               "statistics", "mindspore");
    // The Embedding parent of the vocabulary embedding is never a key.
    std::string npu_construct = std::string(R"({"Tensor.__add__.0.forward": "", "Mint.logical_or.0.forward": ")") +
                                kVocab + R"(", ")" + kVocab + R"(": "Cell.net.model.embedding.Embedding.forward.0", )" +
                                R"("Functional.flash_attention_score.0.forward": ")" + kAttention + R"(", ")" +
                                kAttention + R"(": ")" + kLayer + R"(", ")" + kLayer + R"(": null})";
    const std::string b = Tensor("[2, 3]", "1.0", "-1.0", "0.5", "2.0");
    const std::string b_or = Tensor("[2, 3]", "2.5", "-1.0", "0.5", "2.0");
    std::string bench = DumpJson(Entry("Tensor.__add__.0.forward", b, b) + "," + Entry("Tensor.__or__.0.forward", b, b_or) +
                                 "," + Entry(kBenchVocab, b, b) + "," + Entry("NPU.npu_fusion_attention.0.forward", b, b) +
                                 "," + Entry(kBenchFlash, b, b) + "," + Entry(kBenchAttention, b, b) + "," +
                                 Entry(kBenchLayer, b, b));
    std::string bench_construct =
        std::string(R"({"Tensor.__add__.0.forward": "", "Tensor.__or__.0.forward": ")") + kBenchVocab + R"(", ")" +
        kBenchVocab + R"(": "Module.module.model.embedding.Embedding.forward.0", )" +
        R"("Module.module.model.embedding.Embedding.forward.0": null, "NPU.npu_fusion_attention.0.forward": ")" +
        kBenchFlash + R"(", ")" + kBenchFlash + R"(": ")" + kBenchAttention + R"(", ")" + kBenchAttention + R"(": ")" +
        kBenchLayer + R"(", ")" + kBenchLayer + R"(": null})";
    WriteDumpDir(dir_ / "npu", npu, npu_construct);
    WriteDumpDir(dir_ / "bench", bench, bench_construct);
    WriteFile(dir_ / "compare.json", R"({"npu_path": "npu", "bench_path": "bench"})");
    // Keys are the NPU parent's class; dotted targets span several levels.
    WriteFile(dir_ / "mapping.yaml",
              "Cell:\n  net: module\n"
              "VocabParallelEmbedding:\n  logical_or: __or__\n"
              "ParallelTransformerLayer:\n  attention: self_attention\n"
              "ParallelAttention:\n  flash_attention_score: core_attention_flash.npu_fusion_attention(q, k, v)\n");
  }

  // The Bench node each NPU node is matched to ("" when unmatched).
  std::string MatchOf(const Json& doc, const std::string& npu) {
    const Json& link = doc["NPU"]["node"].at(npu)["matched_node_link"];
    return link.empty() ? "" : link.back().get<std::string>();
  }

  TempDir dir_;
};

TEST_F(CrossFrameworkTest, WithoutMappingIsRefused) {
  RunResult r = RunTool({"graph", "-i", dir_ / "compare.json", "-o", dir_ / "out"});
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(Lines(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("mindspore"), std::string::npos) << r.err;
  EXPECT_TRUE(Files(dir_ / "out").empty());
}

TEST_F(CrossFrameworkTest, LayerMappingPairsMindSporeWithPyTorch) {
  std::vector<std::string> files = Graph(dir_ / "compare.json", dir_ / "out", {"-lm", dir_ / "mapping.yaml"});
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  EXPECT_EQ(MatchOf(doc, "Tensor.__add__.0.forward"), "Tensor.__add__.0.forward");
  EXPECT_EQ(MatchOf(doc, "Mint.logical_or.0.forward"), "Tensor.__or__.0.forward");
  EXPECT_EQ(MatchOf(doc, kVocab), kBenchVocab);
  EXPECT_EQ(MatchOf(doc, kLayer), kBenchLayer);
  EXPECT_EQ(MatchOf(doc, kAttention), kBenchAttention) << "attention -> self_attention under ParallelTransformerLayer";
  EXPECT_EQ(MatchOf(doc, "Functional.flash_attention_score.0.forward"), "NPU.npu_fusion_attention.0.forward")
      << "a two-level target, cut at '('";
  // The orphan Embedding parent hangs under the root, so its subtree was
  // compared; it has no counterpart of the same name.
  EXPECT_EQ(doc["NPU"]["node"].at("Cell.net.model.embedding.Embedding.forward.0")["upnode"], "DefaultModel");
  EXPECT_EQ(MatchOf(doc, "Cell.net.model.embedding.Embedding.forward.0"), "");
  // Statistics are compared across frameworks: |2.0 - 2.5| / 2.5.
  EXPECT_DOUBLE_EQ(Index(doc["NPU"]["node"].at("Mint.logical_or.0.forward")), 0.2);
  EXPECT_DOUBLE_EQ(Index(doc["NPU"]["node"].at("Tensor.__add__.0.forward")), 0.0);
  RunResult info = RunTool({"info", files[0]});
  EXPECT_NE(info.out.find("npu dump: " + std::string(dir_ / "npu")), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("(mindspore)"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("(pytorch)"), std::string::npos) << info.out;
}

TEST_F(CrossFrameworkTest, BareMappingMatchesOnlyWhatTheScopesAlreadyShare) {
  std::vector<std::string> files = Graph(dir_ / "compare.json", dir_ / "out", {"-lm"});
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  EXPECT_EQ(MatchOf(doc, "Tensor.__add__.0.forward"), "Tensor.__add__.0.forward");
  EXPECT_EQ(MatchOf(doc, "Mint.logical_or.0.forward"), "") << "Cell.net and Module.module scopes differ";
  EXPECT_EQ(MatchOf(doc, kAttention), "");
}

// Cross-framework float noise (MindSpore against PyTorch): every statistic
// differs by ~1e-7, so every index is slightly above 0. The first
// divergence is the operator whose error stands out of that noise, not the
// first add (the old rule named it).
TEST(CrossFrameworkDivergence, FloatNoiseIsNotADivergence) {
  TempDir dir;
  auto ms = [](const std::string& max) { return MsTensor(max); };
  auto pt = [](const std::string& max) { return Tensor("[2, 3]", max, "-1.0", "0.5", "2.0"); };
  std::string npu = DumpJson(Entry("Tensor.__add__.0.forward", ms("1.0"), ms("1.0000001")) + "," +
                                 Entry("Tensor.__mul__.0.forward", ms("1.0000001"), ms("2.0000003")) + "," +
                                 Entry("Functional.linear.0.forward", ms("2.0000003"), ms("3.5")) + "," +
                                 Entry("Functional.relu.0.forward", ms("3.5"), ms("3.5")),
                             "statistics", "mindspore");
  std::string bench = DumpJson(Entry("Tensor.__add__.0.forward", pt("1.0"), pt("1.0")) + "," +
                               Entry("Tensor.__mul__.0.forward", pt("1.0"), pt("2.0")) + "," +
                               Entry("Functional.linear.0.forward", pt("2.0"), pt("3.0")) + "," +
                               Entry("Functional.relu.0.forward", pt("3.0"), pt("3.0")));
  const char* construct = R"({"Tensor.__add__.0.forward": "", "Tensor.__mul__.0.forward": "",
      "Functional.linear.0.forward": "", "Functional.relu.0.forward": ""})";
  WriteDumpDir(dir / "npu", npu, construct);
  WriteDumpDir(dir / "bench", bench, construct);
  WriteFile(dir / "compare.json", R"({"npu_path": "npu", "bench_path": "bench"})");
  std::vector<std::string> files = Graph(dir / "compare.json", dir / "out", {"-lm"});
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  EXPECT_GT(Index(doc["NPU"]["node"].at("Tensor.__add__.0.forward")), 0) << "the noise shows in the index";
  RunResult info = RunTool({"info", files[0]});
  EXPECT_EQ(InfoLine(info.out, "first divergence"),
            "first divergence, in execution order: Functional.linear.0.forward (api, index 0.166667)")
      << info.out;
}

}  // namespace
}  // namespace graph_ascend
