// Default matching (reference §6.3.1): same id, same number of input and
// output items with equal type and shape position by position (dtype and
// item names ignored), and the same ancestor ids.
#include "match/matcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_files.h"

namespace graph_ascend::match {
namespace {

using graph_ascend::testing::DumpJson;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::Tensor;
using graph_ascend::testing::WriteDumpDir;

std::string T(const std::string& shape, const std::string& dtype = "torch.float32") {
  return R"({"type": "torch.Tensor", "dtype": ")" + dtype + R"(", "shape": )" + shape +
         R"(, "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0})";
}
std::string Entry(const std::string& inputs, const std::string& outputs) {
  return R"({"input_args": [)" + inputs + R"(], "output": [)" + outputs + "]}";
}

class MatcherTest : public ::testing::Test {
 protected:
  // Builds both sides from (dump data members, construct.json) and matches them.
  void Match(const std::string& npu_data, const std::string& npu_construct, const std::string& bench_data,
             const std::string& bench_construct) {
    WriteDumpDir(npu_dir_.path(), DumpJson(npu_data), npu_construct);
    WriteDumpDir(bench_dir_.path(), DumpJson(bench_data), bench_construct);
    auto npu = graph::BuildSide(npu_dir_.path(), &pool_, graph::BuildOptions{});
    ASSERT_TRUE(npu.ok()) << npu.error().ToString();
    auto bench = graph::BuildSide(bench_dir_.path(), &pool_, graph::BuildOptions{});
    ASSERT_TRUE(bench.ok()) << bench.error().ToString();
    npu_ = std::move(*npu);
    bench_ = std::move(*bench);
    pairs_ = MatchDefault(npu_.get(), bench_.get());
  }
  // Same data and construct on both sides except `npu_entry` / `bench_entry` of node `name`.
  void MatchOne(const std::string& name, const std::string& npu_entry, const std::string& bench_entry) {
    std::string construct = R"({"Module.m.M.forward.0": null, ")" + name + R"(": "Module.m.M.forward.0"})";
    Match("\"" + name + "\": " + npu_entry, construct, "\"" + name + "\": " + bench_entry, construct);
  }

  // The Bench node matched with NPU node `name`, or "" when unmatched.
  std::string MatchOf(const std::string& name) {
    int32_t n = npu_->graph->Find(std::string_view(name));
    EXPECT_NE(n, graph::kNoNode) << name;
    if (n == graph::kNoNode) return "<missing>";
    int32_t b = npu_->graph->matched[n];
    if (b == graph::kNoNode) return "";
    EXPECT_EQ(bench_->graph->matched[b], n) << "matches are symmetric";
    return std::string(bench_->graph->Name(static_cast<uint32_t>(b)));
  }

  TempDir npu_dir_, bench_dir_;
  StringPool pool_;  // shared: equal names have equal ids on both sides
  std::unique_ptr<graph::Side> npu_, bench_;
  uint32_t pairs_ = 0;
};

const std::string kName = "Torch.matmul.0.forward";

TEST_F(MatcherTest, IdenticalGraphsMatchEveryNode) {
  std::string data = "\"" + kName + "\": " + Entry(T("[2, 4]") + ", " + T("[4, 3]"), T("[2, 3]"));
  std::string construct = R"({"Module.m.M.forward.0": null, "Torch.matmul.0.forward": "Module.m.M.forward.0",
                               "Module.m.M.backward.0": null})";
  Match(data, construct, data, construct);
  EXPECT_EQ(pairs_, 4u) << "root, two modules, one API";
  EXPECT_EQ(MatchOf("DefaultModel"), "DefaultModel");
  EXPECT_EQ(MatchOf(kName), kName);
  EXPECT_EQ(MatchOf("Module.m.M.backward.0"), "Module.m.M.backward.0");
}

TEST_F(MatcherTest, DtypeAndItemNamesAreNotCompared) {
  MatchOne(kName, Entry(T("[2, 3]", "torch.float32"), T("[2, 3]")), Entry(T("[2, 3]", "torch.bfloat16"), T("[2, 3]")));
  EXPECT_EQ(MatchOf(kName), kName);
  MatchOne(kName, R"({"input_args": [], "input_kwargs": {"x": )" + T("[2]") + "}}",
           R"({"input_args": [], "input_kwargs": {"y": )" + T("[2]") + "}}");
  EXPECT_EQ(MatchOf(kName), kName) << "kwargs under other names, same type and shape";
}

TEST_F(MatcherTest, ShapeSpellingDoesNotMatter) {
  MatchOne(kName, Entry(T("[2,3]"), T("[2, 3]")), Entry(T("[2, 3]"), T("[ 2, 3 ]")));
  EXPECT_EQ(MatchOf(kName), kName);
}

TEST_F(MatcherTest, DifferentShapesDoNotMatch) {
  MatchOne(kName, Entry(T("[2, 3]"), T("[2, 3]")), Entry(T("[2, 3]"), T("[3, 2]")));
  EXPECT_EQ(MatchOf(kName), "");
  EXPECT_EQ(MatchOf("Module.m.M.forward.0"), "Module.m.M.forward.0");
  EXPECT_EQ(pairs_, 2u);
}

TEST_F(MatcherTest, ShapesAreComparedPositionally) {
  MatchOne(kName, Entry(T("[2, 3]") + ", " + T("[4]"), T("[1]")), Entry(T("[4]") + ", " + T("[2, 3]"), T("[1]")));
  EXPECT_EQ(MatchOf(kName), "");
}

TEST_F(MatcherTest, DifferentItemCountsDoNotMatch) {
  MatchOne(kName, Entry(T("[2]") + ", " + T("[2]"), T("[2]")), Entry(T("[2]"), T("[2]")));
  EXPECT_EQ(MatchOf(kName), "") << "inputs differ in number";
  MatchOne(kName, Entry(T("[2]"), T("[2]")), Entry(T("[2]"), T("[2]") + ", null"));
  EXPECT_EQ(MatchOf(kName), "") << "outputs differ in number";
}

TEST_F(MatcherTest, DifferentTypesDoNotMatch) {
  MatchOne(kName, Entry(R"({"type": "int", "value": 1})", T("[2]")),
           Entry(R"({"type": "float", "value": 1.0})", T("[2]")));
  EXPECT_EQ(MatchOf(kName), "");
  MatchOne(kName, Entry("null", T("[2]")), Entry(T("[2]"), T("[2]")));
  EXPECT_EQ(MatchOf(kName), "") << "a None argument against a tensor";
}

TEST_F(MatcherTest, ScalarValuesAreNotCompared) {
  MatchOne(kName, Entry(R"({"type": "int", "value": 1}, null)", T("[2]")),
           Entry(R"({"type": "int", "value": 7}, null)", T("[2]")));
  EXPECT_EQ(MatchOf(kName), kName);
}

TEST_F(MatcherTest, DataOnOneSideOnly) {
  std::string construct = R"({"Module.m.M.forward.0": null, "Torch.matmul.0.forward": "Module.m.M.forward.0"})";
  Match("\"" + kName + "\": " + Entry(T("[2]"), T("[2]")), construct, "", construct);
  EXPECT_EQ(MatchOf(kName), "");
  EXPECT_EQ(MatchOf("Module.m.M.forward.0"), "Module.m.M.forward.0") << "no data on either side: 0 items each";
}

TEST_F(MatcherTest, AncestorsMustBeTheSame) {
  std::string data = "\"" + kName + "\": " + Entry(T("[2]"), T("[2]"));
  Match(data, R"({"Module.a.A.forward.0": null, "Torch.matmul.0.forward": "Module.a.A.forward.0"})", data,
        R"({"Module.b.B.forward.0": null, "Torch.matmul.0.forward": "Module.b.B.forward.0"})");
  EXPECT_EQ(MatchOf(kName), "");
  // Deeper: same parent name, different grandparent.
  Match(data, R"({"Module.g.G.forward.0": null, "Module.p.P.forward.0": "Module.g.G.forward.0",
                  "Torch.matmul.0.forward": "Module.p.P.forward.0"})",
        data, R"({"Module.h.H.forward.0": null, "Module.p.P.forward.0": "Module.h.H.forward.0",
                  "Torch.matmul.0.forward": "Module.p.P.forward.0"})");
  EXPECT_EQ(MatchOf("Module.p.P.forward.0"), "");
  EXPECT_EQ(MatchOf(kName), "");
}

// Ancestors are compared by id: a child matches even when its parent's
// own items did not (the BFS visits every node).
TEST_F(MatcherTest, ChildMatchesUnderAnUnmatchedParentWithTheSameIds) {
  std::string construct = R"({"Module.m.M.forward.0": null, "Torch.matmul.0.forward": "Module.m.M.forward.0"})";
  std::string api = "\"" + kName + "\": " + Entry(T("[2]"), T("[2]"));
  Match(api + R"(, "Module.m.M.forward.0": )" + Entry(T("[2]"), T("[2]")), construct,
        api + R"(, "Module.m.M.forward.0": )" + Entry(T("[5]"), T("[2]")), construct);
  EXPECT_EQ(MatchOf("Module.m.M.forward.0"), "");
  EXPECT_EQ(MatchOf(kName), kName);
}

TEST_F(MatcherTest, NodesMissingOnTheBenchSide) {
  Match("", R"({"Module.m.M.forward.0": null, "Torch.extra.0.forward": "Module.m.M.forward.0"})", "",
        R"({"Module.m.M.forward.0": null})");
  EXPECT_EQ(MatchOf("Torch.extra.0.forward"), "");
  EXPECT_EQ(pairs_, 2u);
}

TEST_F(MatcherTest, BreadthFirstOrder) {
  Match("", R"({"Module.a.A.forward.0": null, "Module.a.b.B.forward.0": "Module.a.A.forward.0",
                "Torch.x.0.forward": "Module.a.b.B.forward.0", "Torch.y.0.forward": "Module.a.A.forward.0",
                "Module.c.C.forward.0": null})",
        "", R"({"Module.a.A.forward.0": null})");
  std::vector<std::string> order;
  for (uint32_t n : BreadthFirst(*npu_->graph)) order.emplace_back(npu_->graph->Name(n));
  EXPECT_EQ(order, (std::vector<std::string>{"DefaultModel", "Module.a.A.forward.0", "Module.c.C.forward.0",
                                             "Module.a.b.B.forward.0", "Torch.y.0.forward", "Torch.x.0.forward"}));
}

}  // namespace
}  // namespace graph_ascend::match
