// Manual matches re-rank the divergence (plugin/service/rerank.h,
// docs/DIVERGENCE.md, "Limits") on compares that bin/graph-ascend
// builds from the real msprobe dumps of samples/: the ranking GetDivergence
// answers follows a match and an unmatch, comes back to the stored one when
// the matches do, survives a restart (the journal), and over the build's
// matches the service's ranking is the builder's.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "../builder/cli_runner.h"
#include "open_graph.h"
#include "graph_service.h"
#include "rerank.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

// renamed_act: the activation class is GELU on the NPU side and GELUActivation
// on the Bench side, so both blocks' activations stay unmatched; in blocks.1
// it also computes differently, and the build ranks the unmatched module.
constexpr char kGelu[] = "Module.blocks.1.act.GELU.forward.0";
constexpr char kGeluBench[] = "Module.blocks.1.act.GELUActivation.forward.0";
constexpr char kGeluOp[] = "Functional.gelu.1.forward";

class RerankTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logdir_ = dir_.Join("logdir");
    std::filesystem::create_directories(logdir_);
  }

  // Builds samples/<sample>/compare.json into logdir/<out>; the .vis's path relative to the logdir.
  std::string Build(const std::string& sample, const std::string& out) {
    graph_ascend::testing::RunResult r = graph_ascend::testing::RunTool(
        {"graph", "-i", graph_ascend::testing::Sample(sample + "/compare.json"), "-o", logdir_ + "/" + out});
    EXPECT_EQ(r.status, 0) << r.err;
    for (const auto& e : std::filesystem::directory_iterator(logdir_ + "/" + out)) {
      if (e.path().extension() == ".vis") return out + "/" + e.path().filename().string();
    }
    ADD_FAILURE() << "no .vis in " << out;
    return "";
  }

  // A fresh service on the same log directory and cache (a restart).
  void Start(size_t journal_compact_bytes = ServiceOptions().journal_compact_bytes) {
    service_.reset();
    service_ = std::make_unique<testing::InProcessService>();
    ServiceOptions options;
    options.logdir = logdir_;
    options.cache_dir = dir_.Join("cache");
    options.journal_compact_bytes = journal_compact_bytes;
    service_->Start(options, dir_.Join("s.sock"));
  }

  FileInfo Info(const std::string& file) {
    FileInfo info;
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    grpc::Status st = service_->stub()->GetFileInfo(&ctx, req, &info);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return info;
  }

  // The match edits journals of the cache (match_journal.h).
  std::vector<std::filesystem::path> Journals() {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir_.Join("cache/edits"), ec)) out.push_back(e.path());
    return out;
  }

  DivergenceReply Divergence(const std::string& file) {
    DivergenceReply reply;
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    grpc::Status st = service_->stub()->GetDivergence(&ctx, req, &reply);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return reply;
  }

  int32_t Find(const std::string& file, vis::Side side, const std::string& name) {
    grpc::ClientContext ctx;
    SearchRequest search;
    search.mutable_view()->set_session("s");
    search.mutable_view()->set_file(file);
    search.mutable_view()->set_side(side);
    search.mutable_view()->set_micro_step(-1);
    search.set_query(name);
    NodeList hits;
    grpc::Status st = service_->stub()->Search(&ctx, search, &hits);
    EXPECT_TRUE(st.ok()) << st.error_message();
    for (const auto& h : hits.hits()) {
      if (h.name() == name) return h.index();
    }
    ADD_FAILURE() << "no node " << name;
    return -1;
  }

  // Matches (or unmatches) two nodes by name; every pair of the edit must succeed.
  void Edit(bool match, const std::string& file, const std::string& npu, const std::string& bench, bool children) {
    grpc::ClientContext ctx;
    MatchRequest req;
    req.set_file(file);
    req.set_npu_node(Find(file, vis::SIDE_NPU, npu));
    req.set_bench_node(Find(file, vis::SIDE_BENCH, bench));
    req.set_with_children(children);
    MatchReply reply;
    grpc::Status st = match ? service_->stub()->Match(&ctx, req, &reply) : service_->stub()->Unmatch(&ctx, req, &reply);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_GT(reply.results_size(), 0);
    for (const MatchResult& r : reply.results()) EXPECT_TRUE(r.ok()) << r.npu() << ": " << r.error();
  }

  static std::vector<std::string> Names(const DivergenceReply& r) {
    std::vector<std::string> out;
    for (const DivergenceItem& i : r.items()) out.push_back(i.name());
    return out;
  }

  testing::TempDir dir_;
  std::string logdir_;
  std::unique_ptr<testing::InProcessService> service_;
};

// Matching the renamed module with its children compares the activation op:
// the op that computes differently becomes the first divergence, with its
// margin; unmatching them brings the stored ranking back, field for field.
TEST_F(RerankTest, MatchingTheRenamedModuleFindsTheCulpritOpAndUnmatchingRestoresTheStoredRanking) {
  std::string file = Build("renamed_act", "renamed");
  Start();
  DivergenceReply stored = Divergence(file);
  ASSERT_EQ(stored.rule(), vis::DIVERGENCE_RULE_NOISE);
  ASSERT_GT(stored.items_size(), 0);
  EXPECT_EQ(stored.items(0).name(), kGelu);
  EXPECT_EQ(stored.items(0).reason(), vis::DIVERGENCE_UNMATCHED);

  Edit(true, file, kGelu, kGeluBench, true);
  DivergenceReply matched = Divergence(file);
  ASSERT_GT(matched.items_size(), 0) << "the op computes differently: it diverges beyond noise";
  const DivergenceItem& first = matched.items(0);
  EXPECT_EQ(first.name(), kGeluOp);
  EXPECT_EQ(first.reason(), vis::DIVERGENCE_OUTPUTS);
  EXPECT_TRUE(first.has_margin());
  EXPECT_GT(first.margin(), matched.threshold());
  EXPECT_GE(first.bench_node(), 0) << "the entry's Bench node is its manual partner";
  EXPECT_FALSE(matched.none_beyond_noise());
  for (const DivergenceItem& i : matched.items()) {
    EXPECT_NE(i.reason(), vis::DIVERGENCE_UNMATCHED) << i.name() << ": nothing is unmatched in blocks.1 now";
  }

  Edit(false, file, kGelu, kGeluBench, true);
  DivergenceReply back = Divergence(file);
  EXPECT_EQ(back.SerializeAsString(), stored.SerializeAsString())
      << "as built again: the stored ranking, not a copy of it";
}

// Matching the module alone (its op stays unmatched) ranks the module by its
// own outputs; unmatching the first divergence's pair lets the next lead.
TEST_F(RerankTest, AModuleMatchedAloneRanksByItsOutputsAndUnmatchingTheFirstLetsTheNextLead) {
  std::string file = Build("renamed_act", "renamed");
  Start();
  DivergenceReply stored = Divergence(file);
  Edit(true, file, kGelu, kGeluBench, false);
  DivergenceReply matched = Divergence(file);
  ASSERT_GT(matched.items_size(), 0);
  EXPECT_EQ(matched.items(0).name(), kGelu);
  EXPECT_EQ(matched.items(0).reason(), vis::DIVERGENCE_OUTPUTS) << "a module whose own APIs are unmatched";
  EXPECT_TRUE(matched.items(0).has_margin());

  // gpt_statistics: the first divergence is the linear the NPU run computes in
  // bf16. Unmatched, it has no errors of its own and its neighbours' inputs
  // say where the runs part.
  std::string gpt = Build("gpt_statistics", "gpt");
  DivergenceReply gpt_stored = Divergence(gpt);
  ASSERT_GE(gpt_stored.items_size(), 1);
  const std::string culprit = gpt_stored.items(0).name();
  ASSERT_EQ(culprit, "Functional.linear.11.forward");
  Edit(false, gpt, culprit, culprit, false);
  DivergenceReply without = Divergence(gpt);
  std::vector<std::string> names = Names(without);
  for (const DivergenceItem& i : without.items()) {
    if (i.name() == culprit) {
      EXPECT_EQ(i.reason(), vis::DIVERGENCE_UNMATCHED) << "no errors of its own";
    }
  }
  ASSERT_FALSE(names.empty());
  EXPECT_NE(Names(without), Names(gpt_stored));
  Edit(true, gpt, culprit, culprit, false);
  EXPECT_EQ(Divergence(gpt).SerializeAsString(), gpt_stored.SerializeAsString());
  // The other file's edit stands.
  EXPECT_EQ(Divergence(file).items(0).reason(), vis::DIVERGENCE_OUTPUTS);
  EXPECT_NE(Divergence(file).SerializeAsString(), stored.SerializeAsString());
}

// Unsaved edits come back from the journal on a restart, and the ranking with them.
TEST_F(RerankTest, ARestartedServiceRanksTheReplayedEditsAsBefore) {
  std::string file = Build("renamed_act", "renamed");
  Start();
  Edit(true, file, kGelu, kGeluBench, true);
  DivergenceReply before = Divergence(file);
  ASSERT_GT(before.items_size(), 0);
  ASSERT_EQ(before.items(0).name(), kGeluOp);
  Start();
  DivergenceReply after = Divergence(file);
  EXPECT_EQ(after.SerializeAsString(), before.SerializeAsString());
}

// A long session of edits: the journal is rewritten as the edits that stand
// each time it passes its bound, so it stays bounded however many edits came,
// and a restart after the rewrites gives the same matches and ranking.
TEST_F(RerankTest, ALongSessionsMatchJournalStaysBoundedAndReplaysTheSameMatches) {
  constexpr size_t kBound = 4096;
  std::string file = Build("renamed_act", "renamed");
  Start(kBound);
  const std::string fc1 = "Module.blocks.0.fc1.Linear.forward.0";
  Edit(false, file, fc1, fc1, false);  // an automatic pair unmatched: it stays so
  size_t largest = 0;
  for (int i = 0; i < 60; ++i) {
    Edit(true, file, kGelu, kGeluBench, true);
    Edit(false, file, kGelu, kGeluBench, true);
    for (const auto& j : Journals()) largest = std::max<size_t>(largest, std::filesystem::file_size(j));
  }
  Edit(true, file, kGelu, kGeluBench, true);
  const FileInfo before = Info(file);
  const DivergenceReply ranked = Divergence(file);
  EXPECT_EQ(before.removed_automatic(), 1u);
  EXPECT_GT(before.manual_matches(), 0u);
  ASSERT_EQ(Journals().size(), 1u);
  // 121 edits of two pairs or more: about 25 kB unbounded.
  EXPECT_LT(largest, 2 * kBound) << "the journal is never rewritten";
  Start(kBound);
  const FileInfo after = Info(file);
  EXPECT_EQ(after.manual_matches(), before.manual_matches());
  EXPECT_EQ(after.removed_automatic(), 1u);
  EXPECT_EQ(after.npu().SerializeAsString(), before.npu().SerializeAsString());
  EXPECT_EQ(after.bench().SerializeAsString(), before.bench().SerializeAsString());
  EXPECT_EQ(Divergence(file).SerializeAsString(), ranked.SerializeAsString());
  // Edits after the restart append to the rewritten journal, and replay too.
  Edit(false, file, kGelu, kGeluBench, true);
  Start(kBound);
  EXPECT_EQ(Info(file).removed_automatic(), 1u);
  EXPECT_EQ(Info(file).manual_matches(), 0u);
}

// The views' divergence marks follow the ranking shown.
TEST_F(RerankTest, ViewMarksFollowTheNewRanking) {
  std::string file = Build("renamed_act", "renamed");
  Start();
  Edit(true, file, kGelu, kGeluBench, true);
  int32_t op = Find(file, vis::SIDE_NPU, kGeluOp);
  int32_t module = Find(file, vis::SIDE_NPU, kGelu);
  grpc::ClientContext ctx;
  NodeRequest req;  // expands the op's ancestors
  req.mutable_view()->set_session("marks");
  req.mutable_view()->set_file(file);
  req.mutable_view()->set_side(vis::SIDE_NPU);
  req.mutable_view()->set_micro_step(-1);
  req.set_node(op);
  ViewReply view;
  grpc::Status st = service_->stub()->Reveal(&ctx, req, &view);
  ASSERT_TRUE(st.ok()) << st.error_message();
  bool op_divergent = false, module_contains = false, module_divergent = true;
  for (const auto& n : view.nodes()) {
    if (n.index() == op) op_divergent = n.divergent();
    if (n.index() == module) {
      module_contains = n.contains_divergence();
      module_divergent = n.divergent();
    }
  }
  EXPECT_TRUE(op_divergent);
  EXPECT_TRUE(module_contains);
  EXPECT_FALSE(module_divergent) << "the module gave way to the op inside it";
}

// Over the build's own matches the service ranks exactly as the builder did:
// the same evidence from the stored details, the same rule over the stored
// hierarchy, on every sample compare (statistics: the noise rule; md5 and
// tensor: the floor rule; several ranks, micro steps and a parallel merge).
TEST(RerankSamplesTest, RankingTheBuildsMatchesAnewGivesTheStoredRanking) {
  testing::TempDir dir;
  int files = 0, ranked = 0;
  std::vector<std::filesystem::path> samples;
  for (const auto& e : std::filesystem::directory_iterator(graph_ascend::testing::Sample(""))) {
    if (std::filesystem::exists(e.path() / "compare.json")) samples.push_back(e.path());
  }
  std::sort(samples.begin(), samples.end());
  for (const std::filesystem::path& sample : samples) {
    std::string name = sample.filename().string(), out = dir.Join(name);
    std::vector<std::string> args = {"graph", "-i", (sample / "compare.json").string(), "-o", out};
    // mindtorch against PyTorch is a cross-framework compare: -lm, as msprobe asks (the names are PyTorch's).
    if (name == "msadapter") args.push_back("-lm");
    graph_ascend::testing::RunResult r = graph_ascend::testing::RunTool(args);
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    for (const auto& e : std::filesystem::recursive_directory_iterator(out)) {
      if (e.path().extension() != ".vis") continue;
      auto f = OpenGraph::Open(e.path().string(), name, {});
      ASSERT_TRUE(f.ok()) << f.error().ToString();
      std::shared_lock<std::shared_mutex> l((*f)->mutex());
      auto anew = (*f)->reranking().RankAnew(**f);
      ASSERT_TRUE(anew.ok()) << anew.error().ToString();
      EXPECT_EQ(anew->SerializeAsString(), (*f)->divergence()->SerializeAsString()) << e.path();
      ++files;
      ranked += (*f)->divergence()->entry_size() > 0;
    }
  }
  EXPECT_GE(files, 15);
  EXPECT_GE(ranked, 12);
  RecordProperty("files", files);
  RecordProperty("ranked", ranked);
}

}  // namespace
}  // namespace graph_ascend::service
