// Parallel merge (reference §9): parameters and their validation (§9.1),
// strategies (§9.2), rank groups (§9.3), API collections across ranks
// (§9.4), PP (§9.5), TP (§9.6) and VPP (§9.7) merges on hand-made ranks, the
// groups of the real 4-rank sample, and end to end through bin/graph-ascend
// on samples/parallel_merge (a tp=2 x pp=2 torchrun job against the same
// model unsplit). The expected merged graphs are what msprobe 8.3.3 writes
// for the same inputs (bench/reference/crosscheck_merge.py), except for the
// documented differences noted where they show.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "base/py_format.h"
#include "cli_runner.h"
#include "graph/graph_builder.h"
#include "merge/graph_merger.h"
#include "merge/statistics.h"
#include "plan/parallel_params.h"
#include "test_files.h"
#include "vis/vis_file.h"
#include "vis_writer/graph_writer.h"

namespace graph_ascend {
namespace {

namespace fs = std::filesystem;
using merge::MergedSide;
using merge::MergeRanks;
using merge::ParallelParams;
using merge::RankGroups;
using merge::RankSide;
using merge::Stat;
using testing::DumpJson;
using testing::Export;
using testing::Files;
using testing::Graph;
using testing::Json;
using testing::Lines;
using testing::RunResult;
using testing::RunTool;
using testing::Sample;
using testing::TempDir;
using testing::Tensor;
using testing::WriteDumpDir;
using testing::WriteFile;

ParallelParams Params(int rank_size, int tp, int pp, int vpp = 1, std::string order = "tp-cp-ep-dp-pp") {
  ParallelParams p;
  p.rank_size = rank_size;
  p.tp = tp;
  p.pp = pp;
  p.vpp = vpp;
  p.order = std::move(order);
  p.file = "compare.json";
  return p;
}

// ---------------------------------------------------------------- §9.3 groups

TEST(RankGroupsTest, MegatronDefaultGroups) {
  auto a = merge::MakeDefaultGroups(Params(8, 4, 2));
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  EXPECT_EQ(a->tp, (RankGroups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(a->pp, (RankGroups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  auto b = merge::MakeDefaultGroups(Params(8, 2, 2));
  ASSERT_TRUE(b.ok()) << b.error().ToString();
  EXPECT_EQ(b->tp, (RankGroups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(b->pp, (RankGroups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  auto c = merge::MakeDefaultGroups(Params(12, 2, 3));
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->pp, (RankGroups{{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 11}}));
}

TEST(RankGroupsTest, OrderPlacesDataParallelism) {
  auto g = merge::MakeDefaultGroups(Params(8, 2, 2, 1, "tp-pp-dp"));
  ASSERT_TRUE(g.ok()) << g.error().ToString();
  EXPECT_EQ(g->tp, (RankGroups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(g->pp, (RankGroups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
}

TEST(RankGroupsTest, RankSizeNotDivisibleByTpTimesPpIsAnError) {
  auto g = merge::MakeDefaultGroups(Params(8, 2, 3));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().where, "key parallel_merge.npu.rank_size");
  EXPECT_NE(g.error().message.find("not divisible by tp * pp (2 x 3)"), std::string::npos) << g.error().message;
  Status st = merge::ValidateParallelParams(Params(8, 2, 3), 8, "npu");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().where, "key parallel_merge.npu.pp");
  EXPECT_EQ(st.error().message, "rank_size 8 is not divisible by pp 3");
  // Each of tp and pp divides 12, their product does not.
  st = merge::ValidateParallelParams(Params(12, 2, 4), 12, "npu");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("not divisible by tp * pp"), std::string::npos) << st.error().message;
}

TEST(RankGroupsTest, OrderMustNameEveryDimensionLargerThanOne) {
  auto g = merge::MakeDefaultGroups(Params(8, 2, 2, 1, "tp-pp"));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().where, "key parallel_merge.npu.order");
  EXPECT_NE(g.error().message.find("does not name dp, whose size is 2"), std::string::npos) << g.error().message;
  EXPECT_FALSE(merge::MakeDefaultGroups(Params(4, 2, 2, 1, "tp-ep-pp-dp")).ok()) << "ep and dp must be adjacent";
  EXPECT_FALSE(merge::MakeDefaultGroups(Params(4, 2, 2, 1, "tp-pp-dp-xx")).ok()) << "unknown dimension";
  EXPECT_TRUE(merge::MakeDefaultGroups(Params(4, 2, 2, 1, "tp-pp")).ok()) << "dp = 1 may be left out";
}

TEST(RankGroupsTest, PipelineChainsFollowTheSends) {
  EXPECT_EQ(merge::TraceP2PChains({{0, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}, {6, 4}, {7, 5}}),
            (RankGroups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // Activations forward, gradients back: each stage sends to the other.
  EXPECT_EQ(merge::TraceP2PChains({{0, 2}, {1, 3}, {2, 0}, {3, 1}}), (RankGroups{{0, 2}, {1, 3}}));
  EXPECT_EQ(merge::TraceP2PChains({{0, 1}}), (RankGroups{{0}}));
  EXPECT_EQ(merge::TraceP2PChains({}), RankGroups{});
}

// ---------------------------------------------------------------- §9.1, §9.2

TEST(ParallelParamsTest, Validation) {
  struct Case {
    ParallelParams p;
    size_t folders;
    std::string where, message;
  };
  ParallelParams missing = Params(4, 2, 2);
  missing.tp = 0;
  ParallelParams flags = Params(4, 8, 1);
  flags.from_flags = true;
  flags.file = "";
  flags.side = "bench";
  const Case cases[] = {
      {missing, 4, "key parallel_merge.npu.tp", "missing: parallel merge needs rank_size, tp and pp"},
      {Params(3, 1, 1), 4, "key parallel_merge.npu.rank_size", "is 3 but npu has 4 rank folders"},
      {Params(4, 8, 1), 4, "key parallel_merge.npu.tp", "tp (8) must not exceed rank_size (4)"},
      {flags, 4, "flag --tp (bench value)", "tp (8) must not exceed rank_size (4)"},
      {Params(4, 1, 8), 4, "key parallel_merge.npu.pp", "pp (8) must not exceed rank_size (4)"},
      {Params(4, 3, 1), 4, "key parallel_merge.npu.tp", "rank_size 4 is not divisible by tp 3"},
      {Params(4, 4, 4), 4, "key parallel_merge.npu.pp", "tp * pp (16) must not exceed rank_size (4)"},
      {Params(4, 4, 1, 2), 4, "key parallel_merge.npu.vpp", "vpp > 1 (virtual pipeline) needs pp > 1"},
      {Params(4, 2, 2, 1, "TP-PP"), 4, "key parallel_merge.npu.order", "must consist of lowercase letters"},
  };
  for (const Case& c : cases) {
    Status st = merge::ValidateParallelParams(c.p, c.folders, "npu");
    ASSERT_FALSE(st.ok()) << c.message;
    EXPECT_EQ(st.error().file, c.p.from_flags ? "" : "compare.json");
    EXPECT_EQ(st.error().where, c.where);
    EXPECT_NE(st.error().message.find(c.message), std::string::npos) << st.error().message;
  }
  EXPECT_TRUE(merge::ValidateParallelParams(Params(4, 2, 2), 4, "npu").ok());
  EXPECT_TRUE(merge::ValidateParallelParams(Params(4, 1, 4, 2), 4, "npu").ok());
}

TEST(ParallelParamsTest, Strategy) {
  using merge::Strategy;
  EXPECT_EQ(merge::SelectStrategy(Params(1, 1, 1)), Strategy::kNoParallel);
  EXPECT_EQ(merge::SelectStrategy(Params(8, 8, 1)), Strategy::kTp);
  EXPECT_EQ(merge::SelectStrategy(Params(8, 1, 8)), Strategy::kPp);
  EXPECT_EQ(merge::SelectStrategy(Params(8, 1, 8, 2)), Strategy::kVpp);
  EXPECT_EQ(merge::SelectStrategy(Params(8, 4, 1)), Strategy::kTp);
  EXPECT_EQ(merge::SelectStrategy(Params(8, 1, 4)), Strategy::kPp);
  EXPECT_EQ(merge::SelectStrategy(Params(8, 1, 4, 2)), Strategy::kVpp);
  EXPECT_EQ(merge::SelectStrategy(Params(8, 4, 2)), Strategy::kTpPp);
  EXPECT_EQ(merge::SelectStrategy(Params(8, 2, 2)), Strategy::kFull);
}

// ---------------------------------------------------------------- §9.5, §9.6 statistics

dump::Value Int(int64_t i) {
  dump::Value v;
  v.kind = dump::ValueKind::kInteger;
  v.integer = i;
  return v;
}

dump::Value Float(double d) {
  dump::Value v;
  v.kind = dump::ValueKind::kNumber;
  v.number = d;
  return v;
}

TEST(MergeStatTest, FormulasAsMsprobeWritesThem) {
  std::vector<std::string> info;
  dump::Value merged;
  ASSERT_TRUE(merge::MergeStat(Stat::kMax, "input.0", {Int(1), Int(2)}, &merged, &info));
  EXPECT_EQ(merged.kind, dump::ValueKind::kInteger);
  EXPECT_EQ(int64_t{merged.integer}, 2);
  ASSERT_TRUE(merge::MergeStat(Stat::kMin, "input.0", {Float(-1.5), Int(-1)}, &merged, &info));
  EXPECT_EQ(double{merged.number}, -1.5);
  ASSERT_TRUE(merge::MergeStat(Stat::kMean, "input.0", {Float(0.5), Float(0.7)}, &merged, &info));
  EXPECT_EQ(merged.kind, dump::ValueKind::kNumber);
  EXPECT_DOUBLE_EQ(double{merged.number}, 0.6);
  ASSERT_TRUE(merge::MergeStat(Stat::kNorm, "output.0", {Int(3), Int(4)}, &merged, &info));
  EXPECT_EQ(double{merged.number}, 5.0);
  ASSERT_TRUE(merge::MergeStat(Stat::kMean, "parameters.weight", {Int(1), Int(2), Int(4)}, &merged, &info));
  EXPECT_EQ(info, (std::vector<std::string>{
                      "The Max value merging method for input.0 is: max(1, 2) = 2",
                      "The Min value merging method for input.0 is: min(-1.5, -1) = -1.5",
                      "The Mean value merging method for input.0 is: (0.5 + 0.7) / 2 = 0.6",
                      "The Norm value merging method for output.0 is: (3 ** 2 + 4 ** 2) ** 0.5 = 5.0",
                      "The Mean value merging method for parameters.weight is: (1 + 2 + 4) / 3 = 2.3333333333333335",
                  }));
}

TEST(MergeStatTest, NanAndTheFirstOfEqualValues) {
  std::vector<std::string> info;
  dump::Value merged;
  // Python's max keeps the first value unless a later one is strictly greater.
  ASSERT_TRUE(merge::MergeStat(Stat::kMax, "input.0", {Float(NAN), Float(1)}, &merged, &info));
  EXPECT_TRUE(std::isnan(merged.number));
  ASSERT_TRUE(merge::MergeStat(Stat::kMax, "input.0", {Float(1), Float(NAN)}, &merged, &info));
  EXPECT_EQ(double{merged.number}, 1);
  ASSERT_TRUE(merge::MergeStat(Stat::kMax, "input.0", {Int(2), Float(2.0)}, &merged, &info));
  EXPECT_EQ(merged.kind, dump::ValueKind::kInteger);
  EXPECT_EQ(info[0], "The Max value merging method for input.0 is: max(nan, 1.0) = nan");
  EXPECT_EQ(info[2], "The Max value merging method for input.0 is: max(2, 2.0) = 2");
}

TEST(MergeStatTest, ANonNumberIsNotMerged) {
  std::vector<std::string> info;
  dump::Value merged = Int(7);
  EXPECT_FALSE(merge::MergeStat(Stat::kMax, "input.0", {Int(1), dump::Value()}, &merged, &info));
  EXPECT_FALSE(merge::MergeStat(Stat::kMax, "input.0", {Int(1)}, &merged, &info));
  EXPECT_EQ(int64_t{merged.integer}, 7);
  EXPECT_TRUE(info.empty());
}

TEST(SameValueTest, RelativeThresholdForMeanAndNorm) {
  EXPECT_TRUE(merge::SameValue(Float(1.0), Float(1.0 + 1e-8), true));
  EXPECT_FALSE(merge::SameValue(Float(1.0), Float(1.1), true));
  EXPECT_FALSE(merge::SameValue(Float(1.0), Float(1.0 + 1e-8), false)) << "Max and Min compare exactly";
  EXPECT_TRUE(merge::SameValue(Float(0), Float(1e-7), true)) << "absolute threshold at 0";
  EXPECT_FALSE(merge::SameValue(Float(0), Float(1e-5), true));
  EXPECT_TRUE(merge::SameValue(Float(NAN), Float(NAN), true));
  EXPECT_FALSE(merge::SameValue(Float(NAN), Float(1), true));
  EXPECT_TRUE(merge::SameValue(Int(3), Float(3.0), false));
  EXPECT_TRUE(merge::SameValue(dump::Value(), Float(3.0), false)) << "not a number: same";
}

// ---------------------------------------------------------------- names

TEST(MergeNamesTest, ApiOfAnotherRank) {
  EXPECT_EQ(merge::ApiRankName("Torch.matmul.0.forward", 1), "Torch.matmul_rank1.0.forward");
  EXPECT_EQ(merge::ApiRankName("Tensor.__add__.5.backward", 12), "Tensor.__add___rank12.5.backward");
  EXPECT_EQ(merge::ApiRankName("optimizer", 1), "optimizer");
}

TEST(MergeNamesTest, LayersRenumbered) {
  EXPECT_EQ(merge::RenumberLayers("Module.decoder.layers.0.mlp.MLP.forward.0", "3"),
            "Module.decoder.layers.3.mlp.MLP.forward.0");
  EXPECT_EQ(merge::RenumberLayers("Module.encoder.layer.11.attn.layers.2.x.forward.0", "4"),
            "Module.encoder.layer.4.attn.layers.4.x.forward.0");
  EXPECT_EQ(merge::RenumberLayers("Module.layers.norm.forward.0", "4"), "Module.layers.norm.forward.0");
}

// ---------------------------------------------------------------- merges of hand-made ranks

class MergeRanksTest : public ::testing::Test {
 protected:
  // Builds rank folder `r` of `dir_` (written before) into a RankSide.
  RankSide Rank(int r) {
    auto side = graph::BuildSide(dir_ / ("rank" + std::to_string(r)), &pool_, {});
    EXPECT_TRUE(side.ok()) << side.error().ToString();
    return RankSide{r, side.ok() ? std::move(*side) : nullptr};
  }
  std::vector<MergedSide> Merge(int ranks, const ParallelParams& p) {
    std::vector<RankSide> sides;
    for (int r = 0; r < ranks; ++r) sides.push_back(Rank(r));
    auto merged = MergeRanks(std::move(sides), p);
    EXPECT_TRUE(merged.ok()) << merged.error().ToString();
    return merged.ok() ? std::move(*merged) : std::vector<MergedSide>{};
  }
  static std::vector<std::string> Children(const graph::Side& s, const std::string& name) {
    const graph::Graph& g = *s.graph;
    int32_t n = g.Find(std::string_view(name));
    std::vector<std::string> out;
    if (n == graph::kNoNode) return {"<no node " + name + ">"};
    for (uint32_t c : g.Children(static_cast<uint32_t>(n))) out.emplace_back(g.Name(c));
    return out;
  }
  static std::string Parent(const graph::Side& s, const std::string& name) {
    const graph::Graph& g = *s.graph;
    int32_t n = g.Find(std::string_view(name));
    if (n == graph::kNoNode) return "<no node " + name + ">";
    return g.parent[n] == graph::kNoNode ? "" : std::string(g.Name(static_cast<uint32_t>(g.parent[n])));
  }
  // The details of a node as written to the .vis.
  static vis::NodeDetail Detail(const graph::Side& s, const std::string& name) {
    vis::NodeDetail d;
    int32_t n = s.graph->Find(std::string_view(name));
    EXPECT_NE(n, graph::kNoNode) << name;
    if (n != graph::kNoNode) {
      vis::FillDetail(s, static_cast<uint32_t>(n), &d);
      vis::ResolveKeys(name, &d);  // as a reader gives it
    }
    return d;
  }
  static std::string Field(const vis::Item& item, const std::string& name) {
    for (const vis::Field& f : item.field()) {
      if (f.name() != name) continue;
      const vis::Value& v = f.value();
      if (v.has_integer()) return std::to_string(v.integer());
      if (v.has_number()) return PyRepr(v.number());
      if (v.has_text()) return v.text();
      if (v.has_json()) return v.json();
      return "null";
    }
    return "<no field " + name + ">";
  }
  static std::vector<std::string> Info(const graph::Side& s, const std::string& name) {
    vis::NodeDetail d = Detail(s, name);
    return std::vector<std::string>(d.parallel_merge_info().begin(), d.parallel_merge_info().end());
  }

  TempDir dir_;
  StringPool pool_;
};

// Two TP ranks: one API whose input shards differ, an all_reduce naming the
// TP group, and two APIs between modules.
TEST_F(MergeRanksTest, TensorParallelStatisticsAndApiCollections) {
  const char* stats[2][4] = {{"1", "-1", "0.5", "3"}, {"2", "-2", "0.7", "4"}};
  for (int r = 0; r < 2; ++r) {
    std::string same = Tensor("[2, 4]", "1.5", "-1.5", "0.25", "2.5");
    std::string shard = Tensor("[2, 4]", stats[r][0], stats[r][1], stats[r][2], stats[r][3]);
    std::string api_in = Tensor("[2]", r ? "9.5" : "8.5", "0", "1", "1");
    std::string data = R"("Module.mlp.MLP.forward.0": {"input_args": [)" + same + R"(], "output": [)" + same + R"(]},
           "Tensor.__mul__.0.forward": {"input_args": [)" +
                       shard + R"(], "input_kwargs": {}, "output": [)" + same + R"(]},
           "Distributed.all_reduce.0.forward": {"input_args": [)" +
                       shard + R"(], "input_kwargs": {"group":
              {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "g1"}}, "output": [)" +
                       same + R"(]},
           "Torch.a.0.forward": {"input_args": [)" +
                       api_in + R"(], "input_kwargs": {}, "output": [)" + api_in + R"(]},
           "Torch.b.0.forward": {"input_args": [)" +
                       api_in + R"(], "input_kwargs": {}, "output": [)" + api_in + "]}";
    WriteDumpDir(dir_ / ("rank" + std::to_string(r)), DumpJson(data),
                 R"({"Module.mlp.MLP.forward.0": null, "Tensor.__mul__.0.forward": "Module.mlp.MLP.forward.0",
                     "Distributed.all_reduce.0.forward": "Module.mlp.MLP.forward.0",
                     "Torch.a.0.forward": null, "Torch.b.0.forward": null})");
  }
  std::vector<RankSide> sides;
  sides.push_back(Rank(0));
  sides.push_back(Rank(1));
  EXPECT_EQ(merge::TpGroupsFromData(sides), (RankGroups{{0, 1}}));
  EXPECT_EQ(merge::PpGroupsFromData(sides), RankGroups{});
  std::vector<MergedSide> merged = Merge(2, Params(2, 2, 1));
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].rank, 0);
  const graph::Side& s = *merged[0].side;

  // §9.6: the differing input is merged, the equal output is not.
  EXPECT_EQ(Info(s, "Tensor.__mul__.0.forward"),
            (std::vector<std::string>{
                "This data is the merged data after tensor parallelism(TP), and the data is merged from rank [0, 1].",
                "The Max value merging method for input.0 is: max(1, 2) = 2",
                "The Min value merging method for input.0 is: min(-1, -2) = -2",
                "The Mean value merging method for input.0 is: (0.5 + 0.7) / 2 = 0.6",
                "The Norm value merging method for input.0 is: (3 ** 2 + 4 ** 2) ** 0.5 = 5.0",
            }));
  vis::NodeDetail mul = Detail(s, "Tensor.__mul__.0.forward");
  ASSERT_EQ(mul.input_size(), 1);
  EXPECT_EQ(Field(mul.input(0), "Max"), "2");
  EXPECT_EQ(Field(mul.input(0), "Min"), "-2");
  EXPECT_EQ(Field(mul.input(0), "Mean"), "0.6");
  EXPECT_EQ(Field(mul.input(0), "Norm"), "5.0");
  EXPECT_EQ(Field(mul.output(0), "Max"), "1.5");
  EXPECT_TRUE(Info(s, "Module.mlp.MLP.forward.0").empty()) << "same on both ranks";
  EXPECT_TRUE(Info(s, "Distributed.all_reduce.0.forward").empty()) << "communication is not merged";

  // §9.4: the APIs between modules of every rank under one all-ranks node.
  EXPECT_EQ(Children(s, "DefaultModel"),
            (std::vector<std::string>{"Module.mlp.MLP.forward.0", "Apis_Between_Modules_All_Ranks.0"}));
  EXPECT_EQ(Parent(s, "Apis_Between_Modules_All_Ranks.0"), "DefaultModel") << "msprobe 8.1-era left it without";
  EXPECT_EQ(Children(s, "Apis_Between_Modules_All_Ranks.0"),
            (std::vector<std::string>{"Apis_Between_Modules_Rank0.0", "Apis_Between_Modules_Rank1.0"}));
  EXPECT_EQ(Children(s, "Apis_Between_Modules_Rank0.0"),
            (std::vector<std::string>{"Torch.a.0.forward", "Torch.b.0.forward"}));
  EXPECT_EQ(Children(s, "Apis_Between_Modules_Rank1.0"),
            (std::vector<std::string>{"Torch.a_rank1.0.forward", "Torch.b_rank1.0.forward"}));
  vis::NodeDetail a1 = Detail(s, "Torch.a_rank1.0.forward");
  ASSERT_EQ(a1.input_size(), 1);
  EXPECT_EQ(a1.input(0).key(), "Torch.a_rank1.0.forward.input.0") << "item keys follow the new name";
  EXPECT_EQ(Field(a1.input(0), "Max"), "9.5") << "rank 1's own data";
  EXPECT_EQ(Field(Detail(s, "Torch.a.0.forward").input(0), "Max"), "8.5");
}

// A row-parallel layer: its matmul's partial output is replaced by the
// all_reduce's result (§9.6 special case).
TEST_F(MergeRanksTest, RowParallelMatmulTakesTheReducedOutput) {
  for (int r = 0; r < 2; ++r) {
    std::string in = Tensor("[4]", r ? "2" : "1", "0", "0.5", "1");
    std::string partial = Tensor("[4]", r ? "0.25" : "0.75", "-1", "0", "1");
    std::string reduced = Tensor("[4]", "0.875", "-2", "0.125", "1.5");
    std::string group = R"({"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "g"}})";
    std::string data = R"("Module.proj.RowParallelLinear.forward.0": {"input_args": [)" + reduced +
                       R"(], "output": [)" + reduced + R"(]},
           "Torch.matmul.0.forward": {"input_args": [)" +
                       in + R"(], "input_kwargs": {}, "output": [)" + partial + R"(]},
           "Distributed.all_reduce.0.forward": {"input_args": [)" +
                       partial + R"(], "input_kwargs": )" + group + R"(, "output": [)" + reduced + "]}";
    WriteDumpDir(dir_ / ("rank" + std::to_string(r)), DumpJson(data),
                 R"({"Module.proj.RowParallelLinear.forward.0": null,
                     "Torch.matmul.0.forward": "Module.proj.RowParallelLinear.forward.0",
                     "Distributed.all_reduce.0.forward": "Module.proj.RowParallelLinear.forward.0"})");
  }
  std::vector<MergedSide> merged = Merge(2, Params(2, 2, 1));
  ASSERT_EQ(merged.size(), 1u);
  const graph::Side& s = *merged[0].side;
  std::vector<std::string> info = Info(s, "Torch.matmul.0.forward");
  ASSERT_EQ(info.size(), 6u);
  EXPECT_EQ(info[1], "The Max value merging method for input.0 is: max(1, 2) = 2");
  EXPECT_EQ(info[5], "The output of this data is merged from Distributed.all_reduce.0.forward");
  vis::NodeDetail mm = Detail(s, "Torch.matmul.0.forward");
  EXPECT_EQ(Field(mm.output(0), "Max"), "0.875");
  EXPECT_EQ(Field(mm.output(0), "Min"), "-2");
  EXPECT_EQ(Field(mm.output(0), "Mean"), "0.125");
  EXPECT_EQ(Field(mm.output(0), "Norm"), "1.5");
}

// Two pipeline stages: the layer each holds is numbered layers.0 on both;
// the merge keeps both, renumbered, with the second stage's APIs tagged.
TEST_F(MergeRanksTest, PipelineStagesBecomeOneModel) {
  for (int r = 0; r < 2; ++r) {
    std::string a = Tensor("[2]", "1", "0", "0.5", "1");
    std::string own = Tensor("[2]", r ? "3" : "2", "0", "0.5", "1");
    std::string layer = R"({"input_args": [)" + own + R"(], "input_kwargs": {}, "output": [)" + own + "]}";
    std::string data = R"("Module.decoder.Block.forward.0": {"input_args": [)" + a + R"(], "output": [)" + own +
                       R"(]}, "Module.decoder.layers.0.Layer.forward.0": )" + layer + R"(, "Torch.mul.0.forward": )" +
                       layer;
    std::string construct;
    if (r == 0) {
      data += R"(, "Distributed.send.0.forward": {"input_args": [)" + a +
              R"(], "input_kwargs": {"dst": {"type": "int", "value": 1}}, "output": [null]})";
      construct = R"({"Module.decoder.Block.forward.0": null,
          "Module.decoder.layers.0.Layer.forward.0": "Module.decoder.Block.forward.0",
          "Torch.mul.0.forward": "Module.decoder.layers.0.Layer.forward.0", "Distributed.send.0.forward": null,
          "Module.decoder.Block.backward.0": null,
          "Module.decoder.layers.0.Layer.backward.0": "Module.decoder.Block.backward.0"})";
    } else {
      data += R"(, "Module.decoder.norm.Norm.forward.0": )" + layer;
      construct = R"({"Module.decoder.Block.forward.0": null,
          "Module.decoder.layers.0.Layer.forward.0": "Module.decoder.Block.forward.0",
          "Torch.mul.0.forward": "Module.decoder.layers.0.Layer.forward.0",
          "Module.decoder.norm.Norm.forward.0": "Module.decoder.Block.forward.0",
          "Module.decoder.Block.backward.0": null,
          "Module.decoder.layers.0.Layer.backward.0": "Module.decoder.Block.backward.0"})";
    }
    WriteDumpDir(dir_ / ("rank" + std::to_string(r)), DumpJson(data), construct);
  }
  std::vector<RankSide> sides;
  sides.push_back(Rank(0));
  sides.push_back(Rank(1));
  EXPECT_EQ(merge::PpGroupsFromData(sides), (RankGroups{{0}})) << "rank 0 sends to 1, 1 sends nowhere";
  // One chain of one rank is not pp = 2: the default groups are used.
  std::vector<MergedSide> merged = Merge(2, Params(2, 1, 2));
  ASSERT_EQ(merged.size(), 1u);
  const graph::Side& s = *merged[0].side;
  EXPECT_EQ(Children(s, "DefaultModel"),
            (std::vector<std::string>{"Module.decoder.Block.forward.0", "Distributed.send.0.forward",
                                      "Module.decoder.Block.backward.0"}));
  // Forward: the other stage's layers after this one's, renumbered; its
  // modules unique to it (norm) after them.
  EXPECT_EQ(
      Children(s, "Module.decoder.Block.forward.0"),
      (std::vector<std::string>{"Module.decoder.layers.0.Layer.forward.0", "Module.decoder.layers.1.Layer.forward.0",
                                "Module.decoder.norm.Norm.forward.0"}));
  EXPECT_EQ(Children(s, "Module.decoder.layers.1.Layer.forward.0"),
            (std::vector<std::string>{"Torch.mul_rank1.0.forward"}));
  EXPECT_EQ(Field(Detail(s, "Torch.mul_rank1.0.forward").input(0), "Max"), "3") << "the second stage's data";
  EXPECT_EQ(Field(Detail(s, "Module.decoder.layers.1.Layer.forward.0").output(0), "Max"), "3");
  // The block saw the same input on both stages: its output is the last stage's.
  EXPECT_EQ(Field(Detail(s, "Module.decoder.Block.forward.0").output(0), "Max"), "3");
  // Backward runs the stages in reverse.
  EXPECT_EQ(Children(s, "Module.decoder.Block.backward.0"),
            (std::vector<std::string>{"Module.decoder.layers.1.Layer.backward.0",
                                      "Module.decoder.layers.0.Layer.backward.0"}));
}

// Virtual pipeline (§9.7): two ranks, two model chunks each; every chunk's
// layers end up under chunk 0, numbered in execution order. The same input
// as crosscheck_merge.py's vpp-chunks layout; msprobe 8.3.3 gives this tree.
TEST_F(MergeRanksTest, VirtualPipelineChunksFoldIntoChunkZero) {
  auto tensor = [](double mx, double mn, double mean, double norm) {
    return Tensor("[2, 4]", PyRepr(mx), PyRepr(mn), PyRepr(mean), PyRepr(norm));
  };
  for (int r = 0; r < 2; ++r) {
    std::string data, construct;
    int k = 0;
    auto add = [&](const std::string& name, const std::string& parent, bool same_input) {
      ++k;
      double base = 1.0 + k / 8.0, shift = same_input ? 0 : r;
      if (!data.empty()) data += ", ";
      data += "\"" + name + R"(": {"input_args": [)" + tensor(base + shift, -base - shift, 0.1 + shift, 3.0 + shift) +
              R"(], "input_kwargs": {}, "output": [)" + tensor(base + 1 + r, -base - r, 0.2 + r, 4.0 + r) + "]}";
      construct +=
          (construct.empty() ? "" : ", ") + ("\"" + name + "\": ") + (parent.empty() ? "null" : "\"" + parent + "\"");
    };
    for (int chunk : {0, 1}) {
      std::string m = "Module." + std::to_string(chunk) + ".model";
      add(m + ".Model.forward.0", "", true);
      add(m + ".decoder.Block.forward.0", m + ".Model.forward.0", true);
      add(m + ".decoder.layers.0.Layer.forward.0", m + ".decoder.Block.forward.0", false);
      add("Torch.mul." + std::to_string(chunk) + ".forward", m + ".decoder.layers.0.Layer.forward.0", false);
    }
    for (int chunk : {1, 0}) {
      std::string m = "Module." + std::to_string(chunk) + ".model";
      add(m + ".Model.backward.0", "", true);
      add(m + ".decoder.Block.backward.0", m + ".Model.backward.0", true);
      add(m + ".decoder.layers.0.Layer.backward.0", m + ".decoder.Block.backward.0", false);
    }
    data += R"(, "Distributed.isend.0.forward": {"input_args": [)" + tensor(1, 0, 0.5, 1) +
            R"(], "input_kwargs": {"dst": {"type": "int", "value": )" + std::to_string(1 - r) +
            R"(}}, "output": [null]})";
    construct += R"(, "Distributed.isend.0.forward": null)";
    WriteDumpDir(dir_ / ("rank" + std::to_string(r)), DumpJson(data), "{" + construct + "}");
  }
  std::vector<MergedSide> merged = Merge(2, Params(2, 1, 2, 2));
  ASSERT_EQ(merged.size(), 1u);
  const graph::Side& s = *merged[0].side;
  EXPECT_EQ(s.graph->size(), 18u);
  EXPECT_EQ(Children(s, "DefaultModel"),
            (std::vector<std::string>{"Module.0.model.Model.forward.0", "Module.0.model.Model.backward.0",
                                      "Distributed.isend.0.forward"}));
  EXPECT_EQ(Children(s, "Module.0.model.decoder.Block.forward.0"),
            (std::vector<std::string>{
                "Module.0.model.decoder.layers.0.Layer.forward.0", "Module.0.model.decoder.layers.1.Layer.forward.0",
                "Module.0.model.decoder.layers.2.Layer.forward.0", "Module.0.model.decoder.layers.3.Layer.forward.0"}));
  EXPECT_EQ(Children(s, "Module.0.model.decoder.layers.3.Layer.forward.0"),
            (std::vector<std::string>{"Torch.mul_rank1.1.forward"}));
  EXPECT_EQ(
      Children(s, "Module.0.model.decoder.Block.backward.0"),
      (std::vector<std::string>{
          "Module.0.model.decoder.layers.3.Layer.backward.0", "Module.0.model.decoder.layers.2.Layer.backward.0",
          "Module.0.model.decoder.layers.1.Layer.backward.0", "Module.0.model.decoder.layers.0.Layer.backward.0"}));
  // Chunk 0's model output is the last chunk's, on the last stage.
  EXPECT_EQ(Field(Detail(s, "Module.0.model.Model.forward.0").output(0), "Max"), "3.625");
  EXPECT_EQ(Detail(s, "Module.0.model.Model.forward.0").output(0).key(), "Module.0.model.Model.forward.0.output.0");
}

TEST_F(MergeRanksTest, RanksOfOneRunMustHaveOneTask) {
  WriteDumpDir(dir_ / "rank0", DumpJson(R"("Torch.a.0.forward": {})"), R"({"Torch.a.0.forward": null})");
  WriteDumpDir(dir_ / "rank1", DumpJson(R"("Torch.a.0.forward": {})", "structure"), R"({"Torch.a.0.forward": null})");
  std::vector<RankSide> sides;
  sides.push_back(Rank(0));
  sides.push_back(Rank(1));
  auto merged = MergeRanks(std::move(sides), Params(2, 2, 1));
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.error().where, "key task");
  EXPECT_EQ(merged.error().file, dir_ / "rank1/dump.json");
}

// ---------------------------------------------------------------- the real sample

TEST(MergeSampleTest, GroupsFromTheDumpedCommunication) {
  StringPool pool;
  std::vector<RankSide> ranks;
  for (int r = 0; r < 4; ++r) {
    auto side = graph::BuildSide(Sample("parallel_merge/npu/step0/rank" + std::to_string(r)), &pool, {});
    ASSERT_TRUE(side.ok()) << side.error().ToString();
    ranks.push_back(RankSide{r, std::move(*side)});
  }
  // Stage 0 (ranks 0, 1) sends activations to stage 1 (ranks 2, 3) with
  // batch_isend_irecv; stage 1 sends gradients back.
  EXPECT_EQ(merge::PpGroupsFromData(ranks), (RankGroups{{0, 2}, {1, 3}}));
  // The row-parallel layers all_reduce over [0, 1] and [2, 3].
  EXPECT_EQ(merge::TpGroupsFromData(ranks), (RankGroups{{0, 1}, {2, 3}}));
}

// ---------------------------------------------------------------- end to end

class MergeE2ETest : public ::testing::Test {
 protected:
  // A compare.json in the temp dir pointing at the sample with absolute paths.
  std::string Config(const std::string& name, const std::string& npu, const std::string& bench,
                     const std::string& parallel) {
    std::string text = R"({"npu_path": ")" + Sample("parallel_merge/" + npu) + "\"";
    if (!bench.empty()) text += R"(, "bench_path": ")" + Sample("parallel_merge/" + bench) + "\"";
    if (!parallel.empty()) text += R"(, "parallel_merge": )" + parallel;
    WriteFile(dir_ / name, text + "}");
    return dir_ / name;
  }
  // A run that must fail: exit 2, one message naming `where`, no file.
  void ExpectRefused(const std::vector<std::string>& args, const std::string& where, const std::string& what) {
    std::string out = dir_ / ("refused" + std::to_string(++refused_));
    std::vector<std::string> full = {"graph", "-o", out};
    full.insert(full.end(), args.begin(), args.end());
    RunResult r = RunTool(full);
    EXPECT_EQ(r.status, 2) << r.err;
    std::vector<std::string> lines = Lines(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(lines[0].rfind("graph-ascend: error: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(where), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(what), std::string::npos) << lines[0];
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(Files(out).empty()) << "nothing written";
  }

  TempDir dir_;
  int refused_ = 0;
};

const char* kSampleParams = R"({"npu": {"rank_size": 4, "tp": 2, "pp": 2, "vpp": 1, "order": "tp-cp-ep-dp-pp"},
                                "bench": {"rank_size": 1, "tp": 1, "pp": 1}})";

const Json& Node(const Json& graph, const std::string& name) {
  static const Json kMissing = Json::object();
  if (!graph["node"].contains(name)) {
    ADD_FAILURE() << "no node " << name;
    return kMissing;
  }
  return graph["node"][name];
}

std::string Matched(const Json& node) {
  return node.contains("matched_node_link") && !node["matched_node_link"].empty()
             ? node["matched_node_link"].back().get<std::string>()
             : "";
}

TEST_F(MergeE2ETest, TensorAndPipelineParallelRunAgainstTheUnsplitModel) {
  std::vector<std::string> files = Graph(Sample("parallel_merge/compare.json"), dir_ / "out");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::regex_match(fs::path(files[0]).filename().string(), std::regex(R"(compare_merged0_\d{14}\.vis)")))
      << files[0];
  Json doc = Export(files[0]);
  const Json& npu = doc["NPU"];
  const Json& bench = doc["Bench"];
  // msprobe 8.3.3 merges the 4 ranks into 281 nodes and has 269 bench nodes;
  // graph-ascend adds the parameter-gradient nodes of msprobe 26's dumps (14
  // and 15, docs/COMPATIBILITY.md C-pgrad).
  EXPECT_EQ(npu["node"].size(), 295u);
  EXPECT_EQ(bench["node"].size(), 284u);
  EXPECT_EQ(testing::PreOrder(npu).size(), npu["node"].size()) << "every merged node hangs from the root";

  // Both pipeline stages' layers, the second renumbered from its local layers.0.
  EXPECT_EQ(Node(npu, "Module.decoder.TransformerBlock.forward.0")["subnodes"],
            Json::parse(R"(["Module.decoder.layers.0.TransformerLayer.forward.0",
                            "Module.decoder.layers.1.TransformerLayer.forward.0",
                            "Module.decoder.final_layernorm.RMSNorm.forward.0"])"));
  EXPECT_EQ(Node(npu, "Module.decoder.TransformerBlock.backward.0")["subnodes"],
            Json::parse(R"(["Module.decoder.final_layernorm.RMSNorm.backward.0", "Tensor.to_rank2.4.backward",
                            "Module.decoder.layers.1.TransformerLayer.backward.0",
                            "Module.decoder.layers.0.TransformerLayer.backward.0"])"));
  const Json& layer1 = Node(npu, "Module.decoder.layers.1.TransformerLayer.forward.0");
  EXPECT_EQ(layer1["subnodes"].front(), "Module.decoder.layers.1.input_layernorm.RMSNorm.forward.0");
  EXPECT_EQ(layer1["subnodes"].back(), "Tensor.__add___rank2.5.forward") << "stage 2's APIs carry its rank";

  // The API collections of all ranks: the loss computed on the last stage.
  EXPECT_EQ(Node(npu, "Apis_Between_Modules_All_Ranks.0")["upnode"], "DefaultModel");
  EXPECT_EQ(Node(npu, "Apis_Between_Modules_All_Ranks.0")["subnodes"],
            Json::parse(R"(["Apis_Between_Modules_Rank0.0", "Apis_Between_Modules_Rank1.0",
                            "Apis_Between_Modules_Rank2.0", "Apis_Between_Modules_Rank3.0"])"));
  EXPECT_TRUE(npu["node"].contains("Functional.cross_entropy_rank2.0.forward"));

  // TP merge notes: stage 1's layer from ranks 0 and 1, stage 2's from 2 and 3.
  const Json& qkv0 = Node(npu, "Module.decoder.layers.0.self_attention.linear_qkv.ColumnParallelLinear.forward.0");
  const Json& qkv1 = Node(npu, "Module.decoder.layers.1.self_attention.linear_qkv.ColumnParallelLinear.forward.0");
  ASSERT_TRUE(qkv0.contains("parallel_merge_info"));
  ASSERT_TRUE(qkv1.contains("parallel_merge_info"));
  EXPECT_EQ(qkv0["parallel_merge_info"][0],
            "This data is the merged data after tensor parallelism(TP), and the data is merged from rank [0, 1].");
  EXPECT_EQ(qkv1["parallel_merge_info"][0],
            "This data is the merged data after tensor parallelism(TP), and the data is merged from rank [2, 3].");
  EXPECT_EQ(qkv0["parallel_merge_info"].size(), 9u) << "Max/Min/Mean/Norm of the weight and the output";
  // Merging the column-parallel weight's shards gives the whole weight's
  // statistics, as the unsplit bench dumped them.
  std::string key =
      "Module.decoder.layers.0.self_attention.linear_qkv.ColumnParallelLinear.forward.0.parameters.weight";
  const Json& merged_w = qkv0["input_data"][key];
  const Json& whole_w = Node(
      bench, "Module.decoder.layers.0.self_attention.linear_qkv.ColumnParallelLinear.forward.0")["input_data"][key];
  EXPECT_EQ(merged_w["Max"], whole_w["Max"]);
  EXPECT_EQ(merged_w["Min"], whole_w["Min"]);
  EXPECT_NEAR(std::stod(merged_w["Norm"].get<std::string>()), std::stod(whole_w["Norm"].get<std::string>()), 1e-5);
  EXPECT_EQ(merged_w["Max diff"], "0.0");

  // Fuzzy matching without the shape check pairs the merged graph with the
  // unsplit model: 252 pairs in msprobe 8.3.3, plus the 14 gradient nodes.
  EXPECT_EQ(testing::CountMatched(npu), 266);
  EXPECT_EQ(Matched(layer1), "Module.decoder.layers.1.TransformerLayer.forward.0");
  EXPECT_EQ(Matched(Node(npu, "Tensor.to_rank2.0.forward")), "Tensor.to.4.forward");
  EXPECT_EQ(Matched(Node(npu, "Functional.linear_rank2.0.forward")), "Functional.linear.4.forward");
  EXPECT_EQ(Matched(Node(npu, "Apis_Between_Modules_Rank0.0")), "Apis_Between_Modules_Rank0.0");
  EXPECT_EQ(Matched(Node(npu, "Apis_Between_Modules_Rank2.0")), "") << "the bench has one rank";
  EXPECT_EQ(Matched(Node(npu, "Distributed.all_reduce.0.forward")), "") << "no all_reduce in one process";
  EXPECT_EQ(Node(npu, "Apis_Between_Modules_Rank1.0")["data"]["precision_index"], 0) << "§6.9 per-rank aggregation";
  // Same math on both sides: every merged layer output is close to the bench's.
  EXPECT_LT(testing::Index(Node(npu, "Module.decoder.layers.1.TransformerLayer.forward.0")), 1e-5);
  EXPECT_LT(testing::Index(Node(npu, "Module.decoder.layers.0.TransformerLayer.forward.0")), 1e-5);

  RunResult info = RunTool({"info", files[0]});
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(testing::InfoLine(info.out, "step:"), "step: , rank: rank0");
}

TEST_F(MergeE2ETest, FlagsGiveTheSameMergedGraph) {
  std::vector<std::string> section =
      Graph(Config("section.json", "npu/step0", "bench/step0", kSampleParams), dir_ / "a");
  std::vector<std::string> flags = Graph(Config("flags.json", "npu/step0", "bench/step0", ""), dir_ / "b",
                                         {"--rank_size", "4", "1", "--tp", "2", "1", "--pp", "2", "1"});
  ASSERT_EQ(section.size(), 1u);
  ASSERT_EQ(flags.size(), 1u);
  Json a = Export(section[0]), b = Export(flags[0]);
  EXPECT_EQ(a["NPU"]["node"], b["NPU"]["node"]);
  EXPECT_EQ(a["Bench"]["node"], b["Bench"]["node"]);
}

TEST_F(MergeE2ETest, BuildAndStepLayout) {
  std::vector<std::string> build =
      Graph(Config("build.json", "npu/step0", "", ""), dir_ / "build",
            {"--rank_size", "4", "--tp", "2", "--pp", "2", "--vpp", "1", "--order", "tp-cp-ep-dp-pp"});
  ASSERT_EQ(build.size(), 1u);
  EXPECT_TRUE(std::regex_match(fs::path(build[0]).filename().string(), std::regex(R"(build_merged0_\d{14}\.vis)")));
  Json doc = Export(build[0]);
  EXPECT_EQ(doc["node"].size(), 295u);
  EXPECT_FALSE(doc.contains("NPU"));

  std::vector<std::string> steps = Graph(Config("steps.json", "npu", "bench", kSampleParams), dir_ / "steps");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_TRUE(
      std::regex_match(fs::path(steps[0]).filename().string(), std::regex(R"(compare_step0_merged0_\d{14}\.vis)")))
      << steps[0];
  RunResult info = RunTool({"info", steps[0]});
  EXPECT_EQ(testing::InfoLine(info.out, "step:"), "step: step0, rank: rank0");
}

TEST_F(MergeE2ETest, BadParallelParametersAreRefused) {
  std::string sample = Sample("parallel_merge/compare.json");
  ExpectRefused(
      {"-i", Config("size.json", "npu/step0", "bench/step0",
                    R"({"npu": {"rank_size": 3, "tp": 1, "pp": 3}, "bench": {"rank_size": 1, "tp": 1, "pp": 1}})")},
      "key parallel_merge.npu.rank_size", "is 3 but");
  ExpectRefused(
      {"-i", Config("tp.json", "npu/step0", "bench/step0",
                    R"({"npu": {"rank_size": 4, "tp": 3, "pp": 1}, "bench": {"rank_size": 1, "tp": 1, "pp": 1}})")},
      "key parallel_merge.npu.tp", "rank_size 4 is not divisible by tp 3");
  ExpectRefused(
      {"-i", Config("nobench.json", "npu/step0", "bench/step0", R"({"npu": {"rank_size": 4, "tp": 2, "pp": 2}})")},
      "key parallel_merge.bench", "missing");
  ExpectRefused(
      {"-i",
       Config("vpp.json", "npu/step0", "bench/step0",
              R"({"npu": {"rank_size": 4, "tp": 4, "pp": 1, "vpp": 2}, "bench": {"rank_size": 1, "tp": 1, "pp": 1}})")},
      "key parallel_merge.npu.vpp", "needs pp > 1");
  ExpectRefused({"-i", sample, "--rank_size", "4", "1", "--tp", "2", "1", "--pp", "2", "1"}, "key parallel_merge",
                "given twice");
  ExpectRefused(
      {"-i", Config("one.json", "npu/step0", "bench/step0", ""), "--rank_size", "4", "--tp", "2", "--pp", "2"},
      "flag --rank_size", "expected two values (npu bench) in a compare");
  ExpectRefused({"-i", Config("notp.json", "npu/step0", "", ""), "--rank_size", "4", "--pp", "2"}, "flag --tp",
                "missing");
  ExpectRefused({"-i", Config("zero.json", "npu/step0", "", ""), "--rank_size", "4", "--tp", "0", "--pp", "2"},
                "flag --tp (npu value)", "expected a positive integer");
  ExpectRefused({"-i", sample, "-lm"}, "", "-lm (layer mapping) cannot be used with parallel merge");
  ExpectRefused({"-i", Config("files.json", "npu/step0/rank0", "", ""), "--rank_size", "1", "--tp", "1", "--pp", "1"},
                "key npu_path", "holds the dump files of one rank");
  // The npu run merges into one graph, the same ranks as a bench with tp 2,
  // pp 1 into two (dp = 2): msprobe's "dp is inconsistent" error.
  ExpectRefused(
      {"-i", Config("dp.json", "npu/step0", "npu/step0",
                    R"({"npu": {"rank_size": 4, "tp": 2, "pp": 2}, "bench": {"rank_size": 4, "tp": 2, "pp": 1}})")},
      "", "the data-parallel sizes");
  WriteFile(dir_ / "tensor.json", R"({"npu_path": ")" + Sample("gpt_tensor/npu/step0") + R"(", "bench_path": ")" +
                                      Sample("gpt_tensor/bench/step0") + "\"}");
  ExpectRefused({"-i", dir_ / "tensor.json", "--rank_size", "1", "1", "--tp", "1", "1", "--pp", "1", "1"}, "key task",
                "parallel merge merges the statistics");
}

TEST_F(MergeE2ETest, HelpListsTheFlags) {
  RunResult r = RunTool({"graph", "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* flag : {"--rank_size", "--tp", "--pp", "--vpp", "--order", "merged<i>"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace graph_ascend
