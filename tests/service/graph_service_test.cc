// The gRPC surface: a real server on a Unix socket, driven through a stub.
#include "graph_service.h"

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "compare/grading.h"
#include "compare/pair_compare.h"

#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

using testing::TempDir;

class GraphServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    graph_ = testing::ResnetLike();
    std::filesystem::create_directories(dir_.Join("runs/a"));
    testing::WriteCompare(dir_.Join("runs/a/compare.vis"), graph_, {});
    ServiceOptions options;
    options.logdir = dir_.path();
    auto impl = GraphServiceImpl::Create(options);
    ASSERT_TRUE(impl.ok()) << impl.error().ToString();
    impl_ = std::move(*impl);
    grpc::ServerBuilder builder;
    address_ = "unix:" + sock_.Join("s.sock");
    builder.AddListeningPort(address_, grpc::InsecureServerCredentials());
    builder.RegisterService(impl_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = GraphService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }
  int32_t Node(const std::string& name) const { return graph_.Find(name); }
  ViewKey Key(const std::string& session, vis::Side side = vis::SIDE_NPU, int32_t micro = -1) const {
    ViewKey k;
    k.set_session(session);
    k.set_file("runs/a/compare.vis");
    k.set_side(side);
    k.set_micro_step(micro);
    return k;
  }
  grpc::Status Expand(const std::string& session, int32_t node, ViewReply* reply) {
    grpc::ClientContext ctx;
    NodeRequest req;
    *req.mutable_view() = Key(session);
    req.set_node(node);
    return stub_->Expand(&ctx, req, reply);
  }
  grpc::Status View(const std::string& session, ViewReply* reply) {
    grpc::ClientContext ctx;
    ViewRequest req;
    *req.mutable_view() = Key(session);
    return stub_->GetView(&ctx, req, reply);
  }

  TempDir dir_;
  TempDir sock_;
  testing::FixtureGraph graph_;
  std::unique_ptr<GraphServiceImpl> impl_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GraphService::Stub> stub_;
  std::string address_;
};

TEST_F(GraphServiceTest, ListsRunsAndStreamsOpenProgress) {
  grpc::ClientContext ctx;
  ListRunsReply runs;
  ASSERT_TRUE(stub_->ListRuns(&ctx, ListRunsRequest(), &runs).ok());
  ASSERT_EQ(runs.files_size(), 1);
  EXPECT_EQ(runs.files(0).path(), "runs/a/compare.vis");
  EXPECT_EQ(runs.files(0).dir(), "runs/a");
  EXPECT_EQ(runs.files(0).kind(), "compare");

  grpc::ClientContext octx;
  FileRequest req;
  req.set_file("runs/a/compare.vis");
  auto reader = stub_->OpenFile(&octx, req);
  OpenProgress p;
  std::vector<OpenProgress> all;
  while (reader->Read(&p)) all.push_back(p);
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_FALSE(all.empty());
  for (size_t i = 1; i < all.size(); ++i) EXPECT_GE(all[i].fraction(), all[i - 1].fraction());
  const OpenProgress& done = all.back();
  EXPECT_TRUE(done.done());
  EXPECT_EQ(done.info().file(), "runs/a/compare.vis");
  EXPECT_EQ(done.info().npu().nodes(), graph_.nodes.size());
  EXPECT_EQ(done.info().npu().unmatched(), 2u);
  EXPECT_EQ(done.info().npu().overflow_critical(), 1u);
  EXPECT_EQ(done.info().meta().legend_size(), 6);
  uint32_t bucketed = 0;
  for (const auto& b : done.info().npu().buckets()) bucketed += b.count();
  EXPECT_EQ(bucketed, graph_.nodes.size() - 1);  // all but the root (no precision): unmatched ones are grey

  grpc::ClientContext hctx;
  HealthReply health;
  ASSERT_TRUE(stub_->Health(&hctx, HealthRequest(), &health).ok());
  EXPECT_EQ(health.open_files(), 1u);
}

TEST_F(GraphServiceTest, SessionsKeepTheirOwnViews) {
  ViewReply a, b;
  ASSERT_TRUE(Expand("tab-a", Node("Module.layer1.Sequential.forward.0"), &a).ok());
  EXPECT_EQ(a.total_visible(), 23u);
  EXPECT_EQ(a.height(), 360);
  EXPECT_EQ(a.focus(), Node("Module.layer1.Sequential.forward.0"));
  ASSERT_TRUE(View("tab-b", &b).ok());
  EXPECT_EQ(b.total_visible(), 21u);
  EXPECT_EQ(b.height(), 300);
  ASSERT_TRUE(View("tab-a", &a).ok());
  EXPECT_EQ(a.total_visible(), 23u);
  // Parents come before children and carry what the page draws.
  const LayoutNode& root = a.nodes(0);
  EXPECT_EQ(root.index(), 0);
  EXPECT_EQ(root.parent(), -1);
  EXPECT_TRUE(root.expanded());
  for (const auto& n : a.nodes()) {
    if (n.name() == "Module.fc.Linear.forward.0") {
      EXPECT_EQ(n.bucket(), 5);
      EXPECT_EQ(n.matched(), -1);
      EXPECT_FALSE(n.expandable());
    }
    if (n.name() == "Module.relu.ReLU.forward.0") {
      EXPECT_EQ(n.overflow(), vis::OVERFLOW_CRITICAL);
    }
  }
}

TEST_F(GraphServiceTest, RevealWithViewportSendsOnlyWhatIsOnScreen) {
  grpc::ClientContext ctx;
  NodeRequest req;
  *req.mutable_view() = Key("s");
  req.set_node(Node("Module.layer4.1.bn1.BatchNorm2d.backward.0"));
  req.mutable_viewport()->set_x(0);
  req.mutable_viewport()->set_y(0);
  req.mutable_viewport()->set_width(400);
  req.mutable_viewport()->set_height(40);
  ViewReply reply;
  ASSERT_TRUE(stub_->Reveal(&ctx, req, &reply).ok());
  EXPECT_EQ(reply.total_visible(), 21u + 2 + 2);
  EXPECT_LT(static_cast<uint32_t>(reply.nodes_size()), reply.total_visible());
  for (const auto& n : reply.nodes()) EXPECT_LT(n.y(), 40);
}

TEST_F(GraphServiceTest, SearchAndFilterGiveAncestorPaths) {
  grpc::ClientContext ctx;
  SearchRequest req;
  *req.mutable_view() = Key("s");
  req.set_query("LAYER3.1.BN1");
  req.set_case_insensitive(true);
  NodeList list;
  ASSERT_TRUE(stub_->Search(&ctx, req, &list).ok());
  ASSERT_EQ(list.total(), 2u);
  EXPECT_EQ(list.hits(0).name(), "Module.layer3.1.bn1.BatchNorm2d.forward.0");
  EXPECT_EQ(std::vector<std::string>(list.hits(0).ancestors().begin(), list.hits(0).ancestors().end()),
            (std::vector<std::string>{"DefaultModel", "Module.layer3.Sequential.forward.0",
                                      "Module.layer3.1.BasicBlock.forward.0"}));

  grpc::ClientContext fctx;
  FilterRequest f;
  *f.mutable_view() = Key("s", vis::SIDE_BENCH);
  f.set_unmatched(true);
  ASSERT_TRUE(stub_->Filter(&fctx, f, &list).ok());
  EXPECT_EQ(list.total(), 2u);

  grpc::ClientContext pctx;
  FilterRequest paged;
  *paged.mutable_view() = Key("s");
  paged.add_buckets(0);
  paged.add_buckets(1);
  paged.add_buckets(2);
  paged.add_buckets(3);
  paged.add_buckets(4);
  paged.set_offset(5);
  paged.set_limit(3);
  ASSERT_TRUE(stub_->Filter(&pctx, paged, &list).ok());
  EXPECT_EQ(list.total(), graph_.nodes.size() - 3);
  EXPECT_EQ(list.hits_size(), 3);
}

TEST_F(GraphServiceTest, NodeDetailCarriesTheMatchedNode) {
  grpc::ClientContext ctx;
  NodeRequest req;
  *req.mutable_view() = Key("s", vis::SIDE_BENCH);
  req.set_node(Node("Module.layer1.0.conv1.Conv2d.forward.0"));
  NodeDetailReply reply;
  ASSERT_TRUE(stub_->GetNodeDetail(&ctx, req, &reply).ok());
  EXPECT_EQ(reply.node().name(), "Module.layer1.0.conv1.Conv2d.forward.0");
  EXPECT_EQ(reply.node().matched_name(), "Module.layer1.0.conv1.Conv2d.forward.0");
  EXPECT_EQ(reply.detail().output_size(), 1);
  EXPECT_EQ(reply.detail().output(0).metric_size(), 0);  // metrics live on the NPU side
  ASSERT_TRUE(reply.has_matched());
  EXPECT_GT(reply.matched_detail().output(0).metric_size(), 0);
  EXPECT_EQ(reply.stack_size(), 1);
  EXPECT_TRUE(reply.matched().has_precision());
}

TEST_F(GraphServiceTest, MatchSaveAndLoadThroughTheService) {
  MatchRequest m;
  m.set_file("runs/a/compare.vis");
  m.set_npu_node(Node("Module.fc.Linear.forward.0"));
  m.set_bench_node(Node("Module.fc.Linear.forward.0"));
  MatchReply reply;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->Match(&ctx, m, &reply).ok());
  }
  ASSERT_EQ(reply.results_size(), 1);  // the pair picked, not its backward twin
  EXPECT_TRUE(reply.results(0).ok());
  EXPECT_EQ(reply.info().npu().unmatched(), 1u);
  EXPECT_EQ(reply.info().manual_matches(), 1u);
  EXPECT_FALSE(reply.info().matches_saved());
  SaveMatchesReply saved;
  {
    grpc::ClientContext ctx;
    FileRequest f;
    f.set_file("runs/a/compare.vis");
    ASSERT_TRUE(stub_->SaveMatches(&ctx, f, &saved).ok());
  }
  EXPECT_EQ(saved.path(), "runs/a/compare.vis.config");
  EXPECT_EQ(saved.matches(), 1u);
  EXPECT_TRUE(std::filesystem::exists(dir_.Join("runs/a/compare.vis.config")));
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->Unmatch(&ctx, m, &reply).ok());
    EXPECT_EQ(reply.info().npu().unmatched(), 2u);
    EXPECT_TRUE(reply.info().matches_saved());
  }
  {
    grpc::ClientContext ctx;
    LoadMatchesRequest l;
    l.set_file("runs/a/compare.vis");
    ASSERT_TRUE(stub_->LoadMatches(&ctx, l, &reply).ok());
    EXPECT_EQ(reply.info().npu().unmatched(), 1u);  // the saved pair back; its twin was never matched
  }
}

TEST_F(GraphServiceTest, SaveMatchesRefusesWhileABuildersMatchIsRemoved) {
  MatchRequest m;
  m.set_file("runs/a/compare.vis");
  m.set_npu_node(Node("Module.conv1.Conv2d.forward.0"));  // matched by the builder
  m.set_bench_node(Node("Module.conv1.Conv2d.forward.0"));
  MatchReply reply;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->Unmatch(&ctx, m, &reply).ok());
  }
  EXPECT_EQ(reply.info().removed_automatic(), 1u);
  EXPECT_EQ(reply.info().manual_matches(), 0u);
  FileRequest f;
  f.set_file("runs/a/compare.vis");
  SaveMatchesReply saved;
  {
    // A config lists pairs to match: saved, the file would come back with the pair matched.
    grpc::ClientContext ctx;
    grpc::Status st = stub_->SaveMatches(&ctx, f, &saved);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(st.error_message().find("runs/a/compare.vis.config: not saved: 1 automatic match was removed "
                                      "(Module.conv1.Conv2d.forward.0 <-> Module.conv1.Conv2d.forward.0)"),
              std::string::npos)
        << st.error_message();
    EXPECT_NE(st.error_message().find("match that pair again to save"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("runs/a/compare.vis.config")));
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->Match(&ctx, m, &reply).ok());
  }
  EXPECT_EQ(reply.info().removed_automatic(), 0u);
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->SaveMatches(&ctx, f, &saved).ok());
  }
  EXPECT_TRUE(std::filesystem::exists(dir_.Join("runs/a/compare.vis.config")));
}

TEST_F(GraphServiceTest, SetLegendRecolours) {
  SetLegendRequest req;
  req.set_file("runs/a/compare.vis");
  auto* low = req.add_legend();
  low->set_color("#00FF00");
  low->set_lo(0);
  low->set_hi(0.5);
  auto* high = req.add_legend();
  high->set_color("#FF0000");
  high->set_lo(0.5);
  high->set_hi(1);
  FileInfo info;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->SetLegend(&ctx, req, &info).ok());
  }
  ASSERT_EQ(info.npu().buckets_size(), 2);
  EXPECT_EQ(info.npu().buckets(0).count() + info.npu().buckets(1).count(), graph_.nodes.size() - 3);
  req.mutable_legend(0)->set_color("red");
  grpc::ClientContext ctx;
  grpc::Status st = stub_->SetLegend(&ctx, req, &info);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("legend[0]"), std::string::npos);
}

TEST_F(GraphServiceTest, BadRequestsGetFittingCodes) {
  std::ofstream(dir_.Join("runs/notes.vis")) << "{\"NPU\": {}}";
  std::ofstream(dir_.Join("runs/readme.txt")) << "hello";
  {
    std::ifstream in(dir_.Join("runs/a/compare.vis"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(dir_.Join("runs/truncated.vis"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  auto info = [&](const std::string& file) {
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    FileInfo reply;
    return stub_->GetFileInfo(&ctx, req, &reply);
  };
  EXPECT_EQ(info("runs/none.vis").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(info("../etc/passwd.vis").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(info("/etc/passwd").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(info("runs/readme.txt").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::Status json = info("runs/notes.vis");
  EXPECT_EQ(json.error_code(), grpc::StatusCode::DATA_LOSS);
  EXPECT_NE(json.error_message().find("runs/notes.vis"), std::string::npos);
  grpc::Status cut = info("runs/truncated.vis");
  EXPECT_EQ(cut.error_code(), grpc::StatusCode::DATA_LOSS);
  EXPECT_NE(cut.error_message().find("runs/truncated.vis"), std::string::npos);
  EXPECT_EQ(cut.error_message().find(dir_.path()), std::string::npos);  // no absolute paths

  ViewReply reply;
  EXPECT_EQ(Expand("s", 100000, &reply).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Expand("", 1, &reply).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext ctx;
  ViewRequest bad_micro;
  *bad_micro.mutable_view() = Key("s", vis::SIDE_NPU, 7);
  EXPECT_EQ(stub_->GetView(&ctx, bad_micro, &reply).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext sctx;
  SearchRequest regex;
  *regex.mutable_view() = Key("s");
  regex.set_query("(");
  regex.set_regex(true);
  NodeList list;
  EXPECT_EQ(stub_->Search(&sctx, regex, &list).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(GraphServiceTest, CallJsonBridgesEveryUnaryMethodInJson) {
  auto call = [&](const std::string& method, const std::string& json, JsonReply* reply) {
    grpc::ClientContext ctx;
    JsonCall req;
    req.set_method(method);
    req.set_request_json(json);
    return stub_->CallJson(&ctx, req, reply);
  };
  JsonReply reply;
  ASSERT_TRUE(call("GetView",
                   R"({"view": {"session": "j", "file": "runs/a/compare.vis", "side": "SIDE_NPU", "microStep": -1}})",
                   &reply)
                  .ok());
  // camelCase names, defaults printed, enums by name.
  EXPECT_NE(reply.reply_json().find("\"totalVisible\":21"), std::string::npos) << reply.reply_json();
  EXPECT_NE(reply.reply_json().find("\"expanded\":false"), std::string::npos);
  EXPECT_NE(reply.reply_json().find("\"overflow\":\"OVERFLOW_CRITICAL\""), std::string::npos);
  ViewReply typed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(reply.reply_json(), &typed).ok());
  EXPECT_EQ(typed.nodes(0).width(), 230);
  ASSERT_TRUE(call("ListRuns", "", &reply).ok());
  EXPECT_NE(reply.reply_json().find("runs/a/compare.vis"), std::string::npos);

  grpc::Status bad = call("GetView", "{not json", &reply);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.error_message().find("ViewRequest"), std::string::npos);
  EXPECT_EQ(call("GetView", R"({"viewe": {}})", &reply).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(call("OpenFile", "{}", &reply).error_code(), grpc::StatusCode::NOT_FOUND);  // streaming
  EXPECT_EQ(call("Nope", "{}", &reply).error_code(), grpc::StatusCode::NOT_FOUND);
  // Errors of the method come through unchanged.
  EXPECT_EQ(call("GetFileInfo", R"({"file": "../x.vis"})", &reply).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// The divergence ranking (docs/DIVERGENCE.md): the ranking of a file, the
// cue of each visible node, and a batch step's ranks, where a rank whose
// first divergence is a communication points at the peer that diverged by itself.
TEST_F(GraphServiceTest, DivergenceRankingMarksAndRanks) {
  const std::string leaf = "Module.layer2.1.bn1.BatchNorm2d.forward.0";
  std::filesystem::create_directories(dir_.Join("runs/b"));
  testing::FixtureOptions rank0;
  rank0.divergent = {"Module.layer1.0.conv1.Conv2d.forward.0"};
  rank0.first_divergence = "Distributed.all_reduce.0.forward";
  rank0.first_is_communication = true;
  rank0.first_peers = {1};
  testing::WriteCompare(dir_.Join("runs/b/compare_step0_rank0_20250101000000.vis"), graph_, rank0);
  testing::FixtureOptions rank1;
  rank1.divergent = {leaf};
  testing::WriteCompare(dir_.Join("runs/b/compare_step0_rank1_20250101000000.vis"), graph_, rank1);

  DivergenceReply reply;
  FileRequest req;
  req.set_file("runs/b/compare_step0_rank1_20250101000000.vis");
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->GetDivergence(&ctx, req, &reply).ok());
  }
  EXPECT_TRUE(reply.ranked());
  ASSERT_EQ(reply.items_size(), 1);
  EXPECT_EQ(reply.items(0).name(), leaf);
  EXPECT_EQ(reply.items(0).npu_node(), Node(leaf));
  EXPECT_EQ(reply.items(0).bench_node(), Node(leaf)) << "the fixture matches equal names";
  EXPECT_EQ(reply.items(0).reason_text(), "outputs differ, inputs agree");
  ASSERT_EQ(reply.ranks_size(), 2);
  std::map<std::string, DivergenceRank> ranks;
  for (const DivergenceRank& r : reply.ranks()) ranks[r.rank()] = r;
  EXPECT_EQ(ranks["rank0"].first(), "Distributed.all_reduce.0.forward");
  EXPECT_TRUE(ranks["rank0"].communication());
  EXPECT_EQ(ranks["rank0"].caused_by(), "rank1");
  EXPECT_EQ(ranks["rank1"].first(), leaf);
  EXPECT_EQ(ranks["rank1"].caused_by(), "");

  // The top level: layer2 (collapsed) holds the divergence, layer1 does not.
  ViewReply view;
  {
    grpc::ClientContext ctx;
    ViewRequest vr;
    ViewKey key = Key("div");
    key.set_file(req.file());
    *vr.mutable_view() = key;
    ASSERT_TRUE(stub_->GetView(&ctx, vr, &view).ok());
  }
  std::map<std::string, LayoutNode> shown;
  for (const LayoutNode& n : view.nodes()) shown[n.name()] = n;
  const LayoutNode& layer2 = shown.at("Module.layer2.Sequential.forward.0");
  EXPECT_FALSE(layer2.expanded());
  EXPECT_TRUE(layer2.contains_divergence());
  EXPECT_FALSE(layer2.divergent());
  EXPECT_GE(layer2.worst_descendant_bucket(), 0);
  EXPECT_FALSE(shown.at("Module.layer1.Sequential.forward.0").contains_divergence());
  EXPECT_TRUE(shown.at("DefaultModel").contains_divergence());

  // A file of before rankings: not ranked, no ranks of its own step.
  req.set_file("runs/a/compare.vis");
  reply.Clear();
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->GetDivergence(&ctx, req, &reply).ok());
  EXPECT_FALSE(reply.ranked());
  EXPECT_EQ(reply.items_size(), 0);
}

}  // namespace
}  // namespace graph_ascend::service

namespace graph_ascend::service {
namespace {

// A file with both gradings (as graph_visualize writes): views colour and
// filter by the file's default (msprobe 26's), or by the grading they ask for.
TEST(GradingViewTest, ViewsSwitchBetweenTheTwoGradings) {
  TempDir dir, sock;
  testing::FixtureGraph graph = testing::ResnetLike();
  testing::FixtureOptions fixture;
  fixture.grades = true;
  std::filesystem::create_directories(dir.Join("r"));
  testing::WriteCompare(dir.Join("r/graded.vis"), graph, fixture);
  ServiceOptions options;
  options.logdir = dir.path();
  auto impl = GraphServiceImpl::Create(options);
  ASSERT_TRUE(impl.ok()) << impl.error().ToString();
  grpc::ServerBuilder builder;
  std::string address = "unix:" + sock.Join("s.sock");
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(impl->get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = GraphService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));

  FileInfo info;
  {
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file("r/graded.vis");
    ASSERT_TRUE(stub->GetFileInfo(&ctx, req, &info).ok());
  }
  ASSERT_EQ(info.meta().grading(), vis::GRADING_26);
  ASSERT_EQ(info.meta().grade_legend_size(), 4);
  ASSERT_EQ(info.npu().grade_buckets_size(), 4);
  uint32_t graded = 0;
  for (const BucketCount& c : info.npu().grade_buckets()) graded += c.count();
  EXPECT_EQ(graded, graph.nodes.size() - 1) << "every node under the root, unmatched ones grey";
  for (const BucketCount& c : info.npu().grade_buckets()) {
    EXPECT_GT(c.count(), 0u) << info.meta().grade_legend(c.bucket()).name();
  }

  // Filter each grade bucket under each grading; the hits carry both values.
  auto filter = [&](std::optional<vis::Grading> grading, int32_t bucket) {
    FilterRequest req;
    req.mutable_view()->set_session("s");
    req.mutable_view()->set_file("r/graded.vis");
    req.mutable_view()->set_side(vis::SIDE_NPU);
    req.mutable_view()->set_micro_step(-1);
    if (grading) req.mutable_view()->set_grading(*grading);
    req.add_buckets(bucket);
    req.set_limit(1000);
    NodeList list;
    grpc::ClientContext ctx;
    grpc::Status st = stub->Filter(&ctx, req, &list);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return list;
  };
  const double grades[3] = {compare::kGradePass, compare::kGradeWarning, compare::kGradeError};
  uint32_t seen = 0;
  for (int b = 0; b < 3; ++b) {
    NodeList by_default = filter(std::nullopt, b);
    NodeList by_26 = filter(vis::GRADING_26, b);
    EXPECT_EQ(by_default.total(), by_26.total());
    EXPECT_GT(by_26.total(), 0u) << info.meta().grade_legend(b).name();
    for (const NodeHit& h : by_26.hits()) {
      EXPECT_TRUE(h.has_grade()) << h.name();
      EXPECT_EQ(h.grade_index(), grades[b]) << h.name();
      EXPECT_EQ(h.bucket(), b);
    }
    seen += by_26.total();
  }
  EXPECT_EQ(seen + info.npu().grade_buckets(3).count(), graded);

  // The same node under the index: its bucket is the index's, which the
  // 26 grade does not decide (an error can sit in a low index bucket).
  NodeList errors = filter(vis::GRADING_26, 2);
  ASSERT_GT(errors.hits_size(), 0);
  int32_t node = errors.hits(0).index();
  auto summary = [&](std::optional<vis::Grading> grading) {
    NodeRequest req;
    req.mutable_view()->set_session("s");
    req.mutable_view()->set_file("r/graded.vis");
    req.mutable_view()->set_side(vis::SIDE_NPU);
    req.mutable_view()->set_micro_step(-1);
    if (grading) req.mutable_view()->set_grading(*grading);
    req.set_node(node);
    NodeDetailReply reply;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub->GetNodeDetail(&ctx, req, &reply).ok());
    return reply.node();
  };
  NodeSummary as_26 = summary(std::nullopt), as_index = summary(vis::GRADING_INDEX);
  EXPECT_EQ(as_26.bucket(), 2);
  EXPECT_EQ(as_index.bucket(), compare::BucketOf(info.meta().legend(), as_index.precision_index()));
  EXPECT_EQ(as_26.grade_index(), 1);
  // A bucket index of the other legend is refused.
  FilterRequest bad;
  bad.mutable_view()->set_session("s");
  bad.mutable_view()->set_file("r/graded.vis");
  bad.mutable_view()->set_side(vis::SIDE_NPU);
  bad.mutable_view()->set_micro_step(-1);
  bad.add_buckets(5);
  NodeList list;
  grpc::ClientContext ctx;
  EXPECT_EQ(stub->Filter(&ctx, bad, &list).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  server->Shutdown();
}

}  // namespace
}  // namespace graph_ascend::service
