// End to end on the samples: which nodes match with and without -f and -lm
// (reference §6.3.2, §6.3.3), cross-rank links of a batch run (§8) as
// `export` and `info` show them, `info`'s first divergence, and the flag and
// yaml errors. Match counts and links are msprobe 8.1.2's on the same
// samples, plus the gradient nodes it drops (docs/COMPATIBILITY.md C-pgrad).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"
#include "test_util.h"

namespace graph_ascend {
namespace {

namespace fs = std::filesystem;
using graph_ascend::testing::Batch;
using graph_ascend::testing::DumpJson;
using graph_ascend::testing::ExpectOneError;
using graph_ascend::testing::Export;
using graph_ascend::testing::Files;
using graph_ascend::testing::Graph;
using graph_ascend::testing::InfoLine;
using graph_ascend::testing::Json;
using graph_ascend::testing::Lines;
using graph_ascend::testing::P2POp;
using graph_ascend::testing::ReadFile;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::Sample;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteDumpDir;
using graph_ascend::testing::WriteFile;

using Pairs = std::map<std::string, std::string>;

// NPU node -> the Bench node it is matched with. Each link is the peer's
// ancestors and the peer (§6.3.2, §6.3.3), on both sides.
Pairs MatchPairs(const Json& doc) {
  Pairs out;
  const Json& npu = doc["NPU"]["node"];
  const Json& bench = doc["Bench"]["node"];
  for (auto& [name, node] : npu.items()) {
    const Json& link = node["matched_node_link"];
    if (link.empty()) continue;
    const std::string peer = link.back().get<std::string>();
    out[name] = peer;
    if (!bench.contains(peer)) {
      ADD_FAILURE() << name << " is matched with " << peer << ", which Bench does not have";
      continue;
    }
    EXPECT_EQ(link.size() >= 2 ? link[link.size() - 2].get<std::string>() : "None", bench[peer]["upnode"])
        << name << ": the link ends with the peer's parent and the peer";
    const Json& back = bench[peer]["matched_node_link"];
    EXPECT_FALSE(back.empty()) << peer << " does not link back to " << name;
    if (!back.empty()) {
      EXPECT_EQ(back.back(), name) << peer;
    }
  }
  return out;
}

int CountPeers(const Json& side) {
  int n = 0;
  for (auto& [name, node] : side["node"].items()) n += !node["matched_node_link"].empty();
  return n;
}

// Runs a compare of `sample` with `flags` and exports its one file.
Json CompareSample(const std::string& sample, const std::vector<std::string>& flags, std::string* vis = nullptr) {
  TempDir out;
  std::vector<std::string> files = Graph(Sample(sample + "/compare.json"), out / "o", flags);
  EXPECT_EQ(files.size(), 1u);
  if (files.size() != 1) return Json::object();
  if (vis != nullptr) {
    RunResult info = RunTool({"info", files[0]});
    EXPECT_EQ(info.status, 0) << info.err;
    *vis = info.out;
  }
  return Export(files[0]);
}

// ---------------------------------------------------------------- -f, -lm

// samples/layer_mapping: a Megatron-style GPT (npu) against the same model
// in Hugging Face names (bench).
const std::string kYaml = "layer_mapping/layer_mapping.yaml";

TEST(LayerMappingSampleTest, DefaultAndFuzzyMatchOnlyTheSameNames) {
  const Pairs same = {{"DefaultModel", "DefaultModel"},
                      {"optimizer", "optimizer"},
                      {"Apis_Between_Modules.0", "Apis_Between_Modules.0"},
                      {"Tensor.add_.0.forward", "Tensor.add_.0.forward"}};
  Json plain = CompareSample("layer_mapping", {});
  EXPECT_EQ(plain["NPU"]["node"].size(), 283u);
  EXPECT_EQ(plain["Bench"]["node"].size(), 325u);
  EXPECT_EQ(MatchPairs(plain), same);
  Json fuzzy = CompareSample("layer_mapping", {"-f"});
  EXPECT_EQ(MatchPairs(fuzzy), same) << "-f ignores call counts, not module names";
  EXPECT_EQ(CountPeers(fuzzy["Bench"]), 4);
}

TEST(LayerMappingSampleTest, WithTheYaml) {
  std::string info;
  Json doc = CompareSample("layer_mapping", {"-lm", Sample(kYaml)}, &info);
  Pairs pairs = MatchPairs(doc);
  // msprobe 8.1.2: 230 pairs; and the 15 gradient nodes it does not build.
  int gradients = 0;
  for (auto& [npu, bench] : pairs) gradients += npu.find(".parameters_grad.") != std::string::npos;
  EXPECT_EQ(gradients, 15);
  EXPECT_EQ(pairs.size(), 230u + 15);
  EXPECT_EQ(CountPeers(doc["Bench"]), 245);
  EXPECT_EQ(InfoLine(info, "  matched"), "  matched 245, unmatched 38");

  const Pairs expected = {
      {"Module.embedding.word_embeddings.Embedding.forward.0", "Module.model.embed_tokens.Embedding.forward.0"},
      {"Module.rotary_pos_emb.RotaryEmbedding.forward.0", "Module.model.rotary_emb.LlamaRotaryEmbedding.forward.0"},
      {"Module.decoder.TransformerBlock.forward.0", "Module.model.LlamaModel.forward.0"},
      {"Module.decoder.layers.0.self_attention.linear_qkv.ColumnParallelLinear.forward.0",
       "Module.model.layers.0.self_attn.q_proj.Linear.forward.0"},
      {"Module.decoder.layers.0.pre_mlp_layernorm.RMSNorm.forward.0",
       "Module.model.layers.0.post_attention_layernorm.LlamaRMSNorm.forward.0"},
      {"Module.decoder.layers.1.mlp.linear_fc1.ColumnParallelLinear.backward.0",
       "Module.model.layers.1.mlp.gate_proj.Linear.backward.0"},
      {"Module.decoder.final_layernorm.RMSNorm.forward.0", "Module.model.norm.LlamaRMSNorm.forward.0"},
      {"Module.output_layer.ColumnParallelLinear.forward.0", "Module.lm_head.Linear.forward.0"},
      {"Module.output_layer.ColumnParallelLinear.parameters_grad.0", "Module.lm_head.Linear.parameters_grad.0"},
      // APIs by call order in the mapped scope: linear_fc2's linear is
      // down_proj's, RMSNorm's first multiplication is LlamaRMSNorm's.
      {"Functional.linear.3.forward", "Functional.linear.6.forward"},
      {"Tensor.__mul__.0.forward", "Tensor.__mul__.2.forward"},
      {"Module.decoder.layers.0.input_layernorm.RMSNorm.forward.0",
       "Module.model.layers.0.input_layernorm.LlamaRMSNorm.forward.0"},
      {"DefaultModel", "DefaultModel"},
  };
  for (auto& [npu, bench] : expected) EXPECT_EQ(pairs[npu], bench) << npu;
  // No counterpart at the mapped scope: unmatched, whatever Bench calls its nodes.
  for (const char* alone : {"Module.embedding.LanguageModelEmbedding.forward.0",
                            "Module.decoder.layers.0.self_attention.core_attention.DotProductAttention.forward.0",
                            "Functional.scaled_dot_product_attention.0.forward"}) {
    EXPECT_EQ(pairs.count(alone), 0u) << alone;
  }
}

// A bare -lm maps by scope and call order without renames: here only names
// outside the renamed modules (top-level and optimizer calls) find a peer.
TEST(LayerMappingSampleTest, BareLayerMapping) {
  Json doc = CompareSample("layer_mapping", {"-lm"});
  Pairs pairs = MatchPairs(doc);
  EXPECT_EQ(pairs.size(), 67u);
  for (auto& [npu, bench] : pairs) {
    EXPECT_EQ(npu, bench);
    EXPECT_NE(npu.rfind("Module.", 0), 0u) << npu;
  }
  EXPECT_EQ(pairs.count("Torch.cat.0.forward"), 1u);
  EXPECT_EQ(pairs.count("Functional.cross_entropy.0.backward"), 1u);
}

// Where every name agrees, -f pairs exactly what default matching pairs.
class FuzzySampleTest : public ::testing::TestWithParam<std::pair<std::string, size_t>> {};

TEST_P(FuzzySampleTest, SamePairsAsDefault) {
  const auto& [sample, nodes] = GetParam();
  Pairs plain = MatchPairs(CompareSample(sample, {}));
  Pairs fuzzy = MatchPairs(CompareSample(sample, {"-f"}));
  EXPECT_EQ(plain.size(), nodes);
  EXPECT_EQ(fuzzy, plain);
}

INSTANTIATE_TEST_SUITE_P(Samples, FuzzySampleTest,
                         ::testing::Values(std::make_pair(std::string("gpt_statistics"), size_t{667 + 30}),
                                           std::make_pair(std::string("cnn_statistics"), size_t{412 + 24})),
                         [](const auto& info) { return info.param.first; });

// ---------------------------------------------------------------- §8 links

// The exported graphs of a batch run by "stepN_rankM" (or "rankM"), and
// what `info` printed for each.
struct BatchRun {
  std::map<std::string, Json> docs;
  std::map<std::string, std::string> info;
};

BatchRun RunBatch(const std::string& config, const std::vector<std::string>& flags) {
  TempDir out;
  BatchRun run;
  for (const std::string& file : Graph(config, out / "o", flags)) {
    std::string name = fs::path(file).filename().string();
    // build_step0_rank1_<timestamp>.vis -> "step0_rank1"
    std::string key =
        name.substr(name.find('_') + 1, name.size() - name.find('_') - 1 - std::string("_00000000000000.vis").size());
    run.docs[key] = Export(file);
    RunResult info = RunTool({"info", file});
    EXPECT_EQ(info.status, 0) << info.err;
    run.info[key] = info.out;
  }
  return run;
}

// The graph of one side in a build or compare export.
const Json& SideOf(const Json& doc, const std::string& side) { return doc.contains("NPU") ? doc[side] : doc; }

// Checks every link of `side` in the ranks of `step`: the peer exists in
// its rank's graph with the expected type, links back, and its index
// (index_of(peer node)) is the one shown. Returns the linked nodes per rank.
std::map<int, int> CheckLinks(const BatchRun& run, const std::string& step, const std::string& side,
                              const std::function<std::string(const Json&)>& index_of) {
  std::map<int, int> linked;
  auto graph_of = [&](int rank) -> const Json* {
    auto it = run.docs.find((step.empty() ? "" : step + "_") + "rank" + std::to_string(rank));
    return it == run.docs.end() ? nullptr : &SideOf(it->second, side)["node"];
  };
  for (int rank = 0; graph_of(rank) != nullptr; ++rank) {
    for (auto& [name, node] : graph_of(rank)->items()) {
      if (!node.contains("matched_distributed")) continue;
      ++linked[rank];
      const Json& link = node["matched_distributed"];
      const size_t dot = name.find('.');
      const std::string api = name.substr(dot + 1, name.find('.', dot + 1) - dot - 1);
      const char* type = api == "send" ? "send" : api == "recv" ? "receive" : "send_receive";
      if (api != "batch_isend_irecv") {
        EXPECT_EQ(link["communications_type"], type) << name;
      }
      EXPECT_EQ(link["nodes_info"].size(), 1u) << name << ": one peer rank";
      for (auto& [peer_rank, info] : link["nodes_info"].items()) {
        const Json* peers = graph_of(std::stoi(peer_rank));
        const std::string peer = info[1].get<std::string>();
        if (peers == nullptr || !peers->contains(peer)) {
          ADD_FAILURE() << name << " -> rank " << peer_rank << " " << peer << ": no such node";
          continue;
        }
        EXPECT_EQ(info[0], index_of((*peers)[peer])) << name << " -> " << peer;
        const Json& back = (*peers)[peer]["matched_distributed"]["nodes_info"];
        EXPECT_EQ(back[std::to_string(rank)][1], name) << peer << " links back";
      }
    }
  }
  return linked;
}

// str() of a node's precision index as msprobe prints it: "0", "0.5", "Nan".
std::string PrecisionIndexText(const Json& node) {
  if (!node["data"].contains("precision_index")) return "Nan";
  const Json& p = node["data"]["precision_index"];
  return p.is_number_integer() ? std::to_string(p.get<int64_t>()) : p.dump();
}
std::string OverflowText(const Json& node) {
  return node["data"].contains("overflow_level") ? node["data"]["overflow_level"].get<std::string>() : "Nan";
}

// dist_gloo: rank 0 send()s rank 1 its shard (recv on rank 1), then seven
// all_reduce calls over the group of both ranks, in each of two steps.
TEST(DistributedLinkTest, CompareBatch) {
  BatchRun run = RunBatch(Sample("dist_gloo/batch.json"), {});
  ASSERT_EQ(run.docs.size(), 4u);
  for (const std::string step : {"step0", "step1"}) {
    for (const std::string side : {"NPU", "Bench"}) {
      std::map<int, int> linked = CheckLinks(run, step, side, PrecisionIndexText);
      EXPECT_EQ(linked, (std::map<int, int>{{0, 8}, {1, 8}})) << step << " " << side;
    }
    for (const std::string rank : {"_rank0", "_rank1"}) {
      const std::string& info = run.info[step + rank];
      std::vector<std::string> lines = Lines(info);
      EXPECT_EQ(std::count(lines.begin(), lines.end(), "  nodes linked across ranks: 8"), 2) << "NPU and Bench:\n"
                                                                                             << info;
    }
  }
  // The values of msprobe 8.1.2: the peer's precision index in the NPU
  // graph, "Nan" in Bench (Bench nodes have none).
  const Json& rank0 = run.docs["step0_rank0"];
  EXPECT_EQ(
      rank0["NPU"]["node"]["Distributed.send.0.forward"]["matched_distributed"],
      Json::parse(R"({"communications_type": "send", "nodes_info": {"1": ["0", "Distributed.recv.0.forward"]}})"));
  EXPECT_EQ(
      run.docs["step0_rank1"]["NPU"]["node"]["Distributed.recv.0.forward"]["matched_distributed"],
      Json::parse(R"({"communications_type": "receive", "nodes_info": {"0": ["0", "Distributed.send.0.forward"]}})"));
  const Json& ar = rank0["NPU"]["node"]["Distributed.all_reduce.1.forward"]["matched_distributed"];
  EXPECT_EQ(ar["communications_type"], "send_receive");
  EXPECT_EQ(ar["nodes_info"]["1"], Json::array({"0.5", "Distributed.all_reduce.1.forward"}));
  EXPECT_EQ(rank0["NPU"]["node"]["Distributed.all_reduce.6.forward"]["matched_distributed"]["nodes_info"]["1"][0],
            "0.0005439318636507684");
  EXPECT_EQ(rank0["Bench"]["node"]["Distributed.all_reduce.0.forward"]["matched_distributed"]["nodes_info"]["1"],
            Json::array({"Nan", "Distributed.all_reduce.0.forward"}));
  EXPECT_EQ(InfoLine(run.info["step0_rank0"], "first divergence"),
            "first divergence, in execution order: Distributed.all_reduce.0.forward (api, index 1)");
  EXPECT_EQ(InfoLine(run.info["step0_rank1"], "first divergence"),
            "first divergence, in execution order: Functional.layer_norm.0.forward (api, index 0.75)");
  // Across ranks: rank 0's first divergence is a collective that receives from rank 1.
  EXPECT_EQ(InfoLine(run.info["step0_rank0"], "  it receives from"),
            "  it receives from rank 1: the divergence may come from there");
  EXPECT_EQ(InfoLine(run.info["step0_rank1"], "  it receives from"), "<no line starting with '  it receives from'>");
}

TEST(DistributedLinkTest, BuildBatch) {
  TempDir dir;
  WriteFile(dir / "build.json", R"({"npu_path": ")" + Sample("dist_gloo/npu") + "\"}");
  BatchRun run = RunBatch(dir / "build.json", {});
  ASSERT_EQ(run.docs.size(), 4u);
  for (const std::string step : {"step0", "step1"}) {
    std::map<int, int> linked = CheckLinks(run, step, "NPU", [](const Json&) { return std::string("Nan"); });
    EXPECT_EQ(linked, (std::map<int, int>{{0, 8}, {1, 8}})) << step;
    EXPECT_EQ(InfoLine(run.info[step + "_rank1"], "  nodes linked"), "  nodes linked across ranks: 8");
  }
}

// samples/parallel_merge's four ranks built as a plain batch (no merge):
// pipeline stages exchange activations and gradients with
// batch_isend_irecv (rank 0 with 2, 1 with 3), tensor-parallel pairs
// all_reduce. msprobe 8.1.2 writes the same links.
TEST(DistributedLinkTest, BatchIsendIrecvBetweenPipelineStages) {
  TempDir dir;
  WriteFile(dir / "build.json", R"({"npu_path": ")" + Sample("parallel_merge/npu") + "\"}");
  BatchRun run = RunBatch(dir / "build.json", {});
  ASSERT_EQ(run.docs.size(), 4u);
  auto nan = [](const Json&) { return std::string("Nan"); };
  EXPECT_EQ(CheckLinks(run, "step0", "NPU", nan), (std::map<int, int>{{0, 6}, {1, 6}, {2, 6}, {3, 6}}));
  auto link = [&](int rank, const std::string& name) {
    return run.docs["step0_rank" + std::to_string(rank)]["node"][name]["matched_distributed"];
  };
  auto expected = [](const std::string& type, int peer, const std::string& name) {
    return Json::parse(R"({"communications_type": ")" + type + R"(", "nodes_info": {")" + std::to_string(peer) +
                       R"(": ["Nan", ")" + name + "\"]}}");
  };
  const std::string b0 = "Distributed.batch_isend_irecv.0.forward", b1 = "Distributed.batch_isend_irecv.1.forward";
  EXPECT_EQ(link(0, b0), expected("send", 2, b0));
  EXPECT_EQ(link(2, b0), expected("receive", 0, b0));
  EXPECT_EQ(link(2, b1), expected("send", 0, b1));
  EXPECT_EQ(link(0, b1), expected("receive", 2, b1));
  EXPECT_EQ(link(3, b0), expected("receive", 1, b0));
  EXPECT_EQ(link(3, "Distributed.all_reduce.0.forward"),
            expected("send_receive", 2, "Distributed.all_reduce.0.forward"));
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(InfoLine(run.info["step0_rank" + std::to_string(rank)], "  nodes linked"),
              "  nodes linked across ranks: 6");
  }
}

// A batch_isend_irecv call with several operations gets a list of links,
// one per operation, in the JSON export (§8.3).
TEST(DistributedLinkTest, SeveralOperationsOfOneBatchAreAList) {
  TempDir dir;
  const std::string b = "Distributed.batch_isend_irecv.0.forward";
  auto rank = [&](int r, const std::string& ops) {
    WriteDumpDir(dir / ("npu/rank" + std::to_string(r)), DumpJson("\"" + b + "\": " + Batch(ops)),
                 "{\"" + b + "\": null}");
  };
  rank(0, P2POp("isend", 1, "pp") + ", " + P2POp("irecv", 1, "pp"));
  rank(1, P2POp("irecv", 0, "pp") + ", " + P2POp("isend", 0, "pp"));
  WriteFile(dir / "build.json", R"({"npu_path": "npu"})");
  BatchRun run = RunBatch(dir / "build.json", {});
  ASSERT_EQ(run.docs.size(), 2u);
  EXPECT_EQ(run.docs["rank0"]["node"][b]["matched_distributed"], Json::parse(R"([
      {"communications_type": "send", "nodes_info": {"1": ["Nan", ")" + b + R"("]}},
      {"communications_type": "receive", "nodes_info": {"1": ["Nan", ")" + b +
                                                                             R"("]}}])"));
  EXPECT_EQ(run.docs["rank1"]["node"][b]["matched_distributed"], Json::parse(R"([
      {"communications_type": "receive", "nodes_info": {"0": ["Nan", ")" + b +
                                                                             R"("]}},
      {"communications_type": "send", "nodes_info": {"0": ["Nan", ")" + b + R"("]}}])"));
  EXPECT_EQ(InfoLine(run.info["rank0"], "  nodes linked"), "  nodes linked across ranks: 1");
}

// With -oc the index shown is the peer's overflow level. dist_gloo has no
// overflow, so rank 1's first all_reduce gets an infinite output in a copy.
TEST(DistributedLinkTest, OverflowCheckShowsOverflowLevels) {
  TempDir dir;
  for (const char* side : {"npu", "bench"}) {
    fs::create_directories(dir / side);
    fs::copy(Sample(std::string("dist_gloo/") + side + "/step0"), dir / (std::string(side) + "/step0"),
             fs::copy_options::recursive);
  }
  const std::string dump_path = dir / "npu/step0/rank1/dump.json";
  std::string dump = ReadFile(dump_path);
  size_t at = dump.find("\"Distributed.all_reduce.0.forward\"");
  ASSERT_NE(at, std::string::npos);
  at = dump.find("\"Max\": ", dump.find("\"output\"", at)) + 7;
  dump.replace(at, dump.find(',', at) - at, "Infinity");
  WriteFile(dump_path, dump);
  WriteFile(dir / "batch.json", R"({"npu_path": "npu", "bench_path": "bench"})");

  BatchRun run = RunBatch(dir / "batch.json", {"-oc"});
  ASSERT_EQ(run.docs.size(), 2u);
  for (const std::string side : {"NPU", "Bench"}) {
    EXPECT_EQ(CheckLinks(run, "step0", side, OverflowText), (std::map<int, int>{{0, 8}, {1, 8}})) << side;
  }
  const Json& rank0 = run.docs["step0_rank0"]["NPU"]["node"];
  const Json& rank1 = run.docs["step0_rank1"]["NPU"]["node"];
  EXPECT_EQ(rank0["Distributed.all_reduce.0.forward"]["matched_distributed"]["nodes_info"]["1"][0], "critical");
  EXPECT_EQ(rank1["Distributed.all_reduce.0.forward"]["data"]["overflow_level"], "critical");
  EXPECT_EQ(rank1["Distributed.all_reduce.0.forward"]["matched_distributed"]["nodes_info"]["0"][0], "Nan");
  EXPECT_EQ(rank0["Distributed.send.0.forward"]["matched_distributed"]["nodes_info"]["1"][0], "Nan");
}

// ---------------------------------------------------------------- info

// `graph-ascend info` names where the runs part: the first entry of the
// divergence ranking (docs/DIVERGENCE.md; samples/README.md culprits).
class FirstDivergenceTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(FirstDivergenceTest, InfoNamesTheCulprit) {
  std::string info;
  CompareSample(GetParam().first, {}, &info);
  EXPECT_EQ(InfoLine(info, "first divergence"), "first divergence, in execution order: " + GetParam().second) << info;
}

INSTANTIATE_TEST_SUITE_P(
    Samples, FirstDivergenceTest,
    ::testing::Values(std::make_pair(std::string("cnn_statistics"), std::string("Functional.batch_norm.6.forward (api, "
                                                                                "index 0.25)")),
                      std::make_pair(std::string("gpt_statistics"),
                                     std::string("Functional.linear.11.forward (api, index 0.00248837)")),
                      std::make_pair(std::string("overflow_nan"), std::string("Torch.exp.1.forward (api, index 1)")),
                      std::make_pair(std::string("gpt_tensor"),
                                     std::string("Tensor.__add__.10.forward (api, index 1)")),
                      // The misses of the former rule (docs/DIVERGENCE.md): a renamed activation
                      // class, and a module whose own APIs are unmatched.
                      std::make_pair(std::string("renamed_act"),
                                     std::string("Module.blocks.1.act.GELU.forward.0 (module, unmatched)")),
                      std::make_pair(std::string("handwritten_norm"),
                                     std::string("Module.blocks.1.norm.LayerNorm.forward.0 (module, index 0.5)"))),
    [](const auto& info) { return info.param.first; });

// ---------------------------------------------------------------- errors

// Flags that do not fit, a yaml that does not parse or names nothing: one
// message, exit status 2, no .vis written (out/ holds a file of the user's).
class MatchFlagErrorTest : public ::testing::Test {
 protected:
  void SetUp() override { WriteFile(dir_ / "out/keep.txt", "a file of the user's"); }
  void ExpectFailure(const std::string& config, const std::vector<std::string>& flags,
                     const std::vector<std::string>& parts) {
    std::vector<std::string> args = {"graph", "-i", config, "-o", dir_ / "out"};
    args.insert(args.end(), flags.begin(), flags.end());
    ExpectOneError(RunTool(args), parts);
    EXPECT_EQ(Files(dir_ / "out"), std::vector<std::string>{"keep.txt"});
  }
  std::string Yaml(const std::string& text) {
    WriteFile(dir_ / "mapping.yaml", text);
    return dir_ / "mapping.yaml";
  }

  TempDir dir_;
  const std::string compare_ = Sample("layer_mapping/compare.json");
  const std::string build_ = Sample("layer_mapping/build.json");
};

TEST_F(MatchFlagErrorTest, FuzzyWithLayerMapping) {
  ExpectFailure(compare_, {"-f", "-lm", Sample(kYaml)}, {"-f", "-lm", "cannot be used together"});
  ExpectFailure(compare_, {"-lm", "-f"}, {"-f", "-lm", "cannot be used together"});
}

TEST_F(MatchFlagErrorTest, MatchingFlagsOnABuild) {
  ExpectFailure(build_, {"-f"}, {build_, "-f", "bench_path"});
  ExpectFailure(build_, {"-lm"}, {build_, "-lm", "bench_path"});
  ExpectFailure(build_, {"-lm", Sample(kYaml)}, {build_, "-lm", "bench_path"});
}

TEST_F(MatchFlagErrorTest, YamlThatDoesNotParse) {
  const std::string yaml = Yaml("TopLayer:\n  decoder: [model\n  output_layer: lm_head\n");
  ExpectFailure(compare_, {"-lm", yaml}, {yaml + ": line ", "cannot parse"});
  const std::string list = Yaml("- TopLayer\n- decoder\n");
  ExpectFailure(compare_, {"-lm", list}, {list, "map"});
}

TEST_F(MatchFlagErrorTest, YamlThatNamesNothing) {
  const std::string yaml = Yaml("GPTModel:\n  decoder: encoder\n");
  ExpectFailure(compare_, {"-lm", yaml}, {yaml, "none of the 1 entries"});
  // In a batch run too, on the first rank; nothing of the run stays.
  ExpectFailure(Sample("dist_gloo/batch.json"), {"-lm", yaml}, {yaml, "none of the 1 entries"});
}

TEST_F(MatchFlagErrorTest, MissingYaml) {
  ExpectFailure(compare_, {"-lm", dir_ / "absent.yaml"}, {dir_ / "absent.yaml", "not found"});
}

}  // namespace
}  // namespace graph_ascend
