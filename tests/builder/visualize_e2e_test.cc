// End to end: `graph-ascend graph_visualize` (msprobe 26.2.0's flags) on the
// committed samples. Each run is checked against `graph -i compare.json` on
// the same dumps (one planner and one set of jobs behind both commands), and
// the 26.2 layout rules (rank intersection, step*/rank*, proc<pid>) on
// folders made of the samples' rank folders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"

namespace graph_ascend {
namespace {

namespace fs = std::filesystem;
using testing::CountMatched;
using testing::ExpectOneError;
using testing::Export;
using testing::Files;
using testing::Graph;
using testing::Json;
using testing::Lines;
using testing::RunResult;
using testing::RunTool;
using testing::Sample;
using testing::TempDir;

// Runs graph_visualize and returns the files it names on stdout (sorted),
// checking that they are exactly the files written.
std::vector<std::string> Visualize(const std::vector<std::string>& flags, const std::string& out_dir,
                                   RunResult* run = nullptr) {
  std::vector<std::string> args = {"graph_visualize", "-o", out_dir};
  args.insert(args.end(), flags.begin(), flags.end());
  RunResult r = RunTool(args);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> paths;
  for (const std::string& line : Lines(r.out)) {
    if (line.rfind("PROGRESS: ", 0) != 0 && line.rfind("[", 0) != 0) paths.push_back(line);
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> listed;
  for (const std::string& f : Files(out_dir)) listed.push_back(out_dir + "/" + f);
  EXPECT_EQ(paths, listed) << "stdout names exactly the files written";
  if (run != nullptr) *run = r;
  return paths;
}

std::vector<std::string> Names(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) out.push_back(fs::path(p).filename().string());
  return out;
}

// The node names of one side of an exported compare with their precision
// indices (-1 without one).
std::map<std::string, double> Indices(const Json& side) {
  std::map<std::string, double> out;
  for (auto& [name, node] : side["node"].items()) {
    out[name] = node["data"].contains("precision_index") ? node["data"]["precision_index"].get<double>() : -1;
  }
  return out;
}

// The same graph as `graph -i config`: nodes, indices and matches.
void ExpectSameAsGraph(const std::string& vis, const std::string& config, const std::vector<std::string>& flags = {}) {
  TempDir out;
  std::vector<std::string> graph_files = Graph(config, out / "g", flags);
  ASSERT_EQ(graph_files.size(), 1u);
  Json ours = Export(vis), theirs = Export(graph_files[0]);
  EXPECT_EQ(Indices(ours["NPU"]), Indices(theirs["NPU"]));
  EXPECT_EQ(Indices(ours["Bench"]).size(), Indices(theirs["Bench"]).size());
  EXPECT_EQ(CountMatched(ours["NPU"]), CountMatched(theirs["NPU"]));
  EXPECT_GT(CountMatched(ours["NPU"]), 0);
}

TEST(VisualizeTest, SingleRankCompareIsTheGraphOfCompareJson) {
  TempDir out;
  std::vector<std::string> files = Visualize(
      {"-tp", Sample("gpt_statistics/npu/step0/rank0"), "-gp", Sample("gpt_statistics/bench/step0/rank0")}, out / "o");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::regex_match(Names(files)[0], std::regex(R"(compare_\d{14}\.vis)"))) << files[0];
  ExpectSameAsGraph(files[0], Sample("gpt_statistics/compare.json"));
}

TEST(VisualizeTest, SingleRankBuild) {
  TempDir out;
  std::vector<std::string> files = Visualize({"--target_path", Sample("cnn_statistics/npu/step0/rank0")}, out / "o");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::regex_match(Names(files)[0], std::regex(R"(build_\d{14}\.vis)"))) << files[0];
  Json doc = Export(files[0]);
  EXPECT_FALSE(doc.contains("NPU"));
  EXPECT_GT(doc["node"].size(), 400u);
}

TEST(VisualizeTest, StepsLayoutGivesOneFilePerStepAndRank) {
  TempDir out;
  std::vector<std::string> files =
      Visualize({"-tp", Sample("dist_gloo/npu"), "-gp", Sample("dist_gloo/bench"), "-oc"}, out / "o");
  std::vector<std::string> names = Names(files);
  ASSERT_EQ(names.size(), 4u);
  for (size_t i = 0; i < names.size(); ++i) {
    std::string want = std::string("compare_step") + (i < 2 ? "0" : "1") + "_rank" + (i % 2 ? "1" : "0") + "_";
    EXPECT_EQ(names[i].rfind(want, 0), 0u) << names[i];
  }
  Json rank1 = Export(files[1]);
  EXPECT_EQ(rank1["OverflowCheck"], true);
}

// msprobe 26 compares the ranks both runs have; msprobe graph (8.x) refuses
// differing rank folders.
TEST(VisualizeTest, RanksAreIntersected) {
  TempDir dir;
  fs::create_directories(dir / "npu");
  fs::create_directories(dir / "bench");
  fs::create_directory_symlink(Sample("dist_gloo/npu/step0/rank0"), dir / "npu/rank0");
  fs::create_directory_symlink(Sample("dist_gloo/npu/step0/rank1"), dir / "npu/rank1");
  fs::create_directory_symlink(Sample("dist_gloo/bench/step0/rank1"), dir / "bench/rank1");
  // Files beside the rank folders are skipped (26.2's skip_wrong_dir; a
  // folder of another name is refused, by 26.2 too).
  testing::WriteFile(dir / "npu/notes.txt", "not a dump\n");
  testing::WriteFile(dir / "bench/run.log", "log\n");
  std::vector<std::string> files = Visualize({"-tp", dir / "npu", "-gp", dir / "bench"}, dir / "o");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(Names(files)[0].rfind("compare_rank1_", 0), 0u) << files[0];
  EXPECT_GT(CountMatched(Export(files[0])["NPU"]), 0);

  // msprobe 26 keeps absolute dump paths: the real path of -tp, then the rank folder.
  RunResult info = RunTool({"info", files[0]});
  EXPECT_EQ(testing::InfoLine(info.out, "npu dump: "),
            "npu dump: " + fs::canonical(dir / "npu").string() + "/rank1 (pytorch)");

  testing::WriteFile(dir / "batch.json", "{\"npu_path\": \"npu\", \"bench_path\": \"bench\"}");
  RunResult graph = RunTool({"graph", "-i", dir / "batch.json", "-o", dir / "g"});
  EXPECT_EQ(graph.status, 2) << "graph -i keeps msprobe 8's rule";
}

// msprobe 26 moves a backward node whose parent is not its module's parent
// under the backward twin of its forward node's parent; graph keeps 8.1's.
TEST(VisualizeTest, BackwardProjectionsSitUnderTheAttentionBackward) {
  TempDir out;
  std::vector<std::string> files = Visualize(
      {"-tp", Sample("gpt_statistics/npu/step0/rank0"), "-gp", Sample("gpt_statistics/bench/step0/rank0")}, out / "v");
  std::vector<std::string> graph_files = Graph(Sample("gpt_statistics/compare.json"), out / "g");
  ASSERT_EQ(files.size(), 1u);
  ASSERT_EQ(graph_files.size(), 1u);
  Json v = Export(files[0])["NPU"], g = Export(graph_files[0])["NPU"];
  const std::string k = "Module.model.layers.0.self_attn.k_proj.Linear.backward.0";
  EXPECT_EQ(v["node"][k]["upnode"], "Module.model.layers.0.self_attn.LlamaAttention.backward.0");
  EXPECT_EQ(g["node"][k]["upnode"], "Module.model.layers.0.LlamaDecoderLayer.backward.0");
  int moved = 0;
  for (auto& [name, node] : v["node"].items()) moved += node["upnode"] != g["node"][name]["upnode"];
  EXPECT_EQ(moved, 12) << "q/k/v/o projections' backward of 3 layers";
}

// Both gradings are stored; graph_visualize shows msprobe 26's first.
TEST(VisualizeTest, InfoReportsBothGradings) {
  TempDir out;
  std::vector<std::string> files = Visualize(
      {"-tp", Sample("gpt_statistics/npu/step0/rank0"), "-gp", Sample("gpt_statistics/bench/step0/rank0")}, out / "v");
  std::vector<std::string> graph_files = Graph(Sample("gpt_statistics/compare.json"), out / "g");
  RunResult v = RunTool({"info", files[0]}), g = RunTool({"info", graph_files[0]});
  EXPECT_EQ(testing::InfoLine(v.out, "default grading: "), "default grading: msprobe 26 (pass/warning/error)");
  EXPECT_EQ(testing::InfoLine(g.out, "default grading: "), "default grading: precision index (msprobe 8.x)");
  // The counts msprobe 26.2.0 itself gives this compare (bench/reference/crosscheck26.py).
  EXPECT_EQ(testing::InfoLine(v.out, "msprobe 26 grades"), testing::InfoLine(g.out, "msprobe 26 grades"));
  EXPECT_NE(testing::InfoLine(v.out, "msprobe 26 grades").find("warning 19, error 22"), std::string::npos) << v.out;
  EXPECT_EQ(testing::InfoLine(v.out, "first error by msprobe 26's grading"),
            "first error by msprobe 26's grading, in execution order: Functional.linear.11.forward (api)");
  Json graded = Export(files[0]);
  RunResult e = RunTool({"export", files[0], "-o", out / "g26.json", "--grading", "26"});
  ASSERT_EQ(e.status, 0) << e.err;
  Json by26 = Json::parse(testing::ReadFile(out / "g26.json"));
  const std::string head = "Module.lm_head.Linear.forward.0";
  EXPECT_LT(graded["NPU"]["node"][head]["data"]["precision_index"].get<double>(), 0.001);
  EXPECT_EQ(by26["NPU"]["node"][head]["data"]["precision_index"].get<double>(), 0.5);
}

// samples/bert_pgrad: the npu run's hand-written LayerNorm hands out bias's
// gradient before weight's, so msprobe lists P.parameters_grad.0's items in
// another order on each side (issue 9, 5a; msprobe 8.1 and 26.2 pair them
// by position: COMPATIBILITY C26-pgrad-order). Paired by name, the equal
// gradients show no difference. Its BERT `attention.output.*` modules keep
// the metrics of their inputs (5b, C26-output-name).
TEST(VisualizeTest, RealDumpWithGradientsInAnotherOrder) {
  for (const std::string layer : {"0", "1"}) {
    const std::string grads = "Module.encoder.layer." + layer + ".output.LayerNorm.LayerNorm.parameters_grad.0";
    const std::string npu_dump = testing::ReadFile(Sample("bert_pgrad/npu/step0/rank0/dump.json"));
    const std::string bench_dump = testing::ReadFile(Sample("bert_pgrad/bench/step0/rank0/dump.json"));
    auto order = [&](const std::string& text) {
      Json d = Json::parse(text)["data"][grads];
      std::vector<std::string> keys;
      for (auto& [k, v] : d.items()) keys.push_back(k);
      return keys;
    };
    ASSERT_EQ(order(npu_dump), (std::vector<std::string>{"bias", "weight"})) << "the sample shows the bug";
    ASSERT_EQ(order(bench_dump), (std::vector<std::string>{"weight", "bias"}));
  }
  // The last layer's gradients are equal by name, not by position.
  const std::string last = "Module.encoder.layer.1.output.LayerNorm.LayerNorm.parameters_grad.0";
  Json n = Json::parse(testing::ReadFile(Sample("bert_pgrad/npu/step0/rank0/dump.json")))["data"][last];
  Json b = Json::parse(testing::ReadFile(Sample("bert_pgrad/bench/step0/rank0/dump.json")))["data"][last];
  EXPECT_NEAR(n["bias"][0]["Norm"].get<double>(), b["bias"][0]["Norm"].get<double>(), 1e-6);
  EXPECT_GT(std::fabs(n["bias"][0]["Norm"].get<double>() - b["weight"][0]["Norm"].get<double>()), 1e-3);
  TempDir out;
  for (bool visualize : {false, true}) {
    std::vector<std::string> files =
        visualize ? Visualize({"-tp", Sample("bert_pgrad/npu/step0/rank0"), "-gp", Sample("bert_pgrad/bench/step0/rank0")},
                              out / "v")
                  : Graph(Sample("bert_pgrad/compare.json"), out / "g");
    ASSERT_EQ(files.size(), 1u);
    Json npu = Export(files[0])["NPU"]["node"];
    for (const std::string layer : {"0", "1"}) {
      const std::string grads = "Module.encoder.layer." + layer + ".output.LayerNorm.LayerNorm.parameters_grad.0";
      ASSERT_TRUE(npu.contains(grads));
      EXPECT_EQ(npu[grads]["matched_node_link"].back(), grads) << "matched although the orders differ";
      int items = 0;
      for (auto& [key, value] : npu[grads]["output_data"].items()) {
        ++items;
        if (layer != "1") continue;
        std::string rel = value["NormRelativeErr"].get<std::string>();
        EXPECT_LT(std::stod(rel.substr(0, rel.size() - 1)), 1e-3) << key << " " << rel << ": equal gradients";
      }
      EXPECT_EQ(items, 2);
    }
    const std::string dense = "Module.encoder.layer.0.attention.output.dense.Linear.forward.0";
    ASSERT_TRUE(npu.contains(dense));
    ASSERT_TRUE(npu[dense]["input_data"].contains(dense + ".input.0")) << "the input item of a .output. module";
    // Its inputs are compared as inputs (5b): every metric of a statistics
    // row is there, with a value (msprobe 8.1.2 leaves them out).
    int inputs = 0;
    for (auto& [key, item] : npu[dense]["input_data"].items()) {
      if (item.value("type", "") != "torch.Tensor") continue;
      ++inputs;
      for (const char* metric : {"Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
                                 "MeanRelativeErr", "NormRelativeErr"}) {
        ASSERT_TRUE(item.contains(metric)) << key << " " << metric << " " << item.dump();
        EXPECT_NE(item[metric].dump(), "\"\"") << key << " " << metric;
      }
    }
    EXPECT_GE(inputs, 1);
  }
}

TEST(VisualizeTest, OutputFormatDbWritesOneDbOfEveryStepAndRank) {
  // --output_format db: one compare_<ts>.vis.db as msprobe 26.x writes it,
  // holding the four graphs of the batch, with msprobe 26's grades as the
  // precision index; no .vis and no temporary folder are left beside it.
  TempDir out;
  std::vector<std::string> files =
      Visualize({"-tp", Sample("dist_gloo/npu"), "-gp", Sample("dist_gloo/bench"), "--output_format", "db"}, out / "o");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::regex_match(Names(files)[0], std::regex(R"(compare_\d{14}\.vis\.db)"))) << files[0];
  RunResult r = RunTool({"import", files[0], "-o", out / "back"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> back = Files(out / "back");
  ASSERT_EQ(back.size(), 4u);
  size_t graded = 0;
  for (const std::string& f : back) {
    Json side = Export(out / ("back/" + f))["NPU"];
    for (auto& [name, node] : side["node"].items()) {
      if (!node["data"].contains("precision_index")) continue;
      double p = node["data"]["precision_index"].get<double>();
      EXPECT_TRUE(p == 0 || p == 0.5 || p == 1) << f << " " << name << " " << p;
      ++graded;
    }
  }
  EXPECT_GT(graded, 0u);
}

TEST(VisualizeTest, ExportDbTakesTheGradingAsked) {
  // A `graph` file shows the 8.x index first; export --format db --grading 26
  // writes its stored msprobe 26 grades instead.
  TempDir out;
  std::vector<std::string> files = Graph(Sample("gpt_statistics/compare.json"), out / "g");
  ASSERT_EQ(files.size(), 1u);
  auto grades_of = [&](const std::string& db) {
    RunResult back = RunTool({"import", db, "-o", out / (db.substr(db.rfind('/') + 1) + ".vis")});
    EXPECT_EQ(back.status, 0) << back.err;
    std::set<double> seen;
    Json side = Export(out / (db.substr(db.rfind('/') + 1) + ".vis"))["NPU"];
    for (auto& [name, node] : side["node"].items()) {
      if (node["data"].contains("precision_index")) seen.insert(node["data"]["precision_index"].get<double>());
    }
    return seen;
  };
  RunResult r26 = RunTool({"export", files[0], "--format", "db", "--grading", "26", "-o", out / "g26.vis.db"});
  ASSERT_EQ(r26.status, 0) << r26.err;
  RunResult rix = RunTool({"export", files[0], "--format", "db", "-o", out / "gix.vis.db"});
  ASSERT_EQ(rix.status, 0) << rix.err;
  std::set<double> g26 = grades_of(out / "g26.vis.db"), gix = grades_of(out / "gix.vis.db");
  ASSERT_FALSE(g26.empty());
  for (double p : g26) EXPECT_TRUE(p == 0 || p == 0.5 || p == 1) << p;
  EXPECT_TRUE(std::any_of(gix.begin(), gix.end(), [](double p) { return p != 0 && p != 0.5 && p != 1; }))
      << "the index of the bf16 culprit (0.0025) is none of the grades";
}

TEST(VisualizeTest, ExportDbThatFailsWhileStreamingLeavesNothing) {
  // export --format db streams a .vis into the db row by row: an error after
  // rows were written (the second graph refused, a detail block damaged) is
  // one line, and neither the db nor its temporary file is left.
  TempDir out;
  std::vector<std::string> files = Graph(Sample("gpt_statistics/compare.json"), out / "g");
  ASSERT_EQ(files.size(), 1u);
  fs::create_directory(out / "db");
  RunResult twice = RunTool({"export", files[0], files[0], "--format", "db", "-o", out / "db/x.vis.db"});
  ExpectOneError(twice, {"x.vis.db", "step 0, rank 0", "two graphs for the same step and rank"});
  EXPECT_TRUE(Files(out / "db").empty());

  // The first detail block follows the 16-byte header: damage its bytes.
  std::string damaged = out / "damaged.vis";
  fs::copy_file(files[0], damaged);
  {
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes(40, '\0');
    f.seekg(300);
    f.read(bytes.data(), 40);
    for (char& c : bytes) c = static_cast<char>(c ^ 0x5a);
    f.seekp(300);
    f.write(bytes.data(), 40);
  }
  RunResult broken = RunTool({"export", damaged, "--format", "db", "-o", out / "db/x.vis.db"});
  ExpectOneError(broken, {"damaged.vis", "damaged node details section"});
  EXPECT_TRUE(Files(out / "db").empty());
}

TEST(VisualizeTest, NoCommonRankIsAnError) {
  TempDir dir;
  fs::create_directories(dir / "npu");
  fs::create_directories(dir / "bench");
  fs::create_directory_symlink(Sample("dist_gloo/npu/step0/rank0"), dir / "npu/rank0");
  fs::create_directory_symlink(Sample("dist_gloo/bench/step0/rank1"), dir / "bench/rank1");
  RunResult r = RunTool({"graph_visualize", "-tp", dir / "npu", "-gp", dir / "bench", "-o", dir / "o"});
  ExpectOneError(r, {"no rank folder in common", "npu has [rank0]", "bench has [rank1]"});
  EXPECT_FALSE(fs::exists(dir / "o"));
}

TEST(VisualizeTest, ProcFoldersOfDifferentPidsArePaired) {
  TempDir out;
  std::vector<std::string> files =
      Visualize({"-tp", Sample("l1_api/npu/step0"), "-gp", Sample("l1_api/bench/step0")}, out / "o");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(Names(files)[0].rfind("compare_proc", 0), 0u) << files[0];
  EXPECT_GT(CountMatched(Export(files[0])["NPU"]), 0);
}

TEST(VisualizeTest, ParallelMergeFlags) {
  TempDir out;
  std::vector<std::string> files = Visualize({"-tp", Sample("parallel_merge/npu/step0"), "-gp",
                                              Sample("parallel_merge/bench/step0"), "--rank_size", "4", "1", "--tp",
                                              "2", "1", "--pp", "2", "1", "--vpp", "1", "1", "--order",
                                              "tp-cp-ep-dp-pp", "tp-cp-ep-dp-pp"},
                                             out / "o");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::regex_match(Names(files)[0], std::regex(R"(compare_merged0_\d{14}\.vis)"))) << files[0];
  ExpectSameAsGraph(files[0], Sample("parallel_merge/compare.json"));
}

// --file_type json: each merged graph as a dump folder (msprobe 26's
// <out>/step0/rank<R>/), which read back is the merged graph again.
TEST(VisualizeTest, FileTypeJsonWritesTheMergedDump) {
  TempDir out;
  RunResult r = RunTool({"graph_visualize", "-tp", Sample("parallel_merge/npu/step0"), "-o", out / "o", "--rank_size",
                         "4", "--tp", "2", "--pp", "2", "--file_type", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string dir = out / "o/step0/rank0";
  EXPECT_EQ(Lines(r.out), std::vector<std::string>{dir});
  EXPECT_EQ(Files(dir), (std::vector<std::string>{"construct.json", "dump.json", "stack.json"}));
  EXPECT_EQ(Files(out / "o"), std::vector<std::string>{"step0"});

  Json dump = Json::parse(testing::ReadFile(dir + "/dump.json"));
  EXPECT_EQ(dump["is_merged"], true);
  EXPECT_EQ(dump["task"], "statistics");
  // A TP-merged linear: the notes and the merged statistics (max of the two ranks' Max).
  const Json& qkv = dump["data"]["Module.decoder.layers.0.self_attention.linear_qkv.ColumnParallelLinear.forward.0"];
  ASSERT_TRUE(qkv.contains("parallel_merge_info"));
  EXPECT_NE(qkv["parallel_merge_info"][0].get<std::string>().find("merged from rank [0, 1]"), std::string::npos);
  Json rank0 = Json::parse(testing::ReadFile(Sample("parallel_merge/npu/step0/rank0/dump.json")));
  Json rank1 = Json::parse(testing::ReadFile(Sample("parallel_merge/npu/step0/rank1/dump.json")));
  const char* qkv_name = "Module.decoder.layers.0.self_attention.linear_qkv.ColumnParallelLinear.forward.0";
  double max0 = rank0["data"][qkv_name]["output"][0]["Max"], max1 = rank1["data"][qkv_name]["output"][0]["Max"];
  EXPECT_EQ(qkv["output"][0]["Max"].get<double>(), std::max(max0, max1));
  // Backward entries keep msprobe's "input" / "output"; pipeline stage 2's nodes are there, renamed.
  EXPECT_TRUE(dump["data"]["Tensor.__add__.5.backward"].contains("input"));
  EXPECT_TRUE(dump["data"].contains("Tensor.pow_rank2.0.forward"));
  // A batch_isend_irecv keeps its P2POp fields (linking across ranks reads them).
  const Json& p2p = dump["data"]["Distributed.batch_isend_irecv.0.forward"]["output"][0][0];
  EXPECT_EQ(p2p["class_type"], "torch.distributed.P2POp");
  EXPECT_EQ(p2p["op"], "isend");
  EXPECT_EQ(p2p["peer"], 2);
  EXPECT_TRUE(p2p["tensor"].contains("Max"));
  Json construct = Json::parse(testing::ReadFile(dir + "/construct.json"));
  EXPECT_TRUE(construct["Module.embedding.LanguageModelEmbedding.forward.0"].is_null());

  // Read back as a plain build, the graph is the merge build's, node for node.
  std::vector<std::string> merged = Visualize(
      {"-tp", Sample("parallel_merge/npu/step0"), "--rank_size", "4", "--tp", "2", "--pp", "2"}, out / "m");
  std::vector<std::string> again = Visualize({"-tp", dir}, out / "a");
  ASSERT_EQ(merged.size(), 1u);
  ASSERT_EQ(again.size(), 1u);
  Json a = Export(merged[0]), b = Export(again[0]);
  std::vector<std::string> names_a, names_b;
  for (auto& [name, node] : a["node"].items()) names_a.push_back(name);
  for (auto& [name, node] : b["node"].items()) names_b.push_back(name);
  EXPECT_EQ(names_a, names_b);
  EXPECT_GT(names_a.size(), 250u);
  for (auto& [name, node] : a["node"].items()) {
    if (!b["node"].contains(name)) continue;
    const Json& other = b["node"][name];
    for (const char* field : {"upnode", "subnodes", "node_type", "input_data", "output_data", "stack_info"}) {
      EXPECT_EQ(node.value(field, Json()), other.value(field, Json())) << name << " " << field;
    }
  }
}

// --file_type json over several steps: samples/parallel_merge's 4 ranks as
// a job of 8 (ranks 4-7 the same folders as 0-3: DP 2) in two steps. As
// msprobe 26.2.0 does on the same folders (bench/reference/
// crosscheck_file_type_json.py), each step gives one merged graph, the first
// DP group's, in <out>/step<S>/rank0/; the two steps hold the same dumps, so
// their files are the same, and the folders read back as a steps layout.
TEST(VisualizeTest, FileTypeJsonWritesEveryStep) {
  TempDir dir;
  for (const std::string step : {"step0", "step1"}) {
    fs::create_directories(dir / ("npu/" + step));
    for (int r = 0; r < 8; ++r) {
      fs::create_directory_symlink(Sample("parallel_merge/npu/step0/rank" + std::to_string(r % 4)),
                                   dir / ("npu/" + step + "/rank" + std::to_string(r)));
    }
  }
  RunResult r = RunTool({"graph_visualize", "-tp", dir / "npu", "-o", dir / "o", "--rank_size", "8", "--tp", "2",
                         "--pp", "2", "--file_type", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> folders = {dir / "o/step0/rank0", dir / "o/step1/rank0"};
  EXPECT_EQ(Lines(r.out), folders);
  EXPECT_EQ(Files(dir / "o"), (std::vector<std::string>{"step0", "step1"}));
  Json first;
  for (const std::string& folder : folders) {
    SCOPED_TRACE(folder);
    EXPECT_EQ(Files(folder), (std::vector<std::string>{"construct.json", "dump.json", "stack.json"}));
    Json dump = Json::parse(testing::ReadFile(folder + "/dump.json"));
    EXPECT_EQ(dump["is_merged"], true);
    EXPECT_TRUE(dump["data"].contains("Tensor.pow_rank2.0.forward")) << "the second stage, renamed";
    Json construct = Json::parse(testing::ReadFile(folder + "/construct.json"));
    if (first.is_null()) {
      first = {{"data", dump["data"]}, {"construct", construct}};
      continue;
    }
    EXPECT_EQ(dump["data"], first["data"]) << "the same ranks merged the same way";
    EXPECT_EQ(construct, first["construct"]);
  }
  // The folders read back as a steps layout: one graph a step.
  std::vector<std::string> again = Visualize({"-tp", dir / "o"}, dir / "a");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_TRUE(std::regex_match(Names(again)[1], std::regex(R"(build_step1_rank0_\d{14}\.vis)"))) << again[1];
  EXPECT_EQ(Export(again[0])["node"].size(), Export(again[1])["node"].size());
  EXPECT_GT(Export(again[0])["node"].size(), 250u);
}

// samples/p2p_micro: a 2-stage pipeline whose activations and gradients go
// through dist.isend / dist.irecv, two micro-batches a step. msprobe 26.2
// links each isend with its irecv (graph_visualize does); msprobe 8.1 also
// asks their output.0 to agree, and an isend's (a Work handle) is null, so
// `graph` leaves them unlinked (COMPATIBILITY C26-p2p). Both see two micro
// steps.
TEST(VisualizeTest, IsendAndIrecvAreLinkedAsMsprobe26Links) {
  TempDir out;
  std::vector<std::string> v =
      Visualize({"-tp", Sample("p2p_micro/npu"), "-gp", Sample("p2p_micro/bench")}, out / "v");
  std::vector<std::string> g = Graph(Sample("p2p_micro/batch.json"), out / "g");
  ASSERT_EQ(v.size(), 2u);
  ASSERT_EQ(g.size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    Json ours = Export(v[rank])["NPU"]["node"], eight = Export(g[rank])["NPU"]["node"];
    for (const std::string call : {"0", "1"}) {
      for (const std::string op : {"isend", "irecv"}) {
        const std::string name = "Distributed." + op + "." + call + ".forward";
        const std::string peer = "Distributed." + std::string(op == "isend" ? "irecv" : "isend") + "." + call + ".forward";
        ASSERT_TRUE(ours.contains(name));
        const Json& link = ours[name]["matched_distributed"];
        EXPECT_EQ(link["communications_type"], op == "isend" ? "send" : "receive") << name;
        const std::string other = std::to_string(1 - rank);
        ASSERT_TRUE(link["nodes_info"].contains(other)) << link.dump();
        EXPECT_EQ(link["nodes_info"][other][1], peer);
        EXPECT_TRUE(eight[name].value("matched_distributed", Json::object()).empty()) << name << " under graph";
      }
    }
    EXPECT_EQ(Export(v[rank])["MicroSteps"], 2);
    EXPECT_EQ(Export(g[rank])["MicroSteps"], 2);
    const std::string second = rank == 0 ? "Module.fc.Linear.forward.1" : "Module.norm.LayerNorm.forward.1";
    ASSERT_TRUE(ours.contains(second));
    EXPECT_EQ(ours[second]["micro_step_id"], 1) << "the second micro-batch";
  }
}

TEST(VisualizeTest, LayerMappingAndFuzzyMatch) {
  TempDir out;
  std::string yaml = Sample("layer_mapping/layer_mapping.yaml");
  std::vector<std::string> lm = Visualize({"-tp", Sample("layer_mapping/npu/step0/rank0"), "-gp",
                                           Sample("layer_mapping/bench/step0/rank0"), "-lm", yaml},
                                          out / "lm");
  ASSERT_EQ(lm.size(), 1u);
  ExpectSameAsGraph(lm[0], Sample("layer_mapping/compare.json"), {"-lm", yaml});
  std::vector<std::string> fm = Visualize(
      {"-tp", Sample("gpt_statistics/npu/step0/rank0"), "-gp", Sample("gpt_statistics/bench/step0/rank0"), "-fm"},
      out / "fm");
  ASSERT_EQ(fm.size(), 1u);
  ExpectSameAsGraph(fm[0], Sample("gpt_statistics/compare.json"), {"-f"});
}

// msprobe 26's -progress_log: `PROGRESS: {...}` lines on stdout, the value
// rising to 100, the last one with process_running false.
TEST(VisualizeTest, ProgressLog) {
  TempDir out;
  RunResult r;
  Visualize({"-tp", Sample("cnn_statistics/npu"), "-gp", Sample("cnn_statistics/bench"), "-progress_log"}, out / "o",
            &r);
  std::vector<Json> progress;
  for (const std::string& line : Lines(r.out)) {
    if (line.rfind("PROGRESS: ", 0) == 0) progress.push_back(Json::parse(line.substr(10)));
  }
  ASSERT_GE(progress.size(), 3u) << r.out;
  int last = -1;
  for (const Json& p : progress) {
    EXPECT_EQ(p.size(), 3u) << p.dump();
    EXPECT_TRUE(p["error_msg"].is_array());
    EXPECT_GE(p["current_progress"].get<int>(), last);
    last = p["current_progress"].get<int>();
  }
  EXPECT_EQ(progress.back()["current_progress"], 100);
  EXPECT_EQ(progress.back()["process_running"], false);
  EXPECT_EQ(progress[progress.size() - 2]["process_running"], true);
}

TEST(VisualizeTest, ProgressLogCarriesTheError) {
  TempDir out;
  RunResult r = RunTool({"graph_visualize", "-tp", out / "missing", "-o", out / "o", "-progress_log"});
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(Lines(r.err).size(), 1u) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_FALSE(lines.empty());
  Json last = Json::parse(lines.back().substr(10));
  EXPECT_EQ(last["process_running"], false);
  ASSERT_EQ(last["error_msg"].size(), 1u);
  EXPECT_NE(last["error_msg"][0].get<std::string>().find(out / "missing"), std::string::npos);
}

TEST(VisualizeTest, TensorLogPrintsEachComparedNode) {
  TempDir out;
  RunResult r;
  Visualize({"-tp", Sample("gpt_tensor/npu/step0/rank0"), "-gp", Sample("gpt_tensor/bench/step0/rank0"), "-tensor_log"},
            out / "o", &r);
  int compared = 0;
  for (const std::string& line : Lines(r.out)) compared += line.find("] Compare result: precision_index ") != std::string::npos;
  EXPECT_GT(compared, 100);
}

TEST(VisualizeTest, EqualsFormOfLongFlags) {
  TempDir out;
  std::vector<std::string> files =
      Visualize({"--target_path=" + Sample("l1_api/npu/step0"), "--file_type=db"}, out / "o");
  EXPECT_EQ(files.size(), 1u);
}

struct BadCase {
  std::string name;
  std::vector<std::string> args;  // after graph_visualize -o OUT
  std::vector<std::string> parts;
};
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }
class VisualizeErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(VisualizeErrorTest, OneLineExitTwoNothingWritten) {
  TempDir out;
  std::vector<std::string> args = {"graph_visualize", "-o", out / "o"};
  for (const std::string& a : GetParam().args) args.push_back(a.rfind("@", 0) == 0 ? Sample(a.substr(1)) : a);
  RunResult r = RunTool(args);
  ExpectOneError(r, GetParam().parts);
  EXPECT_TRUE(Files(out / "o").empty());
}

INSTANTIATE_TEST_SUITE_P(
    Samples, VisualizeErrorTest,
    ::testing::Values(
        BadCase{"no_target", {"-gp", "@cnn_statistics/bench"}, {"-tp/--target_path and -o/--output_path are required"}},
        BadCase{"missing_dir", {"-tp", "/nonexistent/dump"}, {"/nonexistent/dump", "cannot open"}},
        BadCase{"target_is_file", {"-tp", "@cnn_statistics/build.json"}, {"build.json", "found a file"}},
        BadCase{"layouts_differ",
                {"-tp", "@cnn_statistics/npu", "-gp", "@cnn_statistics/bench/step0/rank0"},
                {"directory structures", "inconsistent"}},
        BadCase{"json_with_golden",
                {"-tp", "@cnn_statistics/npu", "-gp", "@cnn_statistics/bench", "--file_type", "json"},
                {"--file_type json", "comparison mode"}},
        BadCase{"file_type_json_with_db",
                {"-tp", "@parallel_merge/npu/step0", "--rank_size", "4", "--tp", "2", "--pp", "2", "--file_type", "json",
                 "--output_format", "db"},
                {"--file_type json", "--output_format db"}},
        BadCase{"bad_file_type", {"-tp", "@cnn_statistics/npu", "--file_type", "csv"}, {"--file_type takes db or json"}},
        BadCase{"fuzzy_build", {"-tp", "@cnn_statistics/npu", "-fm"}, {"-fm", "-gp/--golden_path"}},
        BadCase{"fuzzy_and_mapping",
                {"-tp", "@cnn_statistics/npu", "-gp", "@cnn_statistics/bench", "-fm", "-lm"},
                {"cannot be used together"}},
        BadCase{"bad_tp", {"-tp", "@parallel_merge/npu/step0", "--rank_size", "4", "--tp", "two", "--pp", "2"}, {"--tp takes integers, got 'two'"}},
        BadCase{"merge_missing_pp", {"-tp", "@parallel_merge/npu/step0", "--rank_size", "4", "--tp", "2"}, {"--pp", "missing"}},
        BadCase{"unknown_flag", {"-tp", "@cnn_statistics/npu", "-i", "compare.json"}, {"unknown option '-i'"}}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

}  // namespace
}  // namespace graph_ascend
