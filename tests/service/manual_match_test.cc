#include "manual_match.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "compare/pair_compare.h"
#include "match_journal.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

using testing::TempDir;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ManualMatchTest : public ::testing::Test {
 protected:
  void Open(const testing::FixtureOptions& options) {
    graph_ = testing::ResnetLike();
    testing::WriteCompare(dir_.Join("compare.vis"), graph_, options);
    auto f = OpenGraph::Open(dir_.Join("compare.vis"), "compare.vis", {});
    ASSERT_TRUE(f.ok()) << f.error().ToString();
    file_ = *f;
  }
  uint32_t Node(const std::string& name) const { return static_cast<uint32_t>(graph_.Find(name)); }
  const SideGraph& npu() const { return *file_->side(vis::SIDE_NPU); }
  const SideGraph& bench() const { return *file_->side(vis::SIDE_BENCH); }

  TempDir dir_;
  testing::FixtureGraph graph_;
  std::shared_ptr<OpenGraph> file_;
};

TEST(ManualMatchNamesTest, ChildKeyAndOppositeName) {
  EXPECT_EQ(ChildKey("Module.layer1.0.conv1.Conv2d.forward.0", 0), "conv1.0");
  EXPECT_EQ(ChildKey("Module.layer1.0.BasicBlock.forward.0", 0), "layer1.0");
  EXPECT_EQ(ChildKey("Module.layer1.Sequential.forward.0", 0), "layer1.0");
  EXPECT_EQ(ChildKey("Torch.matmul.3.forward", 1), "matmul.1");
  EXPECT_EQ(ChildKey("Tensor.add.0", 1), "add.1");
  EXPECT_EQ(OppositeName("Module.fc.Linear.forward.0"), "Module.fc.Linear.backward.0");
  EXPECT_EQ(OppositeName("Module.fc.Linear.backward.0"), "Module.fc.Linear.forward.0");
  EXPECT_EQ(OppositeName("DefaultModel"), "DefaultModel");
}

TEST_F(ManualMatchTest, MatchingAPairMatchesExactlyThatPairWithTheBuildersMetrics) {
  Open({});
  uint32_t fwd = Node("Module.fc.Linear.forward.0"), bwd = Node("Module.fc.Linear.backward.0");
  EXPECT_EQ(npu().bucket(fwd), 5);  // grey: unmatched
  auto out = MatchNodes(file_.get(), fwd, fwd, false);
  ASSERT_EQ(out.size(), 1u);  // not its backward twin (issue 30)
  EXPECT_TRUE(out[0].ok) << out[0].error;
  EXPECT_EQ(npu().matched(fwd), static_cast<int32_t>(fwd));
  EXPECT_EQ(npu().matched(bwd), -1);
  EXPECT_EQ(bench().matched(bwd), -1);

  // The same metrics and index as ComparePair gives the builder.
  auto d = file_->Detail(vis::SIDE_NPU, fwd);
  ASSERT_TRUE(d.ok());
  auto bench_d = file_->Detail(vis::SIDE_BENCH, fwd);
  ASSERT_TRUE(bench_d.ok());
  vis::NodeDetail npu_detail = *d, bench_detail = *bench_d;
  compare::PairVerdict v = compare::ComparePair(vis::MODE_STATISTICS, out[0].npu, &npu_detail, bench_detail, nullptr);
  ASSERT_TRUE(v.has_precision);
  EXPECT_DOUBLE_EQ(npu().precision(fwd), v.precision_index);
  EXPECT_EQ(npu().bucket(fwd), compare::BucketOf(file_->meta().legend(), v.precision_index));
  EXPECT_EQ(bench().bucket(fwd), npu().bucket(fwd));  // Bench shows its partner's colour
  ASSERT_GT(d->output(0).metric_size(), 0);
  EXPECT_EQ(d->output(0).metric_size(), npu_detail.output(0).metric_size());
  EXPECT_EQ(file_->manual_matches().size(), 1u);
  EXPECT_TRUE(file_->dirty());

  // Matching an already matched node is refused; unmatching restores the state.
  auto again = MatchNodes(file_.get(), fwd, Node("Module.conv1.Conv2d.forward.0"), false);
  EXPECT_FALSE(again[0].ok);
  auto un = UnmatchNodes(file_.get(), fwd, fwd, false);
  ASSERT_EQ(un.size(), 1u);
  EXPECT_TRUE(un[0].ok);
  EXPECT_EQ(npu().matched(fwd), -1);
  EXPECT_FALSE(npu().has_precision(fwd));
  EXPECT_EQ(npu().bucket(bwd), 5);
  EXPECT_EQ(file_->Detail(vis::SIDE_NPU, fwd)->output(0).metric_size(), 0);
  EXPECT_TRUE(file_->manual_matches().empty());
  EXPECT_FALSE(UnmatchNodes(file_.get(), fwd, fwd, false)[0].ok);
}

TEST_F(ManualMatchTest, MatchAndUnmatchLeaveTheTwinsAutomaticMatchAlone) {
  testing::FixtureOptions options;
  options.unmatched = {"Module.fc.Linear.backward.0"};  // its forward twin matched by the builder
  Open(options);
  uint32_t fwd = Node("Module.fc.Linear.forward.0"), bwd = Node("Module.fc.Linear.backward.0");
  ASSERT_EQ(npu().matched(fwd), static_cast<int32_t>(fwd));
  const double precision = npu().precision(fwd);
  const int bucket = npu().bucket(fwd);
  auto out = MatchNodes(file_.get(), bwd, bwd, false);
  ASSERT_EQ(out.size(), 1u);  // one pair done, not the twin counted again
  EXPECT_TRUE(out[0].ok) << out[0].error;
  EXPECT_EQ(file_->manual_matches().size(), 1u);
  auto un = UnmatchNodes(file_.get(), bwd, bwd, false);
  ASSERT_EQ(un.size(), 1u);
  EXPECT_TRUE(un[0].ok);
  // What was there before: the twin still matched by the builder, nothing manual left to save.
  EXPECT_EQ(npu().matched(fwd), static_cast<int32_t>(fwd));
  EXPECT_DOUBLE_EQ(npu().precision(fwd), precision);
  EXPECT_EQ(npu().bucket(fwd), bucket);
  EXPECT_EQ(npu().matched(bwd), -1);
  EXPECT_TRUE(file_->manual_matches().empty());
}

TEST_F(ManualMatchTest, TheBuildersMatchesUnmatchedAreKeptUntilMatchedAgain) {
  testing::FixtureOptions options;
  options.unmatched = {"Module.fc.Linear.backward.0"};
  Open(options);
  uint32_t fwd = Node("Module.fc.Linear.forward.0"), bwd = Node("Module.fc.Linear.backward.0");
  // A manual match undone is no removal of the builder's.
  ASSERT_TRUE(MatchNodes(file_.get(), bwd, bwd, false)[0].ok);
  ASSERT_TRUE(UnmatchNodes(file_.get(), bwd, bwd, false)[0].ok);
  EXPECT_TRUE(file_->removed_automatic().empty());
  // The builder's match of the forward pair undone: recorded, whatever was matched by hand since.
  ASSERT_TRUE(UnmatchNodes(file_.get(), fwd, fwd, false)[0].ok);
  const std::map<std::string, std::string> removed = {{"Module.fc.Linear.forward.0", "Module.fc.Linear.forward.0"}};
  EXPECT_EQ(file_->removed_automatic(), removed);
  ASSERT_TRUE(MatchNodes(file_.get(), fwd, fwd, false)[0].ok);
  EXPECT_TRUE(file_->removed_automatic().empty());
  ASSERT_TRUE(UnmatchNodes(file_.get(), fwd, fwd, false)[0].ok);  // matched by hand now, built so all the same
  EXPECT_EQ(file_->removed_automatic(), removed);
  // Its partner given another node does not bring it back.
  ASSERT_TRUE(MatchNodes(file_.get(), fwd, bwd, false, nullptr).size() == 1);
  EXPECT_EQ(file_->removed_automatic(), removed);
}

TEST_F(ManualMatchTest, WithChildrenPairsChildrenByShortName) {
  testing::FixtureOptions options;
  options.unmatched.clear();
  for (const auto& n : testing::ResnetLike().nodes) {
    if (n.name.find("layer4") != std::string::npos) options.unmatched.push_back(n.name);
  }
  Open(options);
  uint32_t seq = Node("Module.layer4.Sequential.forward.0");
  uint32_t back = Node("Module.layer4.Sequential.backward.0");
  auto out = MatchNodes(file_.get(), seq, seq, true);
  // The pair, its two blocks and four leaves; the backward twin only when picked itself.
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(npu().matched(back), -1);
  auto twin = MatchNodes(file_.get(), back, back, true);
  ASSERT_EQ(twin.size(), 7u);
  out.insert(out.end(), twin.begin(), twin.end());
  for (const auto& o : out) {
    EXPECT_TRUE(o.ok) << o.npu << ": " << o.error;
    EXPECT_EQ(o.npu, o.bench);
  }
  for (uint32_t n = 0; n < npu().size(); ++n) EXPECT_GE(npu().matched(n), 0) << npu().name(n);
  auto un = UnmatchNodes(file_.get(), seq, seq, true);
  EXPECT_EQ(un.size(), 7u);
  EXPECT_GE(npu().matched(back), 0);
  EXPECT_EQ(UnmatchNodes(file_.get(), back, back, true).size(), 7u);
  for (const auto& n : options.unmatched) EXPECT_EQ(npu().matched(Node(n)), -1) << n;
}

TEST_F(ManualMatchTest, ConfigRoundTripInTheReferenceFormat) {
  Open({});
  uint32_t fwd = Node("Module.fc.Linear.forward.0");
  MatchNodes(file_.get(), fwd, fwd, false);
  std::string config = dir_.Join("compare.vis.config");
  ASSERT_TRUE(WriteMatchConfig(*file_, config, "compare.vis.config").ok());
  // tb_graph_ascend's json.dump(indent=4, ensure_ascii=False): no newline at the end.
  EXPECT_EQ(Read(config), "{\n    \"Module.fc.Linear.forward.0\": \"Module.fc.Linear.forward.0\"\n}");

  // A fresh open of the file applies it again, pair by pair.
  auto f = OpenGraph::Open(dir_.Join("compare.vis"), "compare.vis", {});
  ASSERT_TRUE(f.ok());
  auto out = ApplyMatchConfig(f->get(), config, "compare.vis.config");
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_TRUE((*out)[0].ok);
  EXPECT_EQ((*f)->side(vis::SIDE_NPU)->matched(fwd), static_cast<int32_t>(fwd));
  EXPECT_DOUBLE_EQ((*f)->side(vis::SIDE_NPU)->precision(fwd), npu().precision(fwd));
}

TEST_F(ManualMatchTest, BadConfigsNameTheFileAndPlace) {
  Open({});
  std::string path = dir_.Join("bad.vis.config");
  std::ofstream(path) << "{\"Module.fc.Linear.forward.0\": ";
  auto out = ApplyMatchConfig(file_.get(), path, "bad.vis.config");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().file, "bad.vis.config");
  EXPECT_NE(out.error().where.find("byte"), std::string::npos);
  std::ofstream(path, std::ios::trunc) << "{\"Module.fc.Linear.forward.0\": 3}";
  out = ApplyMatchConfig(file_.get(), path, "bad.vis.config");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().where, "key \"Module.fc.Linear.forward.0\"");
  std::ofstream(path, std::ios::trunc) << "{\"No.such.node\": \"Module.fc.Linear.forward.0\"}";
  out = ApplyMatchConfig(file_.get(), path, "bad.vis.config");
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE((*out)[0].ok);
  EXPECT_EQ((*out)[0].error, "no NPU node of that name");
}

TEST_F(ManualMatchTest, TheJournalReplaysEditsOnAFreshOpenAndCutsATornLastLine) {
  Open({});
  uint32_t fwd = Node("Module.fc.Linear.forward.0"), bwd = Node("Module.fc.Linear.backward.0");
  const std::string journal = JournalPath(dir_.Join("edits"), dir_.path(), "compare.vis");
  // Match, unmatch, match again: each edit's pairs, as the service appends them.
  ASSERT_TRUE(AppendToJournal(journal, "compare.vis", "", true, MatchNodes(file_.get(), fwd, fwd, false)).ok());
  ASSERT_TRUE(AppendToJournal(journal, "compare.vis", "", false, UnmatchNodes(file_.get(), fwd, fwd, false)).ok());
  ASSERT_TRUE(AppendToJournal(journal, "compare.vis", "", true, MatchNodes(file_.get(), fwd, fwd, false)).ok());
  const std::string whole = Read(journal);
  // The server killed in the middle of the next append.
  std::ofstream(journal, std::ios::app) << "{\"op\":\"unmatch\",\"npu\":\"Module.fc.Lin";

  auto j = RecoverJournal(journal);
  ASSERT_TRUE(j.ok()) << j.error().ToString();
  ASSERT_EQ(j->warnings.size(), 1u);
  EXPECT_NE(j->warnings[0].find("line 5: torn last line"), std::string::npos) << j->warnings[0];
  EXPECT_EQ(Read(journal), whole);  // cut back to its last whole line
  EXPECT_EQ(j->base, "");
  ASSERT_EQ(j->entries.size(), 3u);
  EXPECT_FALSE(j->entries[1].match);

  auto fresh = OpenGraph::Open(dir_.Join("compare.vis"), "compare.vis", {});
  ASSERT_TRUE(fresh.ok());
  for (const auto& o : ReplayEdits(fresh->get(), j->entries)) EXPECT_TRUE(o.ok) << o.npu << ": " << o.error;
  const SideGraph& n = *(*fresh)->side(vis::SIDE_NPU);
  EXPECT_EQ(n.matched(fwd), static_cast<int32_t>(fwd));
  EXPECT_EQ(n.matched(bwd), -1);
  EXPECT_DOUBLE_EQ(n.precision(fwd), npu().precision(fwd));
  EXPECT_EQ(n.bucket(fwd), npu().bucket(fwd));
  EXPECT_EQ((*fresh)->manual_matches(), file_->manual_matches());
  EXPECT_TRUE((*fresh)->dirty());

  // The next append starts on a line of its own; removing the journal (a save) empties it.
  ASSERT_TRUE(AppendToJournal(journal, "compare.vis", "", false, UnmatchNodes(file_.get(), fwd, fwd, false)).ok());
  j = RecoverJournal(journal);
  ASSERT_TRUE(j.ok());
  EXPECT_TRUE(j->warnings.empty()) << j->warnings[0];
  EXPECT_EQ(j->entries.size(), 4u);
  ASSERT_TRUE(RemoveJournal(journal).ok());
  j = RecoverJournal(journal);
  ASSERT_TRUE(j.ok());
  EXPECT_TRUE(j->entries.empty());
  EXPECT_TRUE(RemoveJournal(journal).ok());  // already gone
}

TEST_F(ManualMatchTest, AJournalNamesItsBaseConfigAndSkipsDamagedLines) {
  Open({});
  uint32_t fwd = Node("Module.fc.Linear.forward.0");
  const std::string journal = JournalPath(dir_.Join("edits"), dir_.path(), "compare.vis");
  EXPECT_NE(journal, JournalPath(dir_.Join("edits"), dir_.path() + "/other", "compare.vis"));
  EXPECT_EQ(journal.rfind(dir_.Join("edits/"), 0), 0u);
  ASSERT_TRUE(
      AppendToJournal(journal, "compare.vis", "compare.vis.config", true, MatchNodes(file_.get(), fwd, fwd, false))
          .ok());
  // The header is written once: a later append's base is not.
  ASSERT_TRUE(AppendToJournal(journal, "compare.vis", "other.vis.config", false,
                              UnmatchNodes(file_.get(), fwd, fwd, false))
                  .ok());
  std::ofstream(journal, std::ios::app) << "not json\n{\"op\":\"rename\"}\n";
  auto j = RecoverJournal(journal);
  ASSERT_TRUE(j.ok()) << j.error().ToString();
  EXPECT_EQ(j->base, "compare.vis.config");
  EXPECT_EQ(j->entries.size(), 2u);  // the pair matched, then unmatched (not its twin)
  ASSERT_EQ(j->warnings.size(), 2u);
  EXPECT_NE(j->warnings[0].find("line 4: not an edit"), std::string::npos) << j->warnings[0];
  // A pair whose nodes are gone is reported, not fatal.
  auto out = ReplayEdits(file_.get(), {{true, "Module.gone.forward.0", "Module.fc.Linear.forward.0"}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].ok);
  EXPECT_EQ(out[0].error, "no NPU node of that name");
}

TEST(ManualMatchModeTest, BuildsAndTensorComparesCannotBeMatchedByHand) {
  TempDir dir;
  testing::FixtureOptions build;
  build.kind = vis::GRAPH_BUILD;
  testing::WriteCompare(dir.Join("build.vis"), testing::ResnetLike(), build);
  auto f = OpenGraph::Open(dir.Join("build.vis"), "build.vis", {});
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_NE(MatchingUnsupported(**f), "");
  testing::FixtureOptions tensor;
  tensor.mode = vis::MODE_TENSOR;
  testing::WriteCompare(dir.Join("tensor.vis"), testing::ResnetLike(), tensor);
  auto t = OpenGraph::Open(dir.Join("tensor.vis"), "tensor.vis", {});
  ASSERT_TRUE(t.ok());
  EXPECT_NE(MatchingUnsupported(**t), "");
}

}  // namespace
}  // namespace graph_ascend::service
