// End to end: bin/graph-ascend on the committed real msprobe samples
// (samples/README.md lists each case and its culprit) and on damaged copies
// of them. Expected node counts, match counts, precision indices and
// overflow levels are those msprobe's own `graph` (8.1.2) gives for the same
// samples, except where graph-ascend deliberately differs (L1 dumps).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"

namespace graph_ascend {
namespace {

namespace fs = std::filesystem;
using graph_ascend::testing::ColorOf;
using graph_ascend::testing::CountMatched;
using graph_ascend::testing::ExpectOneError;
using graph_ascend::testing::Export;
using graph_ascend::testing::Files;
using graph_ascend::testing::FirstDivergence;
using graph_ascend::testing::Graph;
using graph_ascend::testing::HasIndex;
using graph_ascend::testing::Index;
using graph_ascend::testing::InfoLine;
using graph_ascend::testing::Json;
using graph_ascend::testing::Lines;
using graph_ascend::testing::PreOrder;
using graph_ascend::testing::ReadFile;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::Sample;
using graph_ascend::testing::SourceDir;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

// ---------------------------------------------------------------- builds

struct BuildCase {
  std::string name;
  int msprobe_nodes;   // what msprobe 8.1.2 builds
  int gradient_nodes;  // msprobe 26's P.parameters_grad.N entries with a P.backward.N, which 8.1.2 drops
};
void PrintTo(const BuildCase& c, std::ostream* os) { *os << c.name; }
class BuildSampleTest : public ::testing::TestWithParam<BuildCase> {};

TEST_P(BuildSampleTest, SingleBuild) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample(GetParam().name + "/build.json"), out / "o");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::regex_match(fs::path(files[0]).filename().string(), std::regex(R"(build_\d{14}\.vis)"))) << files[0];
  Json doc = Export(files[0]);
  EXPECT_FALSE(doc.contains("NPU"));
  EXPECT_EQ(doc["root"], "DefaultModel");
  const int nodes = GetParam().msprobe_nodes + GetParam().gradient_nodes;
  EXPECT_EQ(static_cast<int>(doc["node"].size()), nodes);
  // docs/COMPATIBILITY.md C-pgrad: P.parameters_grad.N hangs under P.backward.N.
  int gradients = 0;
  std::regex grad(R"((.*)\.parameters_grad\.(\d+))");
  for (auto& [name, node] : doc["node"].items()) {
    std::smatch m;
    if (!std::regex_match(name, m, grad)) continue;
    ++gradients;
    EXPECT_EQ(node["upnode"], m[1].str() + ".backward." + m[2].str()) << name;
    EXPECT_EQ(doc["node"].at(node["upnode"].get<std::string>())["subnodes"].back(), name) << "the last child";
  }
  EXPECT_EQ(gradients, GetParam().gradient_nodes);
  EXPECT_EQ(PreOrder(doc).size(), doc["node"].size()) << "every node is reachable from the root";
  EXPECT_EQ(doc["MicroSteps"], 1);
  EXPECT_EQ(doc["OverflowCheck"], false);
  for (auto& [name, node] : doc["node"].items()) {
    EXPECT_TRUE(node["matched_node_link"].empty()) << name;
    EXPECT_FALSE(HasIndex(node)) << name;
  }
  RunResult info = RunTool({"info", files[0]});
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(InfoLine(info.out, "kind:").substr(0, 24), "kind: build, mode: build");
  EXPECT_EQ(InfoLine(info.out, "NPU:"), "NPU: " + std::to_string(nodes) + " nodes");
}

// Node counts of msprobe 8.1.2's build of the same samples, plus the
// gradient nodes it drops; l1_api (level L1, empty construct.json) is built
// from dump.json by graph-ascend where msprobe builds only the root.
INSTANTIATE_TEST_SUITE_P(Samples, BuildSampleTest,
                         ::testing::Values(BuildCase{"cnn_statistics", 412, 24}, BuildCase{"cnn_md5", 412, 24},
                                           BuildCase{"gpt_statistics", 667, 30}, BuildCase{"gpt_tensor", 282, 21},
                                           BuildCase{"dist_gloo", 48, 3}, BuildCase{"overflow_nan", 123, 8},
                                           BuildCase{"structure", 67, 0}, BuildCase{"l1_api", 34, 0}),
                         [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------- compares

struct CompareCase {
  std::string name;
  std::string task;
  int nodes;  // msprobe 8.1.2's count + the gradient nodes (BuildCase)
  int matched;
  std::string culprit;  // first divergence (samples/README.md)
  double culprit_index;
  std::string culprit_color;
};
void PrintTo(const CompareCase& c, std::ostream* os) { *os << c.name; }
class CompareSampleTest : public ::testing::TestWithParam<CompareCase> {};

TEST_P(CompareSampleTest, SingleCompare) {
  const CompareCase& c = GetParam();
  TempDir out;
  std::vector<std::string> files = Graph(Sample(c.name + "/compare.json"), out / "o");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::regex_match(fs::path(files[0]).filename().string(), std::regex(R"(compare_\d{14}\.vis)")));
  Json doc = Export(files[0]);
  std::vector<std::string> keys;
  for (auto& [k, v] : doc.items()) keys.push_back(k);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"NPU", "Bench", "ToolTip", "Colors", "MicroSteps", "task", "OverflowCheck"}));
  EXPECT_EQ(doc["task"], c.task);
  const Json& npu = doc["NPU"];
  const Json& bench = doc["Bench"];
  EXPECT_EQ(static_cast<int>(npu["node"].size()), c.nodes);
  EXPECT_EQ(static_cast<int>(bench["node"].size()), c.nodes);
  EXPECT_EQ(CountMatched(npu), c.matched);
  EXPECT_EQ(CountMatched(bench), c.matched);
  EXPECT_EQ(npu["node"].at("DefaultModel")["matched_node_link"], Json::array({"DefaultModel"}));
  EXPECT_FALSE(HasIndex(npu["node"].at("DefaultModel"))) << "the root never gets an index";

  // Links: peer ancestors + peer id, the same on both sides (§6.3.1).
  for (auto& [name, node] : npu["node"].items()) {
    const Json& link = node["matched_node_link"];
    if (link.empty()) continue;
    EXPECT_EQ(link.back(), name) << "default matching pairs equal ids";
    EXPECT_EQ(bench["node"].at(name)["matched_node_link"], link) << name;
    EXPECT_EQ(link.size() >= 2 ? link[link.size() - 2].get<std::string>() : "None", node["upnode"].get<std::string>())
        << name;
  }
  for (auto& [name, node] : bench["node"].items()) {
    EXPECT_FALSE(HasIndex(node)) << "Bench nodes never carry a precision index: " << name;
  }

  // §6.9: an API collection takes the worst index of its children (a child
  // without one counts as the best value), matched or not.
  bool md5 = c.task == "md5";
  int collections = 0;
  for (const Json& top : npu["node"].at("DefaultModel")["subnodes"]) {
    const Json& coll = npu["node"].at(top.get<std::string>());
    if (coll["node_type"] != 9) continue;
    ++collections;
    double expected = md5 ? 1 : 0;
    for (const Json& child : coll["subnodes"]) {
      const Json& n = npu["node"].at(child.get<std::string>());
      double p = HasIndex(n) ? Index(n) : (md5 ? 1 : 0);
      expected = md5 ? std::min(expected, p) : std::max(expected, p);
    }
    EXPECT_EQ(Index(coll), expected) << top;
  }
  EXPECT_GT(collections, 0) << "every sample has runs of top-level APIs";

  if (c.culprit.empty()) return;
  EXPECT_EQ(FirstDivergence(npu), c.culprit);
  const Json& culprit = npu["node"].at(c.culprit);
  ASSERT_TRUE(HasIndex(culprit));
  EXPECT_NEAR(Index(culprit), c.culprit_index, 1e-12);
  EXPECT_EQ(ColorOf(doc["Colors"], Index(culprit)), c.culprit_color);
  // Every index lies in [0, 1] and has a colour.
  for (auto& [name, node] : npu["node"].items()) {
    if (!HasIndex(node)) continue;
    EXPECT_GE(Index(node), 0) << name;
    EXPECT_LE(Index(node), 1) << name;
    EXPECT_NE(ColorOf(doc["Colors"], Index(node)), "") << name;
  }
}

// Values from msprobe 8.1.2 on the same samples (l1_api: graph-ascend only).
// The culprit's bucket follows from its index: a statistics index is the
// relative error of the node's outputs, so an eps change at one BatchNorm
// (25%) or one bf16 matmul (0.25%) is not in the worst bucket; the NaN
// overflow, the tensor case and the all_reduce are.
INSTANTIATE_TEST_SUITE_P(
    Samples, CompareSampleTest,
    ::testing::Values(
        CompareCase{"cnn_statistics", "summary", 412 + 24, 412 + 24, "Functional.batch_norm.6.forward", 0.25,
                    "#FFEDBE"},
        CompareCase{"gpt_statistics", "summary", 667 + 30, 667 + 30, "Functional.linear.11.forward",
                    0.0024883654245420636, "#FFFCF3"},
        CompareCase{"gpt_tensor", "all", 282 + 21, 282 + 21, "Tensor.__add__.10.forward", 1.0, "#FF704D"},
        CompareCase{"overflow_nan", "summary", 123 + 8, 122 + 8, "Torch.exp.1.forward", 1.0, "#FF704D"},
        CompareCase{"dist_gloo", "summary", 48 + 3, 48 + 3, "Distributed.all_reduce.0.forward", 1.0, "#FF704D"},
        CompareCase{"l1_api", "summary", 34, 34, "Functional.batch_norm.1.forward", 0.33333333333333326, "#FFEDBE"},
        CompareCase{"cnn_md5", "md5", 412 + 24, 412 + 24, "", 0, ""},
        CompareCase{"structure", "structure", 67, 67, "", 0, ""}),
    [](const auto& info) { return info.param.name; });

TEST(CompareTest, StatisticsBucketsAndInfo) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample("cnn_statistics/compare.json"), out / "o");
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  // Colour buckets of the NPU nodes, root excluded. Without the gradient
  // nodes msprobe 8.1.2 drops, its indices give exactly these counts.
  std::map<std::string, int> all, msprobe;
  for (auto& [name, node] : doc["NPU"]["node"].items()) {
    if (name == "DefaultModel") continue;
    std::string color;
    if (HasIndex(node)) {
      color = ColorOf(doc["Colors"], Index(node));
    } else if (node["matched_node_link"].empty()) {
      color = "#C7C7C7";
    } else {
      continue;  // matched, nothing to compare
    }
    all[color]++;
    if (name.find(".parameters_grad.") == std::string::npos) msprobe[color]++;
  }
  EXPECT_EQ(msprobe, (std::map<std::string, int>{
                         {"#FFFCF3", 137}, {"#FFEDBE", 15}, {"#FFDC7F", 34}, {"#FFC62E", 25}, {"#FF704D", 118}}));
  // The statistics legend and tooltips.
  std::vector<std::string> colors;
  for (auto& [color, entry] : doc["Colors"].items()) colors.push_back(color);
  EXPECT_EQ(colors, (std::vector<std::string>{"#FFFCF3", "#FFEDBE", "#FFDC7F", "#FFC62E", "#FF704D", "#C7C7C7"}));
  EXPECT_EQ(doc["Colors"]["#FFEDBE"]["value"], Json::array({0.2, 0.4}));
  EXPECT_EQ(doc["Colors"]["#C7C7C7"]["value"], Json::array());
  EXPECT_EQ(doc["Colors"]["#C7C7C7"]["description"], "比对过程中节点未匹配上");
  Json tooltip = Json::parse(doc["ToolTip"].get<std::string>());
  std::vector<std::string> tips;
  for (auto& [k, v] : tooltip.items()) tips.push_back(k);
  EXPECT_EQ(tips, (std::vector<std::string>{"Max diff", "Min diff", "Mean diff", "L2norm diff"}));

  // `graph-ascend info` says the same.
  RunResult info = RunTool({"info", files[0]});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(InfoLine(info.out, "kind:"), "kind: compare, mode: statistics, task: summary");
  EXPECT_EQ(InfoLine(info.out, "NPU:"), "NPU: 436 nodes");
  EXPECT_NE(info.out.find("  matched 436, unmatched 0\n"), std::string::npos) << info.out;
  auto bucket_line = [&](const char* color, const char* name) {
    char line[64];
    snprintf(line, sizeof(line), "  %s %-12s %d", color, name, all[color]);
    return std::string(line);
  };
  EXPECT_EQ(InfoLine(info.out, "  #FFFCF3"), bucket_line("#FFFCF3", "0-0.2"));
  EXPECT_EQ(InfoLine(info.out, "  #FFEDBE"), bucket_line("#FFEDBE", "0.2-0.4"));
  EXPECT_EQ(InfoLine(info.out, "  #FFDC7F"), bucket_line("#FFDC7F", "0.4-0.6"));
  EXPECT_EQ(InfoLine(info.out, "  #FFC62E"), bucket_line("#FFC62E", "0.6-0.8"));
  EXPECT_EQ(InfoLine(info.out, "  #FF704D"), bucket_line("#FF704D", "0.8-1"));
  EXPECT_EQ(InfoLine(info.out, "  #C7C7C7"), "  #C7C7C7 unmatched    0");
  // Ten worst nodes, each in the worst bucket here, listed in execution order.
  std::vector<std::string> worst;
  bool in_worst = false;
  for (const std::string& line : Lines(info.out)) {
    if (line.rfind("worst nodes", 0) == 0) {
      in_worst = true;
      continue;
    }
    if (in_worst) worst.push_back(line.substr(line.rfind(' ') + 1));
  }
  ASSERT_EQ(worst.size(), 10u) << info.out;
  std::vector<std::string> order = PreOrder(doc["NPU"]);
  size_t last = 0;
  for (const std::string& n : worst) {
    size_t at = std::find(order.begin(), order.end(), n) - order.begin();
    EXPECT_LT(at, order.size()) << n;
    EXPECT_GE(at, last) << n << " out of execution order";
    last = at;
    EXPECT_EQ(Index(doc["NPU"]["node"].at(n)), 1.0) << n;
  }
}

// §6.6 on real md5 dumps: a node passes exactly when every compared item
// has the same md5 on both sides.
TEST(CompareTest, Md5ResultsFollowTheMd5Values) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample("cnn_md5/compare.json"), out / "o");
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  const Json& npu = doc["NPU"]["node"];
  const Json& bench = doc["Bench"]["node"];
  int pass = 0, different = 0;
  for (auto& [name, node] : npu.items()) {
    if (!node["data"].contains("Result")) continue;
    bool all_equal = true;
    int compared = 0;
    for (const char* io : {"input_data", "output_data"}) {
      for (auto& [key, item] : node[io].items()) {
        if (!item.contains("Result")) continue;
        ++compared;
        ASSERT_TRUE(item.contains("md5")) << name << " " << key << ": md5 mode keeps md5";
        bool same = item["md5"] == bench.at(name).at(io).at(key).at("md5");
        EXPECT_EQ(item["Result"], same ? "pass" : "Different") << name << " " << key;
        all_equal &= same;
      }
    }
    EXPECT_GT(compared, 0) << name;
    EXPECT_EQ(node["data"]["Result"], all_equal ? "pass" : "Different") << name;
    EXPECT_EQ(Index(node), all_equal ? 1.0 : 0.0) << name;
    (all_equal ? pass : different)++;
  }
  // md5 values of tensors changed in place differ from run to run on CPU
  // (samples/README.md), so only the existence of both outcomes is fixed.
  EXPECT_GT(pass, 0);
  EXPECT_GT(different, 0);
  EXPECT_EQ(npu.at("Functional.batch_norm.6.forward")["data"]["Result"], "Different");
  std::vector<std::string> colors;
  for (auto& [color, entry] : doc["Colors"].items()) colors.push_back(color);
  EXPECT_EQ(colors, (std::vector<std::string>{"#FFFCF3", "#FF704D", "#C7C7C7"}));
  EXPECT_EQ(doc["Colors"]["#FFFCF3"]["value"], Json::array({1, 1}));
  EXPECT_EQ(Json::parse(doc["ToolTip"].get<std::string>()).begin().key(), "md5");
}

TEST(CompareTest, TensorMetricsFromTheDumpedFiles) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample("gpt_tensor/compare.json"), out / "o");
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  const Json& npu = doc["NPU"]["node"];
  // msprobe 8.1.2: the culprit's module chain above it.
  EXPECT_EQ(Index(npu.at("Module.model.LlamaModel.forward.0")), 0.9375);
  EXPECT_EQ(Index(npu.at("Module.model.layers.1.LlamaDecoderLayer.forward.0")), 0.921875);
  const Json& out0 = npu.at("Tensor.__add__.10.forward")["output_data"].at("Tensor.__add__.10.forward.output.0");
  EXPECT_EQ(out0["data_name"], "Tensor.__add__.10.forward.output.0.pt");
  for (const char* m : {"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                        "Five Thousandths Err Ratio", "Requires_grad Consistent"}) {
    EXPECT_TRUE(out0.contains(m)) << m;
  }
  EXPECT_EQ(out0["One Thousandth Err Ratio"], "0.0");
  // Every API before the culprit agrees exactly on every compared tensor.
  std::vector<std::string> order = PreOrder(doc["NPU"]);
  for (const std::string& n : order) {
    if (n == "Tensor.__add__.10.forward") break;
    if (npu[n]["node_type"] != 1) continue;
    for (const char* io : {"input_data", "output_data"}) {
      for (auto& [key, item] : npu[n][io].items()) {
        if (item.contains("Cosine") && item["Cosine"] != "unsupported") {
          EXPECT_EQ(item["One Thousandth Err Ratio"], "1.0") << n << " " << key;
        }
      }
    }
  }
  Json tooltip = Json::parse(doc["ToolTip"].get<std::string>());
  std::vector<std::string> tips;
  for (auto& [k, v] : tooltip.items()) tips.push_back(k);
  EXPECT_EQ(tips, (std::vector<std::string>{"One Thousandth Err Ratio", "Five Thousandths Err Ratio", "Cosine",
                                            "MaxAbsErr", "MaxRelativeErr"}));
  EXPECT_EQ(doc["Colors"]["#FF704D"]["value"], Json::array({0.2, 1}));
}

TEST(CompareTest, StructureHasNoIndices) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample("structure/compare.json"), out / "o");
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  for (auto& [name, node] : doc["NPU"]["node"].items()) {
    if (node["node_type"] == 9) {
      EXPECT_EQ(Index(node), 0) << "API collections get 0 (§6.8)";
    } else {
      EXPECT_FALSE(HasIndex(node)) << name;
    }
    EXPECT_TRUE(node["input_data"].empty() && node["output_data"].empty()) << name;
  }
  EXPECT_EQ(doc["Colors"].size(), 1u);
  EXPECT_TRUE(doc["Colors"].contains("#C7C7C7"));
  RunResult info = RunTool({"info", files[0]});
  EXPECT_EQ(InfoLine(info.out, "kind:"), "kind: compare, mode: structure, task: structure");
}

// §7 on the NaN sample; levels as msprobe 8.1.2 -oc gives them.
TEST(CompareTest, OverflowLevelsOnTheNanCase) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample("overflow_nan/compare.json"), out / "o", {"-oc"});
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  EXPECT_EQ(doc["OverflowCheck"], true);
  auto levels = [](const Json& graph) {
    std::map<std::string, std::set<std::string>> by_level;
    for (auto& [name, node] : graph["node"].items()) {
      if (node["data"].contains("overflow_level")) by_level[node["data"]["overflow_level"]].insert(name);
    }
    return by_level;
  };
  auto npu = levels(doc["NPU"]);
  EXPECT_EQ(npu["critical"],
            (std::set<std::string>{"Module.blocks.1.AttentionBlock.forward.0",
                                   "Module.blocks.1.softmax.NaiveSoftmax.forward.0", "Torch.exp.1.forward"}));
  EXPECT_EQ(npu["medium"], std::set<std::string>{"Module.embed.Linear.backward.0"});
  EXPECT_EQ(npu["high"].size(), 61u);
  EXPECT_TRUE(npu["high"].count("Tensor.__truediv__.1.forward")) << "inf / inf: anomalous in and out";
  auto bench = levels(doc["Bench"]);
  EXPECT_EQ(bench["high"], (std::set<std::string>{"Torch.exp.0.forward", "Torch.exp.1.forward"}))
      << "exp's output norm jumps over 100 times its input's (numerical mutation)";
  EXPECT_EQ(bench.size(), 1u);
  // Data order: precision_index first, then overflow_level.
  std::vector<std::string> data_keys;
  for (auto& [k, v] : doc["NPU"]["node"].at("Torch.exp.1.forward")["data"].items()) data_keys.push_back(k);
  EXPECT_EQ(data_keys, (std::vector<std::string>{"precision_index", "overflow_level"}));
  // The culprit's NaN output is reported as such in its item.
  const Json& item =
      doc["NPU"]["node"].at("Tensor.__truediv__.1.forward")["output_data"].at("Tensor.__truediv__.1.forward.output.0");
  EXPECT_EQ(item["Max"], "nan");
  EXPECT_EQ(item["Max diff"], "Nan");
  // The one structural difference of the sample stays unmatched on both sides.
  EXPECT_TRUE(doc["NPU"]["node"].at("Tensor.to.2.backward")["matched_node_link"].empty());
  EXPECT_TRUE(doc["Bench"]["node"].at("Tensor.to.2.backward")["matched_node_link"].empty());

  RunResult info = RunTool({"info", files[0]});
  EXPECT_NE(info.out.find("  overflow: critical 3, high 61, medium 1\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("  matched 130, unmatched 1\n"), std::string::npos) << info.out;

  // Without -oc: no levels.
  std::vector<std::string> plain = Graph(Sample("overflow_nan/compare.json"), out / "plain");
  ASSERT_EQ(plain.size(), 1u);
  Json p = Export(plain[0]);
  EXPECT_EQ(p["OverflowCheck"], false);
  EXPECT_TRUE(levels(p["NPU"]).empty());
  EXPECT_EQ(Index(p["NPU"]["node"].at("Torch.exp.1.forward")), 1.0) << "NaN/inf statistics are the worst index anyway";
}

TEST(CompareTest, BuildWithOverflowCheck) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample("overflow_nan/build.json"), out / "o", {"-oc"});
  ASSERT_EQ(files.size(), 1u);
  Json doc = Export(files[0]);
  EXPECT_EQ(doc["OverflowCheck"], true);
  EXPECT_EQ(doc["node"].at("Torch.exp.1.forward")["data"]["overflow_level"], "critical");
}

// ---------------------------------------------------------------- layouts

std::string Timestamp(const std::string& path) {
  std::smatch m;
  std::string name = fs::path(path).filename().string();
  return std::regex_search(name, m, std::regex(R"(_(\d{14})\.vis$)")) ? m[1].str() : "";
}

std::vector<std::string> Names(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::string n = fs::path(p).filename().string();
    out.push_back(n.substr(0, n.size() - std::string("_00000000000000.vis").size()));
  }
  return out;
}

TEST(BatchTest, StepsOfOneRank) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample("cnn_statistics/batch.json"), out / "o");
  EXPECT_EQ(Names(files), (std::vector<std::string>{"compare_step0_rank0", "compare_step1_rank0"}));
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(Timestamp(files[0]), Timestamp(files[1])) << "one timestamp per run";
  EXPECT_EQ(Export(files[1])["NPU"]["node"].size(), 474u + 24) << "step 1 also dumps the optimizer";
  RunResult info = RunTool({"info", files[1]});
  EXPECT_EQ(InfoLine(info.out, "step:"), "step: step1, rank: rank0");
}

TEST(BatchTest, StepsAndRanks) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample("dist_gloo/batch.json"), out / "o");
  EXPECT_EQ(Names(files), (std::vector<std::string>{"compare_step0_rank0", "compare_step0_rank1", "compare_step1_rank0",
                                                    "compare_step1_rank1"}));
  ASSERT_EQ(files.size(), 4u);
  std::set<std::string> stamps;
  for (const std::string& f : files) stamps.insert(Timestamp(f));
  EXPECT_EQ(stamps.size(), 1u);
  // Rank 1 holds the culprit (its LayerNorm eps); msprobe 8.1.2 gives 0.75.
  Json rank1 = Export(files[1]);
  EXPECT_EQ(FirstDivergence(rank1["NPU"]), "Functional.layer_norm.0.forward");
  EXPECT_EQ(Index(rank1["NPU"]["node"].at("Functional.layer_norm.0.forward")), 0.75);
  Json rank0 = Export(files[0]);
  EXPECT_EQ(Index(rank0["NPU"]["node"].at("Functional.layer_norm.0.forward")), 0);
  EXPECT_EQ(rank0["NPU"]["node"].at("Module.norm.LayerNorm.forward.0")["data"]["precision_index"], 0);
}

TEST(BatchTest, RanksOfOneStep) {
  TempDir dir;
  WriteFile(dir / "ranks.json", R"({"npu_path": ")" + Sample("dist_gloo/npu/step0") + R"(", "bench_path": ")" +
                                    Sample("dist_gloo/bench/step0") + "\"}");
  std::vector<std::string> files = Graph(dir / "ranks.json", dir / "o");
  EXPECT_EQ(Names(files), (std::vector<std::string>{"compare_rank0", "compare_rank1"}));
}

TEST(BatchTest, BatchBuild) {
  TempDir dir;
  WriteFile(dir / "build.json", R"({"npu_path": ")" + Sample("dist_gloo/npu") + "\"}");
  std::vector<std::string> files = Graph(dir / "build.json", dir / "o");
  EXPECT_EQ(Names(files), (std::vector<std::string>{"build_step0_rank0", "build_step0_rank1", "build_step1_rank0",
                                                    "build_step1_rank1"}));
}

// Newer msprobe names a single process's folder proc<pid>; two such runs pair
// their one folder whatever the pids.
TEST(BatchTest, ProcFoldersPairAsSingleRanks) {
  TempDir dir;
  WriteFile(dir / "proc.json", R"({"npu_path": ")" + Sample("structure/npu") + R"(", "bench_path": ")" +
                                   Sample("structure/bench") + "\"}");
  std::vector<std::string> files = Graph(dir / "proc.json", dir / "o");
  std::vector<std::string> npu_folders = Files(Sample("structure/npu/step0"));
  ASSERT_EQ(npu_folders.size(), 1u);
  ASSERT_EQ(npu_folders[0].rfind("proc", 0), 0u);
  EXPECT_NE(npu_folders, Files(Sample("structure/bench/step0"))) << "the pids differ";
  EXPECT_EQ(Names(files), std::vector<std::string>{"compare_step0_" + npu_folders[0]});
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(CountMatched(Export(files[0])["NPU"]), 67);
}

TEST(CliTest, FrameworkFlagFirstAsMsprobeTakesIt) {
  TempDir out;
  RunResult r = RunTool({"-f", "pytorch", "graph", "-i", Sample("dist_gloo/build.json"), "-o", out / "o"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Files(out / "o").size(), 1u);
}

// §5.6: simplified stacks by default, complete ones with -cs.
TEST(CliTest, CompleteStack) {
  TempDir out;
  std::vector<std::string> simple = Graph(Sample("cnn_statistics/build.json"), out / "s");
  std::vector<std::string> complete = Graph(Sample("cnn_statistics/build.json"), out / "c", {"-cs"});
  ASSERT_EQ(simple.size(), 1u);
  ASSERT_EQ(complete.size(), 1u);
  Json s = Export(simple[0]), c = Export(complete[0]);
  const Json& s_fc = s["node"].at("Module.fc.Linear.forward.0")["stack_info"];
  const Json& c_fc = c["node"].at("Module.fc.Linear.forward.0")["stack_info"];
  ASSERT_EQ(s_fc.size(), 1u);
  EXPECT_NE(s_fc[0].get<std::string>().find("fc("), std::string::npos) << s_fc[0];
  EXPECT_GT(c_fc.size(), 1u);
  EXPECT_NE(std::find(c_fc.begin(), c_fc.end(), s_fc[0]), c_fc.end()) << "the kept line is one of the complete stack";
  // msprobe 26 leaves its own template frame out of API stacks, so there is
  // no line to cut at and the whole stack is kept.
  const Json& s_api = s["node"].at("Functional.linear.0.forward")["stack_info"];
  EXPECT_GT(s_api.size(), 1u);
  EXPECT_EQ(s_api, c["node"].at("Functional.linear.0.forward")["stack_info"]);
  // A backward module borrows the simplified stack of its forward.0 twin.
  EXPECT_EQ(s["node"].at("Module.fc.Linear.backward.0")["stack_info"], s_fc);
}

TEST(CliTest, ExportedFileLayout) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample("dist_gloo/compare.json"), out / "o");
  ASSERT_EQ(files.size(), 1u);
  RunResult r = RunTool({"export", files[0], "-o", out / "x.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, out / "x.json\n");
  std::string text = ReadFile(out / "x.json");
  EXPECT_EQ(text.substr(0, 20), "{\n    \"NPU\": {\n     ");
  EXPECT_NE(text.back(), '\n') << "json.dump writes no trailing newline";
  EXPECT_TRUE(std::all_of(text.begin(), text.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x80; }))
      << "ASCII escapes only";
  EXPECT_NE(text.find("\\u6bd4\\u5bf9"), std::string::npos) << "the grey legend text, escaped";
  Json doc = Json::parse(text);
  // micro_step_id only on root children.
  for (auto& [name, node] : doc["NPU"]["node"].items()) {
    bool top = node["upnode"] == "DefaultModel";
    EXPECT_EQ(node.contains("micro_step_id"), top) << name;
  }
  EXPECT_EQ(doc["NPU"]["node"].at("DefaultModel")["upnode"], "None");
  std::vector<std::string> node_keys;
  for (auto& [k, v] : doc["NPU"]["node"].at("Module.fc1.Linear.forward.0").items()) node_keys.push_back(k);
  EXPECT_EQ(node_keys,
            (std::vector<std::string>{"id", "node_type", "output_data", "input_data", "upnode", "subnodes",
                                      "matched_node_link", "suggestions", "stack_info", "micro_step_id", "data"}));
}

// ---------------------------------------------------------------- bad input

// A copy of a small real case in a temp dir, to damage.
class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(Sample("dist_gloo/npu/step0/rank0"), dir_ / "npu", fs::copy_options::recursive);
    fs::copy(Sample("dist_gloo/bench/step0/rank0"), dir_ / "bench", fs::copy_options::recursive);
    WriteFile(dir_ / "compare.json", R"({"npu_path": "npu", "bench_path": "bench"})");
    WriteFile(dir_ / "out/keep.txt", "a file of the user's");
  }

  // Runs graph on `config` (default compare.json) into out/ and checks the
  // failure: exit status 2, one "graph-ascend: error:" line naming each of
  // `parts`, nothing written.
  void ExpectFailure(const std::vector<std::string>& parts, const std::string& config = "",
                     const std::string& out = "") {
    RunResult r = RunTool(
        {"graph", "-i", config.empty() ? dir_ / "compare.json" : config, "-o", out.empty() ? dir_ / "out" : out});
    ExpectOneError(r, parts);
    EXPECT_EQ(Files(dir_ / "out"), std::vector<std::string>{"keep.txt"}) << "nothing written, nothing removed";
  }
  void Damage(const std::string& rel, const std::string& text) { WriteFile(dir_ / rel, text); }
  std::string Original(const std::string& rel) { return ReadFile(dir_ / rel); }

  TempDir dir_;
};

TEST_F(BadInputTest, TheUndamagedCopyWorks) {
  RunResult r = RunTool({"graph", "-i", dir_ / "compare.json", "-o", dir_ / "out"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Files(dir_ / "out").size(), 2u);
}

TEST_F(BadInputTest, MissingCompareJson) { ExpectFailure({dir_ / "absent.json", "cannot open"}, dir_ / "absent.json"); }

TEST_F(BadInputTest, CompareJsonIsADirectory) {
  fs::create_directories(dir_ / "dir.json");
  ExpectFailure({dir_ / "dir.json", "directory"}, dir_ / "dir.json");
}

TEST_F(BadInputTest, CompareJsonIsADanglingSymlink) {
  fs::create_symlink(dir_ / "nowhere.json", dir_ / "link.json");
  ExpectFailure({dir_ / "link.json", "cannot open"}, dir_ / "link.json");
}

TEST_F(BadInputTest, MalformedCompareJson) {
  Damage("compare.json", "{\"npu_path\": \"npu\",\n \"bench_path\": }");
  ExpectFailure({dir_ / "compare.json", "line 2, column 16"});
}

TEST_F(BadInputTest, CompareJsonWrongTypes) {
  Damage("compare.json", R"({"npu_path": 5})");
  ExpectFailure({"compare.json", "key npu_path", "line 1"});
  Damage("compare.json", R"({"bench_path": "bench"})");
  ExpectFailure({"compare.json", "npu_path"});
  Damage("compare.json", R"(["npu", "bench"])");
  ExpectFailure({"compare.json", "JSON object"});
}

TEST_F(BadInputTest, DumpDirectoryMissing) {
  Damage("compare.json", R"({"npu_path": "gone", "bench_path": "bench"})");
  ExpectFailure({"gone", "cannot open"});
}

// A missing construct.json is a level L1 dump (dump_only_test.cc); one that
// is there but cannot be read is an error.
TEST_F(BadInputTest, ConstructJsonIsADanglingSymlink) {
  fs::remove(dir_ / "npu/construct.json");
  fs::create_symlink(dir_ / "nowhere/construct.json", dir_ / "npu/construct.json");
  ExpectFailure({"npu/construct.json", "cannot open"});
}

TEST_F(BadInputTest, StackJsonIsADanglingSymlink) {
  fs::remove(dir_ / "bench/stack.json");
  fs::create_symlink(dir_ / "nowhere/stack.json", dir_ / "bench/stack.json");
  ExpectFailure({"bench/stack.json", "cannot open"});
}

TEST_F(BadInputTest, DumpJsonIsADirectory) {
  fs::remove(dir_ / "npu/dump.json");
  fs::create_directories(dir_ / "npu/dump.json");
  // A folder among the files makes it a batch layout (§2.4 step 3)...
  ExpectFailure({dir_ / "npu:", "folder layout"});
  // ...unless dump_tensor_data marks it as a dump folder.
  fs::create_directories(dir_ / "npu/dump_tensor_data");
  ExpectFailure({"npu/dump.json", "is a directory"});
}

TEST_F(BadInputTest, TruncatedDumpJson) {
  std::string dump = Original("bench/dump.json");
  Damage("bench/dump.json", dump.substr(0, dump.size() / 2));
  size_t lines = static_cast<size_t>(std::count(dump.begin(), dump.begin() + dump.size() / 2, '\n')) + 1;
  ExpectFailure({"bench/dump.json", "line " + std::to_string(lines) + ",", "truncated"});
}

TEST_F(BadInputTest, MalformedDumpJsonNamesTheByte) {
  std::string dump = Original("npu/dump.json");
  size_t at = dump.find("\"Max\":", dump.size() / 3);
  ASSERT_NE(at, std::string::npos);
  dump[at + 5] = ';';
  Damage("npu/dump.json", dump);
  ExpectFailure({"npu/dump.json", "(byte " + std::to_string(at + 5) + ")", "expected ':'"});
}

TEST_F(BadInputTest, WrongValueTypeInConstructJson) {
  std::string construct = Original("npu/construct.json");
  size_t colon = construct.find(": ");
  ASSERT_NE(colon, std::string::npos);
  size_t end = construct.find_first_of(",\n}", colon);
  Damage("npu/construct.json", construct.substr(0, colon + 2) + "[1, 2, 3]" + construct.substr(end));
  ExpectFailure({"npu/construct.json", "line", "parent"});
}

TEST_F(BadInputTest, DumpDataIsNotAnObject) {
  const std::string dump = R"({"task": "statistics", "level": "mix", "framework": "pytorch", "data": [1, 2]})";
  Damage("npu/dump.json", dump);
  ExpectFailure({"npu/dump.json", "key data", "(byte " + std::to_string(dump.find('[')) + ")"});
}

TEST_F(BadInputTest, StackJsonIsAList) {
  Damage("bench/stack.json", "[]");
  ExpectFailure({"bench/stack.json", "JSON object"});
}

TEST_F(BadInputTest, EmptyDump) {
  Damage("npu/dump.json", R"({"task": "statistics", "level": "mix", "framework": "pytorch", "data": {}})");
  Damage("npu/construct.json", "{}");
  ExpectFailure({"npu/dump.json", "empty dump"});
}

TEST_F(BadInputTest, EmptyDumpFile) {
  Damage("npu/dump.json", "");
  ExpectFailure({"npu/dump.json", "empty"});
}

TEST_F(BadInputTest, UnknownTask) {
  std::string dump = Original("npu/dump.json");
  size_t at = dump.find("\"statistics\"");
  Damage("npu/dump.json", dump.replace(at, 12, "\"overflow_check\""));
  ExpectFailure({"npu/dump.json", "unknown task 'overflow_check'"});
}

TEST_F(BadInputTest, TasksDiffer) {
  std::string dump = Original("bench/dump.json");
  size_t at = dump.find("\"statistics\"");
  Damage("bench/dump.json", dump.replace(at, 12, "\"tensor\""));
  ExpectFailure({"bench/dump.json", "same task"});
}

TEST_F(BadInputTest, Md5OnOneSideOnly) {
  fs::remove_all(dir_ / "bench");
  fs::copy(Sample("cnn_md5/bench/step0/rank0"), dir_ / "bench", fs::copy_options::recursive);
  fs::remove_all(dir_ / "npu");
  fs::copy(Sample("cnn_statistics/npu/step0/rank0"), dir_ / "npu", fs::copy_options::recursive);
  ExpectFailure({"npu/dump.json", "md5"});
}

TEST_F(BadInputTest, OutputPathIsAFile) {
  WriteFile(dir_ / "taken", "x");
  ExpectFailure({"taken", "not a directory"}, "", dir_ / "taken");
  ExpectFailure({"taken"}, "", dir_ / "taken/sub");
}

TEST_F(BadInputTest, LayoutsDiffer) {
  Damage("compare.json", R"({"npu_path": "npu", "bench_path": ")" + Sample("dist_gloo/bench") + "\"}");
  ExpectFailure({"inconsistent"});
}

TEST_F(BadInputTest, StrayFileAmongRankFolders) {
  fs::copy(Sample("dist_gloo/npu/step0"), dir_ / "n", fs::copy_options::recursive);
  fs::copy(Sample("dist_gloo/bench/step0"), dir_ / "b", fs::copy_options::recursive);
  WriteFile(dir_ / "b/notes.txt", "x");
  Damage("compare.json", R"({"npu_path": "n", "bench_path": "b"})");
  ExpectFailure({"b/notes.txt", "rank"});
}

TEST_F(BadInputTest, RankSetsDiffer) {
  fs::copy(Sample("dist_gloo/npu/step0"), dir_ / "n", fs::copy_options::recursive);
  fs::copy(Sample("dist_gloo/bench/step0"), dir_ / "b", fs::copy_options::recursive);
  fs::rename(dir_ / "b/rank1", dir_ / "b/rank2");
  Damage("compare.json", R"({"npu_path": "n", "bench_path": "b"})");
  ExpectFailure({"rank0, rank1", "rank0, rank2"});
}

TEST_F(BadInputTest, StepSetsDiffer) {
  fs::copy(Sample("cnn_statistics/npu"), dir_ / "n", fs::copy_options::recursive);
  fs::copy(Sample("cnn_statistics/bench"), dir_ / "b", fs::copy_options::recursive);
  fs::remove_all(dir_ / "b/step1");
  Damage("compare.json", R"({"npu_path": "n", "bench_path": "b"})");
  ExpectFailure({"step0, step1", "step"});
}

TEST_F(BadInputTest, EmptyDumpDirectory) {
  fs::create_directories(dir_ / "empty");
  Damage("compare.json", R"({"npu_path": "empty"})");
  ExpectFailure({"empty", "empty"});
}

// A later rank fails: the files of the ranks before it are removed too.
TEST_F(BadInputTest, FailingRankLeavesNoFileOfTheRun) {
  fs::copy(Sample("dist_gloo/npu"), dir_ / "n", fs::copy_options::recursive);
  fs::copy(Sample("dist_gloo/bench"), dir_ / "b", fs::copy_options::recursive);
  std::string dump = ReadFile(dir_ / "b/step1/rank1/dump.json");
  WriteFile(dir_ / "b/step1/rank1/dump.json", dump.substr(0, dump.size() - 100));
  Damage("compare.json", R"({"npu_path": "n", "bench_path": "b"})");
  ExpectFailure({"b/step1/rank1/dump.json", "truncated"});
}

TEST(CliErrorTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunTool({}).status, 2);
  EXPECT_EQ(RunTool({"frobnicate"}).status, 2);
  RunResult no_output = RunTool({"graph", "-i", Sample("dist_gloo/build.json")});
  EXPECT_EQ(no_output.status, 2);
  EXPECT_NE(no_output.err.find("-i and -o are required"), std::string::npos) << no_output.err;
  TempDir dir;
  RunResult unknown = RunTool({"graph", "-i", Sample("dist_gloo/build.json"), "-o", dir / "o", "--bogus"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("--bogus"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "o")) << "nothing is created on a usage error";
  EXPECT_EQ(RunTool({"--help"}).status, 0);
  EXPECT_EQ(RunTool({"graph", "--help"}).status, 0);
}

TEST(CliErrorTest, InfoAndExportOnBadFiles) {
  TempDir dir;
  WriteFile(dir / "bad.vis", std::string(200, 'x'));
  RunResult info = RunTool({"info", dir / "bad.vis"});
  EXPECT_EQ(info.status, 2);
  EXPECT_NE(info.err.find(dir / "bad.vis"), std::string::npos) << info.err;
  RunResult missing = RunTool({"info", dir / "absent.vis"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos) << missing.err;

  std::vector<std::string> files = Graph(Sample("dist_gloo/build.json"), dir / "o");
  ASSERT_EQ(files.size(), 1u);
  RunResult unwritable = RunTool({"export", files[0], "-o", dir / "no/such/dir/x.json"});
  EXPECT_EQ(unwritable.status, 2);
  EXPECT_NE(unwritable.err.find("x.json"), std::string::npos) << unwritable.err;
  RunResult export_bad = RunTool({"export", dir / "bad.vis", "-o", dir / "y.json"});
  EXPECT_EQ(export_bad.status, 2);
  EXPECT_FALSE(fs::exists(dir / "y.json"));
}

}  // namespace
}  // namespace graph_ascend
