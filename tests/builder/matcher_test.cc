// Default matching (reference §6.3.1): same id, same number of input and
// output items with equal type and shape position by position (dtype and
// item names ignored), and the same ancestor ids.
#include "match/matcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace graph_ascend::match {
namespace {

using graph_ascend::testing::Entry;
using graph_ascend::testing::Shaped;

class MatcherTest : public graph_ascend::testing::SidePairTest {
 protected:
  // Builds both sides from (dump data members, construct.json) and matches them.
  void Match(const std::string& npu_data, const std::string& npu_construct, const std::string& bench_data,
             const std::string& bench_construct) {
    BuildSides(npu_data, npu_construct, bench_data, bench_construct);
    if (npu_ && bench_) pairs_ = MatchDefault(npu_.get(), bench_.get());
  }
  // Same data and construct on both sides except `npu_entry` / `bench_entry` of node `name`.
  void MatchOne(const std::string& name, const std::string& npu_entry, const std::string& bench_entry) {
    std::string construct = R"({"Module.m.M.forward.0": null, ")" + name + R"(": "Module.m.M.forward.0"})";
    Match("\"" + name + "\": " + npu_entry, construct, "\"" + name + "\": " + bench_entry, construct);
  }

  uint32_t pairs_ = 0;
};

const std::string kName = "Torch.matmul.0.forward";

TEST_F(MatcherTest, IdenticalGraphsMatchEveryNode) {
  std::string data = "\"" + kName + "\": " + Entry(Shaped("[2, 4]") + ", " + Shaped("[4, 3]"), Shaped("[2, 3]"));
  std::string construct = R"({"Module.m.M.forward.0": null, "Torch.matmul.0.forward": "Module.m.M.forward.0",
                               "Module.m.M.backward.0": null})";
  Match(data, construct, data, construct);
  EXPECT_EQ(pairs_, 4u) << "root, two modules, one API";
  EXPECT_EQ(MatchOf("DefaultModel"), "DefaultModel");
  EXPECT_EQ(MatchOf(kName), kName);
  EXPECT_EQ(MatchOf("Module.m.M.backward.0"), "Module.m.M.backward.0");
}

TEST_F(MatcherTest, DtypeAndItemNamesAreNotCompared) {
  MatchOne(kName, Entry(Shaped("[2, 3]", "torch.float32"), Shaped("[2, 3]")),
           Entry(Shaped("[2, 3]", "torch.bfloat16"), Shaped("[2, 3]")));
  EXPECT_EQ(MatchOf(kName), kName);
  MatchOne(kName, R"({"input_args": [], "input_kwargs": {"x": )" + Shaped("[2]") + "}}",
           R"({"input_args": [], "input_kwargs": {"y": )" + Shaped("[2]") + "}}");
  EXPECT_EQ(MatchOf(kName), kName) << "kwargs under other names, same type and shape";
}

TEST_F(MatcherTest, ShapeSpellingDoesNotMatter) {
  MatchOne(kName, Entry(Shaped("[2,3]"), Shaped("[2, 3]")), Entry(Shaped("[2, 3]"), Shaped("[ 2, 3 ]")));
  EXPECT_EQ(MatchOf(kName), kName);
}

TEST_F(MatcherTest, DifferentShapesDoNotMatch) {
  MatchOne(kName, Entry(Shaped("[2, 3]"), Shaped("[2, 3]")), Entry(Shaped("[2, 3]"), Shaped("[3, 2]")));
  EXPECT_EQ(MatchOf(kName), "");
  EXPECT_EQ(MatchOf("Module.m.M.forward.0"), "Module.m.M.forward.0");
  EXPECT_EQ(pairs_, 2u);
}

TEST_F(MatcherTest, ShapesAreComparedPositionally) {
  MatchOne(kName, Entry(Shaped("[2, 3]") + ", " + Shaped("[4]"), Shaped("[1]")),
           Entry(Shaped("[4]") + ", " + Shaped("[2, 3]"), Shaped("[1]")));
  EXPECT_EQ(MatchOf(kName), "");
}

TEST_F(MatcherTest, DifferentItemCountsDoNotMatch) {
  MatchOne(kName, Entry(Shaped("[2]") + ", " + Shaped("[2]"), Shaped("[2]")), Entry(Shaped("[2]"), Shaped("[2]")));
  EXPECT_EQ(MatchOf(kName), "") << "inputs differ in number";
  MatchOne(kName, Entry(Shaped("[2]"), Shaped("[2]")), Entry(Shaped("[2]"), Shaped("[2]") + ", null"));
  EXPECT_EQ(MatchOf(kName), "") << "outputs differ in number";
}

TEST_F(MatcherTest, DifferentTypesDoNotMatch) {
  MatchOne(kName, Entry(R"({"type": "int", "value": 1})", Shaped("[2]")),
           Entry(R"({"type": "float", "value": 1.0})", Shaped("[2]")));
  EXPECT_EQ(MatchOf(kName), "");
  MatchOne(kName, Entry("null", Shaped("[2]")), Entry(Shaped("[2]"), Shaped("[2]")));
  EXPECT_EQ(MatchOf(kName), "") << "a None argument against a tensor";
}

TEST_F(MatcherTest, ScalarValuesAreNotCompared) {
  MatchOne(kName, Entry(R"({"type": "int", "value": 1}, null)", Shaped("[2]")),
           Entry(R"({"type": "int", "value": 7}, null)", Shaped("[2]")));
  EXPECT_EQ(MatchOf(kName), kName);
}

// A torch.Size argument has no shape field: msprobe compares str(value) in
// its place (§4.2).
TEST_F(MatcherTest, TorchSizeArgumentsCompareTheirValue) {
  auto expand = [](const std::string& size) {
    return Entry(Shaped("[1, 16]") + R"(, {"type": "torch.Size", "value": )" + size + "}", Shaped("[4, 16]"));
  };
  MatchOne(kName, expand("[4, 16]"), expand("[4,16]"));
  EXPECT_EQ(MatchOf(kName), kName);
  MatchOne(kName, expand("[4, 16]"), expand("[4, -1]"));
  EXPECT_EQ(MatchOf(kName), "");
}

TEST_F(MatcherTest, DataOnOneSideOnly) {
  std::string construct = R"({"Module.m.M.forward.0": null, "Torch.matmul.0.forward": "Module.m.M.forward.0"})";
  Match("\"" + kName + "\": " + Entry(Shaped("[2]"), Shaped("[2]")), construct, "", construct);
  EXPECT_EQ(MatchOf(kName), "");
  EXPECT_EQ(MatchOf("Module.m.M.forward.0"), "Module.m.M.forward.0") << "no data on either side: 0 items each";
}

TEST_F(MatcherTest, AncestorsMustBeTheSame) {
  std::string data = "\"" + kName + "\": " + Entry(Shaped("[2]"), Shaped("[2]"));
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
  std::string api = "\"" + kName + "\": " + Entry(Shaped("[2]"), Shaped("[2]"));
  Match(api + R"(, "Module.m.M.forward.0": )" + Entry(Shaped("[2]"), Shaped("[2]")), construct,
        api + R"(, "Module.m.M.forward.0": )" + Entry(Shaped("[5]"), Shaped("[2]")), construct);
  EXPECT_EQ(MatchOf("Module.m.M.forward.0"), "");
  EXPECT_EQ(MatchOf(kName), kName);
}

// Issue 9, 5a: msprobe lists a module's parameter gradients in the order
// they arrived, which differs between runs. Swapped `weight` / `bias` of
// different shapes still match, by name (COMPATIBILITY C26-pgrad-order);
// a gradient whose shape really differs does not.
TEST_F(MatcherTest, SwappedParameterGradientsOfDifferentShapesMatchByName) {
  const std::string grads = "Module.m.M.parameters_grad.0";
  const std::string construct = R"({"Module.m.M.forward.0": null, "Module.m.M.backward.0": null})";
  const std::string backward = R"("Module.m.M.backward.0": )" + Entry(Shaped("[2, 4]"), Shaped("[2, 4]"));
  auto pgrad = [&](const std::string& first, const std::string& second) {
    return backward + ", \"" + grads + "\": {" + first + ", " + second + "}";
  };
  const std::string weight = R"("weight": [)" + Shaped("[4, 4]") + "]";
  const std::string bias = R"("bias": [)" + Shaped("[4]") + "]";
  Match(pgrad(bias, weight), construct, pgrad(weight, bias), construct);
  EXPECT_EQ(MatchOf("Module.m.M.backward.0"), "Module.m.M.backward.0");
  EXPECT_EQ(MatchOf(grads), grads) << "bias, weight against weight, bias";
  const std::string wide = R"("weight": [)" + Shaped("[4, 8]") + "]";
  Match(pgrad(bias, weight), construct, pgrad(wide, bias), construct);
  EXPECT_EQ(MatchOf(grads), "") << "weight [4, 4] against weight [4, 8]";
  const std::string other = R"("scale": [)" + Shaped("[4, 4]") + "]";
  Match(pgrad(bias, weight), construct, pgrad(other, bias), construct);
  EXPECT_EQ(MatchOf(grads), "") << "no bench gradient named weight";
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
