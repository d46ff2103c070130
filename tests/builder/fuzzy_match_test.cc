// Fuzzy matching, -f (reference §6.3.2): modules and API collections by name
// with a zipped shape check and no ancestor check; APIs only through their
// matched parent, by name and call order with the call counts removed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "match/matcher.h"
#include "test_util.h"

namespace graph_ascend::match {
namespace {

using graph_ascend::testing::Entry;
using graph_ascend::testing::Shaped;

TEST(FuzzyKeyTest, CallCountsAreRemoved) {
  EXPECT_EQ(FuzzyKey("Torch.matmul.0.forward"), "Torch.matmul.forward");
  EXPECT_EQ(FuzzyKey("Torch.matmul.15.backward"), "Torch.matmul.backward");
  EXPECT_EQ(FuzzyKey("Module.layers.12.mlp.MLP.forward.3"), "Module.layers.mlp.MLP.forward.3")
      << "a trailing number has no dot after it";
  EXPECT_EQ(FuzzyKey("Torch.matmul.forward"), "Torch.matmul.forward");
  EXPECT_EQ(FuzzyKey("Module.a.b1.c.forward.0"), "Module.a.b1.c.forward.0") << "only whole segments";
  EXPECT_EQ(FuzzyKey(""), "");
}

// Python's re.sub(r"\.\d+\.", ".", name): the dot after a number belongs to
// that match, so it cannot start the next one.
TEST(FuzzyKeyTest, MatchesDoNotOverlap) {
  EXPECT_EQ(FuzzyKey("Module.layers.0.1.attn.A.forward.0"), "Module.layers.1.attn.A.forward.0");
  EXPECT_EQ(FuzzyKey("Module.a.1.2.3.b"), "Module.a.2.b");
}

TEST(FuzzyKeyTest, RankSuffixesAreRemoved) {
  EXPECT_EQ(FuzzyKey("Module.x_rank12.X.forward.0"), "Module.x.X.forward.0");
  EXPECT_EQ(FuzzyKey("Distributed.send.0.forward_rank3"), "Distributed.send.forward");
  EXPECT_EQ(FuzzyKey("Torch.matmul_rank.0.forward"), "Torch.matmul_rank.forward") << "no digits: kept";
  // The call counts go first: removing "_rank2" does not make ".1." a count.
  EXPECT_EQ(FuzzyKey("Module.a.1_rank2.b"), "Module.a.1.b");
}

const std::string kModule = "Module.m.M.forward.0";
const std::string kIO = Entry(Shaped("[2, 3]"), Shaped("[2, 3]"));

// One dump member `"name": entry`.
std::string Member(const std::string& name, const std::string& entry = kIO) { return "\"" + name + "\": " + entry; }

// construct.json: kModule at the top, `children` under it.
std::string ModuleConstruct(const std::vector<std::string>& children) {
  std::string construct = "{\"" + kModule + "\": null";
  for (const std::string& c : children) construct += ", \"" + c + "\": \"" + kModule + "\"";
  return construct + "}";
}

// Dump members for `names`, each with entry kIO.
std::string Members(const std::vector<std::string>& names) {
  std::string data;
  for (const std::string& n : names) data += (data.empty() ? "" : ", ") + Member(n);
  return data;
}

class FuzzyMatchTest : public graph_ascend::testing::SidePairTest {
 protected:
  // Builds both sides and matches them fuzzily (or by default, to show the
  // difference).
  void Match(const std::string& npu_data, const std::string& npu_construct, const std::string& bench_data,
             const std::string& bench_construct, bool fuzzy = true, bool check_shape = true) {
    BuildSides(npu_data, npu_construct, bench_data, bench_construct);
    if (!npu_ || !bench_) return;
    pairs_ = fuzzy ? MatchFuzzy(npu_.get(), bench_.get(), check_shape) : MatchDefault(npu_.get(), bench_.get());
  }
  // APIs `npu` and `bench` under kModule on each side.
  void MatchApis(const std::vector<std::string>& npu, const std::vector<std::string>& bench, bool fuzzy = true) {
    Match(Members(npu), ModuleConstruct(npu), Members(bench), ModuleConstruct(bench), fuzzy);
  }

  uint32_t pairs_ = 0;
};

// The reference's observed case: Bench calls matmul 7 and 8 where the NPU
// run calls 0 and 1.
TEST_F(FuzzyMatchTest, ApiCallCountsAreIgnoredUnderAMatchedParent) {
  const std::vector<std::string> npu = {"Torch.matmul.0.forward", "Torch.matmul.1.forward"};
  const std::vector<std::string> bench = {"Torch.matmul.7.forward", "Torch.matmul.8.forward"};
  MatchApis(npu, bench);
  EXPECT_EQ(MatchOf("Torch.matmul.0.forward"), "Torch.matmul.7.forward");
  EXPECT_EQ(MatchOf("Torch.matmul.1.forward"), "Torch.matmul.8.forward");
  EXPECT_EQ(MatchOf(kModule), kModule);
  EXPECT_EQ(pairs_, 4u) << "root, module, two APIs";

  MatchApis(npu, bench, /*fuzzy=*/false);
  EXPECT_EQ(MatchOf("Torch.matmul.0.forward"), "");
  EXPECT_EQ(MatchOf("Torch.matmul.1.forward"), "");
  EXPECT_EQ(pairs_, 2u);
}

TEST_F(FuzzyMatchTest, ApisPairByOccurrenceOfTheirStrippedName) {
  MatchApis({"Torch.matmul.0.forward", "Torch.add.0.forward", "Torch.matmul.1.forward", "Torch.matmul.2.forward"},
            {"Torch.add.4.forward", "Torch.matmul.5.forward", "Torch.matmul.6.forward", "Tensor.matmul.0.forward"});
  EXPECT_EQ(MatchOf("Torch.matmul.0.forward"), "Torch.matmul.5.forward");
  EXPECT_EQ(MatchOf("Torch.matmul.1.forward"), "Torch.matmul.6.forward");
  EXPECT_EQ(MatchOf("Torch.add.0.forward"), "Torch.add.4.forward");
  EXPECT_EQ(MatchOf("Torch.matmul.2.forward"), "") << "a third call Bench does not make; Tensor.matmul is another API";
  EXPECT_EQ(pairs_, 5u);
}

TEST_F(FuzzyMatchTest, ForwardAndBackwardAreDifferentKeys) {
  MatchApis({"Torch.mul.0.forward", "Torch.mul.0.backward"}, {"Torch.mul.3.backward", "Torch.mul.3.forward"});
  EXPECT_EQ(MatchOf("Torch.mul.0.forward"), "Torch.mul.3.forward");
  EXPECT_EQ(MatchOf("Torch.mul.0.backward"), "Torch.mul.3.backward");
}

TEST_F(FuzzyMatchTest, ApiShapeMismatchRejectsOnlyThatPair) {
  const std::vector<std::string> npu = {"Torch.matmul.0.forward", "Torch.matmul.1.forward"};
  const std::vector<std::string> bench = {"Torch.matmul.4.forward", "Torch.matmul.5.forward"};
  Match(Members(npu), ModuleConstruct(npu),
        Member(bench[0]) + ", " + Member(bench[1], Entry(Shaped("[2, 3]"), Shaped("[3, 2]"))), ModuleConstruct(bench));
  EXPECT_EQ(MatchOf("Torch.matmul.0.forward"), "Torch.matmul.4.forward");
  EXPECT_EQ(MatchOf("Torch.matmul.1.forward"), "") << "output [2, 3] against [3, 2]";
}

// Items are zipped: the shorter list decides how many are compared; dtype
// and the item count are not checked.
TEST_F(FuzzyMatchTest, ModuleShapesAreZippedAndCountsIgnored) {
  const std::string construct = ModuleConstruct({});
  Match(Member(kModule, Entry(Shaped("[2, 3]") + ", " + Shaped("[4]"), Shaped("[2]") + ", " + Shaped("[9]"))),
        construct, Member(kModule, Entry(Shaped("[2, 3]", "torch.bfloat16"), Shaped("[2]"))), construct);
  EXPECT_EQ(MatchOf(kModule), kModule);
  Match(Member(kModule, Entry(Shaped("[2, 3]") + ", " + Shaped("[4]"), Shaped("[2]"))), construct,
        Member(kModule, Entry(Shaped("[2, 3]"), Shaped("[2]"))), construct, /*fuzzy=*/false);
  EXPECT_EQ(MatchOf(kModule), "") << "by default the counts must agree";
  Match(Member(kModule, Entry(Shaped("[2, 3]"), Shaped("[2]"))), construct, "", construct);
  EXPECT_EQ(MatchOf(kModule), kModule) << "no data on the Bench side: nothing to zip";
  Match(Member(kModule, Entry(Shaped("[4]") + ", " + Shaped("[2, 3]"), Shaped("[2]"))), construct,
        Member(kModule, Entry(Shaped("[2, 3]") + ", " + Shaped("[4]"), Shaped("[2]"))), construct);
  EXPECT_EQ(MatchOf(kModule), "") << "positions are compared, not sets";
  Match(Member(kModule, Entry(Shaped("[2]"), Shaped("[2]"))), construct,
        Member(kModule, Entry(Shaped("[2]"), Shaped("[3]"))), construct);
  EXPECT_EQ(MatchOf(kModule), "") << "outputs are checked too";
}

// Non-tensor arguments have msprobe's normalised shape (§4.2): "[]" for
// scalars, str(value) for a torch.Size, "(3,)" for a slice, none for None;
// "[]" is not the shape [] of a 0-d tensor.
TEST_F(FuzzyMatchTest, NonTensorArgumentShapes) {
  auto api = [](const std::string& arg) { return Entry(Shaped("[4]") + ", " + arg, Shaped("[4]")); };
  const std::string zero_d = Shaped("[]"), none = "null";
  const std::string one = R"({"type": "int", "value": 1})", two = R"({"type": "float", "value": 2.0})";
  const std::string slice = R"({"type": "slice", "value": [0, 2, null]})";
  auto size = [](const std::string& v) { return R"({"type": "torch.Size", "value": )" + v + "}"; };
  const std::vector<std::string> names = {"Torch.a.0.forward", "Torch.b.0.forward", "Torch.c.0.forward",
                                          "Torch.d.0.forward", "Torch.e.0.forward", "Torch.f.0.forward"};
  const std::vector<std::string> npu = {zero_d, none, one, slice, size("[4, 16]"), size("[4, 16]")};
  const std::vector<std::string> bench = {one, one, two, one, size("[4, -1]"), size("[4, 16]")};
  std::string npu_data = Member(kModule), bench_data = Member(kModule);
  for (size_t i = 0; i < names.size(); ++i) {
    npu_data += ", " + Member(names[i], api(npu[i]));
    bench_data += ", " + Member(names[i], api(bench[i]));
  }
  Match(npu_data, ModuleConstruct(names), bench_data, ModuleConstruct(names));
  EXPECT_EQ(MatchOf("Torch.a.0.forward"), "") << "0-d tensor against an int";
  EXPECT_EQ(MatchOf("Torch.b.0.forward"), "") << "None against an int";
  EXPECT_EQ(MatchOf("Torch.c.0.forward"), "Torch.c.0.forward") << "int against float: both []";
  EXPECT_EQ(MatchOf("Torch.d.0.forward"), "") << "slice against an int";
  EXPECT_EQ(MatchOf("Torch.e.0.forward"), "") << "torch.Size [4, 16] against [4, -1]";
  EXPECT_EQ(MatchOf("Torch.f.0.forward"), "Torch.f.0.forward");
}

// An API is matched only through its parent: under an unmatched module it
// stays unmatched even when Bench has the same name under the same module.
TEST_F(FuzzyMatchTest, ApisUnderAnUnmatchedParentStayUnmatched) {
  const std::string construct = ModuleConstruct({"Torch.relu.0.forward"});
  Match(Member(kModule, Entry(Shaped("[2]"), Shaped("[2]"))) + ", " + Member("Torch.relu.0.forward"), construct,
        Member(kModule, Entry(Shaped("[5]"), Shaped("[2]"))) + ", " + Member("Torch.relu.0.forward"), construct);
  EXPECT_EQ(MatchOf(kModule), "");
  EXPECT_EQ(MatchOf("Torch.relu.0.forward"), "");
  Match(Member(kModule, Entry(Shaped("[2]"), Shaped("[2]"))) + ", " + Member("Torch.relu.0.forward"), construct,
        Member(kModule, Entry(Shaped("[5]"), Shaped("[2]"))) + ", " + Member("Torch.relu.0.forward"), construct,
        /*fuzzy=*/false);
  EXPECT_EQ(MatchOf("Torch.relu.0.forward"), "Torch.relu.0.forward") << "default matching visits every node";
}

TEST_F(FuzzyMatchTest, ApisUnderAnotherModuleDoNotMatch) {
  Match(Member("Torch.relu.0.forward"),
        R"({"Module.a.A.forward.0": null, "Torch.relu.0.forward": "Module.a.A.forward.0"})",
        Member("Torch.relu.0.forward"),
        R"({"Module.b.B.forward.0": null, "Torch.relu.0.forward": "Module.b.B.forward.0"})");
  EXPECT_EQ(MatchOf("Torch.relu.0.forward"), "");
  EXPECT_EQ(pairs_, 1u) << "the root only";
}

// Ancestors are not compared: a module moved under another parent matches,
// and its APIs through it.
TEST_F(FuzzyMatchTest, ModuleAncestorsAreNotChecked) {
  const std::string p = "Module.p.P.forward.0";
  std::string npu =
      R"({"Module.a.A.forward.0": null, ")" + p + R"(": "Module.a.A.forward.0", "Torch.add.0.forward": ")" + p + "\"}";
  std::string bench =
      R"({"Module.b.B.forward.0": null, ")" + p + R"(": "Module.b.B.forward.0", "Torch.add.3.forward": ")" + p + "\"}";
  std::string npu_data = Member(p) + ", " + Member("Torch.add.0.forward");
  std::string bench_data = Member(p) + ", " + Member("Torch.add.3.forward");
  Match(npu_data, npu, bench_data, bench);
  EXPECT_EQ(MatchOf(p), p);
  EXPECT_EQ(MatchOf("Torch.add.0.forward"), "Torch.add.3.forward");
  EXPECT_EQ(MatchOf("Module.a.A.forward.0"), "");
  Match(npu_data, npu, bench_data, bench, /*fuzzy=*/false);
  EXPECT_EQ(MatchOf(p), "") << "default matching compares ancestors";
}

// APIs at the top level match through the root (a single API) or through
// their Apis_Between_Modules collection (a run of two or more, §5.8).
TEST_F(FuzzyMatchTest, TopLevelApisMatchThroughTheRootOrTheirCollection) {
  auto side = [](const std::string& add, const std::string& mul_a, const std::string& mul_b, std::string* data) {
    *data = Member(add) + ", " + Member(mul_a) + ", " + Member(mul_b);
    return "{\"" + add + "\": null, \"" + kModule + "\": null, \"" + mul_a + "\": null, \"" + mul_b + "\": null}";
  };
  std::string npu_data, bench_data;
  std::string npu = side("Torch.add.0.forward", "Torch.mul.0.forward", "Torch.mul.1.forward", &npu_data);
  std::string bench = side("Torch.add.3.forward", "Torch.mul.4.forward", "Torch.mul.5.forward", &bench_data);
  Match(npu_data, npu, bench_data, bench);
  const graph::Graph& g = *npu_->graph;
  const int32_t mul = g.Find(std::string_view("Torch.mul.0.forward"));
  ASSERT_NE(mul, graph::kNoNode);
  EXPECT_EQ(g.Name(static_cast<uint32_t>(g.parent[mul])), "Apis_Between_Modules.0") << "a run of two top-level APIs";
  EXPECT_EQ(MatchOf("Torch.add.0.forward"), "Torch.add.3.forward");
  EXPECT_EQ(MatchOf("Apis_Between_Modules.0"), "Apis_Between_Modules.0");
  EXPECT_EQ(MatchOf("Torch.mul.0.forward"), "Torch.mul.4.forward");
  EXPECT_EQ(MatchOf("Torch.mul.1.forward"), "Torch.mul.5.forward");
  EXPECT_EQ(MatchOf(kModule), kModule);
  EXPECT_EQ(pairs_, 6u);
}

// Parallel-merge compares (§9) match fuzzily without the shape check.
TEST_F(FuzzyMatchTest, WithoutShapeCheck) {
  MatchApis({"Torch.matmul.0.forward"}, {"Torch.matmul.2.forward"});
  EXPECT_EQ(MatchOf("Torch.matmul.0.forward"), "Torch.matmul.2.forward");
  const std::string construct = ModuleConstruct({"Torch.matmul.0.forward"});
  std::string npu = Member(kModule, Entry(Shaped("[2]"), Shaped("[2]"))) + ", " + Member("Torch.matmul.0.forward");
  std::string bench = Member(kModule, Entry(Shaped("[8]"), Shaped("[8]"))) + ", " +
                      Member("Torch.matmul.0.forward", Entry(Shaped("[1]"), Shaped("[1]")));
  Match(npu, construct, bench, construct, true, /*check_shape=*/false);
  EXPECT_EQ(MatchOf(kModule), kModule);
  EXPECT_EQ(MatchOf("Torch.matmul.0.forward"), "Torch.matmul.0.forward");
  Match(npu, construct, bench, construct, true, /*check_shape=*/true);
  EXPECT_EQ(MatchOf(kModule), "");
  EXPECT_EQ(MatchOf("Torch.matmul.0.forward"), "");
}

}  // namespace
}  // namespace graph_ascend::match
