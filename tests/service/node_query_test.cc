#include "node_query.h"

#include <gtest/gtest.h>

#include "open_graph.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

using testing::TempDir;

class NodeQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    graph_ = testing::ResnetLike();
    testing::FixtureOptions options;
    options.micro_steps = 2;
    testing::WriteCompare(dir_.Join("compare.vis"), graph_, options);
    auto f = OpenGraph::Open(dir_.Join("compare.vis"), "compare.vis", {});
    ASSERT_TRUE(f.ok()) << f.error().ToString();
    file_ = *f;
  }
  const SideGraph& npu() const { return *file_->side(vis::SIDE_NPU); }
  std::vector<std::string> Names(const std::vector<uint32_t>& nodes) const {
    std::vector<std::string> out;
    for (uint32_t n : nodes) out.emplace_back(npu().name(n));
    return out;
  }
  std::vector<uint32_t> Search(const std::string& q, bool regex, bool ci, int32_t micro = -1) const {
    auto r = SearchNodes(npu(), SearchSpec{q, regex, ci, micro});
    EXPECT_TRUE(r.ok()) << r.error().ToString();
    return r.ok() ? *r : std::vector<uint32_t>{};
  }

  TempDir dir_;
  testing::FixtureGraph graph_;
  std::shared_ptr<OpenGraph> file_;
};

TEST_F(NodeQueryTest, SubstringSearchIsCaseSensitiveUnlessAsked) {
  EXPECT_EQ(Names(Search("fc.Linear", false, false)),
            (std::vector<std::string>{"Module.fc.Linear.forward.0", "Module.fc.Linear.backward.0"}));
  EXPECT_TRUE(Search("FC.LINEAR", false, false).empty());
  EXPECT_EQ(Search("FC.LINEAR", false, true).size(), 2u);
  // Every node of layer2 (Sequential, 2 blocks, 4 leaves) in both directions.
  EXPECT_EQ(Search("layer2", false, false).size(), 14u);
  EXPECT_TRUE(Search("", false, false).empty());
  // A hit never spans two names.
  EXPECT_TRUE(Search("forward.0\nModule", false, false).empty());
}

TEST_F(NodeQueryTest, RegexAnchorsAtNameBoundaries) {
  EXPECT_EQ(Names(Search("^Module\\.fc\\..*forward", true, false)),
            (std::vector<std::string>{"Module.fc.Linear.forward.0"}));
  EXPECT_EQ(Search("BasicBlock\\.backward\\.0$", true, false).size(), 8u);
  EXPECT_EQ(Search("^defaultmodel$", true, true), (std::vector<uint32_t>{0}));
  EXPECT_TRUE(Search("^defaultmodel$", true, false).empty());
  // A class that can match a newline still only matches within a name.
  EXPECT_EQ(Names(Search("Linear[^x]*avgpool", true, false)), std::vector<std::string>{});
  auto bad = SearchNodes(npu(), SearchSpec{"(unclosed", true, false, -1});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad regular expression"), std::string::npos);
}

TEST_F(NodeQueryTest, SearchHonoursTheMicroStep) {
  EXPECT_EQ(Search("layer1", false, false, -1).size(), 14u);
  EXPECT_EQ(Search("layer1", false, false, 0).size(), 7u);  // forward half
  EXPECT_EQ(Search("layer1", false, false, 1).size(), 7u);  // backward half
}

TEST_F(NodeQueryTest, FiltersByBucketUnmatchedAndOverflow) {
  FilterSpec unmatched;
  unmatched.unmatched = true;
  EXPECT_EQ(Names(FilterNodes(npu(), true, unmatched)),
            (std::vector<std::string>{"Module.fc.Linear.forward.0", "Module.fc.Linear.backward.0"}));
  // The legend's grey entry selects the same nodes through the buckets.
  FilterSpec grey;
  grey.buckets = {5};
  EXPECT_EQ(FilterNodes(npu(), true, grey), FilterNodes(npu(), true, unmatched));

  FilterSpec overflow;
  overflow.overflow = {vis::OVERFLOW_CRITICAL};
  EXPECT_EQ(Names(FilterNodes(npu(), true, overflow)), (std::vector<std::string>{"Module.relu.ReLU.forward.0"}));
  overflow.overflow = {vis::OVERFLOW_CRITICAL, vis::OVERFLOW_HIGH};
  EXPECT_EQ(FilterNodes(npu(), true, overflow).size(), 2u);

  // Every matched node is in exactly one numeric bucket: its precision's.
  size_t total = 0;
  for (int32_t b = 0; b < 5; ++b) {
    FilterSpec spec;
    spec.buckets = {b};
    for (uint32_t n : FilterNodes(npu(), true, spec)) {
      EXPECT_EQ(npu().bucket(n), b);
      EXPECT_GE(npu().precision(n), 0.2 * b - 1e-9);
      EXPECT_LE(npu().precision(n), 0.2 * (b + 1) + 1e-9);
      ++total;
    }
  }
  EXPECT_EQ(total, npu().size() - 1 - 2);  // all but the root and the unmatched pair

  FilterSpec leaves;
  leaves.buckets = {0, 1, 2, 3, 4};
  leaves.leaves_only = true;
  for (uint32_t n : FilterNodes(npu(), true, leaves)) EXPECT_EQ(npu().child_count(n), 0u);
  EXPECT_TRUE(FilterNodes(npu(), true, FilterSpec{}).empty());
}

// A side's search keeps its recent results: the same spec gives the same hits
// object (paging does not search again), the least recently used goes first.
TEST_F(NodeQueryTest, ASidesSearchKeepsItsRecentResults) {
  const SideSearch& search = file_->search(vis::SIDE_NPU);
  auto first = search.Find(SearchSpec{"layer2", false, false, -1});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(**first, Search("layer2", false, false));
  auto again = search.Find(SearchSpec{"layer2", false, false, -1});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), first->get());
  // Another spec of the same query, and the other side, are searches of their own.
  auto folded = search.Find(SearchSpec{"layer2", false, true, -1});
  ASSERT_TRUE(folded.ok());
  EXPECT_NE(folded->get(), first->get());
  auto bench = file_->search(vis::SIDE_BENCH).Find(SearchSpec{"layer2", false, false, -1});
  ASSERT_TRUE(bench.ok());
  EXPECT_NE(bench->get(), first->get());
  EXPECT_EQ(**bench, **first);  // the fixture's Bench has the NPU's names

  // kKept other searches after "layer2" was last used: it is searched again.
  for (size_t i = 0; i < SideSearch::kKept; ++i) {
    ASSERT_TRUE(search.Find(SearchSpec{"block" + std::to_string(i), false, false, -1}).ok());
  }
  auto later = search.Find(SearchSpec{"layer2", false, false, -1});
  ASSERT_TRUE(later.ok());
  EXPECT_NE(later->get(), first->get());
  EXPECT_EQ(**later, **first);

  auto bad = search.Find(SearchSpec{"(unclosed", true, false, -1});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad regular expression"), std::string::npos);
}

}  // namespace
}  // namespace graph_ascend::service
