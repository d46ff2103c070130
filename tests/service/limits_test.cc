// What a file or a client can send must not crash, hang or blow up the
// service (issue 17): forged sizes and columns in a .vis, 20,000-deep
// chains, huge answers, viewports at the int32 edge, long echoed fields,
// files opened through symlinks and config files that are links.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "graph_service.h"
#include "manual_match.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

using testing::TempDir;

constexpr int kDepth = 20000;

// root -> 1 -> 2 -> ... -> depth: one module per level, `pad` extra bytes per name.
testing::FixtureGraph Chain(int depth, size_t pad = 0) {
  testing::FixtureGraph g;
  g.Add("DefaultModel", -1);
  for (int i = 1; i <= depth; ++i) {
    g.Add("Module.l" + std::to_string(i) + std::string(pad, 'x') + ".Sequential.forward.0", i - 1);
  }
  return g;
}

testing::FixtureOptions AllUnmatched(const testing::FixtureGraph& g) {
  testing::FixtureOptions o;
  o.unmatched.clear();
  for (const auto& n : g.nodes) o.unmatched.push_back(n.name);
  return o;
}

// Runs `body` on a thread of 256 KiB of stack: recursion once per level of a
// 20,000-deep chain needs megabytes and would crash.
void RunOnSmallStack(const std::function<void()>& body) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 << 10);
  pthread_t t;
  auto run = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&t, &attr, run, const_cast<std::function<void()>*>(&body)), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(DeepChainTest, MatchAndUnmatchWithChildrenWalkA20000DeepChainWithoutRecursion) {
  TempDir dir;
  const testing::FixtureGraph g = Chain(kDepth);
  testing::WriteCompare(dir.Join("chain.vis"), g, AllUnmatched(g));
  auto f = OpenGraph::Open(dir.Join("chain.vis"), "chain.vis", {});
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  OpenGraph* file = f->get();
  std::vector<PairOutcome> matched, unmatched;
  RunOnSmallStack([&] {
    OpenGraph::DetailCache cache;
    PrefetchForMatch(*file, 1, 1, true, true, &cache);
    std::unique_lock<std::shared_mutex> l(file->mutex());
    matched = MatchNodes(file, 1, 1, true, &cache);
  });
  ASSERT_EQ(matched.size(), static_cast<size_t>(kDepth));
  for (const PairOutcome& o : matched) ASSERT_TRUE(o.ok) << o.npu << ": " << o.error;
  EXPECT_EQ(matched.back().npu, g.nodes[kDepth].name);  // depth first, down to the last level
  EXPECT_EQ(file->side(vis::SIDE_NPU)->matched(kDepth), kDepth);
  EXPECT_EQ(file->manual_matches().size(), static_cast<size_t>(kDepth));

  RunOnSmallStack([&] {
    std::unique_lock<std::shared_mutex> l(file->mutex());
    unmatched = UnmatchNodes(file, 1, 1, true);
  });
  ASSERT_EQ(unmatched.size(), static_cast<size_t>(kDepth));
  for (const PairOutcome& o : unmatched) ASSERT_TRUE(o.ok) << o.npu << ": " << o.error;
  EXPECT_EQ(file->side(vis::SIDE_NPU)->matched(kDepth), -1);
  EXPECT_EQ(file->side(vis::SIDE_BENCH)->matched(1), -1);
  EXPECT_TRUE(file->manual_matches().empty());
}

// A real server on a Unix socket over a log directory the test fills.
class LimitsTest : public ::testing::Test {
 protected:
  void Start(size_t max_answer_bytes = size_t{64} << 20) {
    ServiceOptions options;
    options.logdir = dir_.path();
    options.max_answer_bytes = max_answer_bytes;
    auto impl = GraphServiceImpl::Create(options);
    ASSERT_TRUE(impl.ok()) << impl.error().ToString();
    impl_ = std::move(*impl);
    grpc::ServerBuilder builder;
    const std::string address = "unix:" + sock_.Join("s.sock");
    builder.AddListeningPort(address, grpc::InsecureServerCredentials());
    builder.RegisterService(impl_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = GraphService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }
  grpc::Status Info(const std::string& file, FileInfo* info) {
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    return stub_->GetFileInfo(&ctx, req, info);
  }
  grpc::Status Search(const std::string& file, const std::string& query, uint32_t offset, uint32_t limit,
                      NodeList* out) {
    grpc::ClientContext ctx;
    SearchRequest req;
    req.mutable_view()->set_session("s");
    req.mutable_view()->set_file(file);
    req.mutable_view()->set_micro_step(-1);
    req.set_query(query);
    req.set_offset(offset);
    req.set_limit(limit);
    return stub_->Search(&ctx, req, out);
  }
  // Matches the fixture's unmatched Module.fc.Linear.forward.0 pair (not its backward twin).
  grpc::Status MatchFc(const std::string& file, MatchReply* reply) {
    const testing::FixtureGraph g = testing::ResnetLike();
    grpc::ClientContext ctx;
    MatchRequest m;
    m.set_file(file);
    m.set_npu_node(g.Find("Module.fc.Linear.forward.0"));
    m.set_bench_node(g.Find("Module.fc.Linear.forward.0"));
    return stub_->Match(&ctx, m, reply);
  }
  grpc::Status Save(const std::string& file, SaveMatchesReply* reply) {
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    return stub_->SaveMatches(&ctx, req, reply);
  }
  bool Healthy() {
    grpc::ClientContext ctx;
    HealthReply reply;
    return stub_->Health(&ctx, HealthRequest(), &reply).ok();
  }

  TempDir dir_;
  TempDir sock_;
  std::unique_ptr<GraphServiceImpl> impl_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GraphService::Stub> stub_;
};

TEST_F(LimitsTest, ForgedIndexSizesNeitherAllocateNorAbort) {
  const testing::FixtureGraph g = testing::ResnetLike();
  testing::WriteCompare(dir_.Join("raw.vis"), g, {});
  testing::RewriteToc(dir_.Join("raw.vis"), [](vis::TableOfContents* toc) {
    for (auto& s : *toc->mutable_sections()) {
      if (s.kind() == vis::SECTION_NODE_INDEX && s.side() == vis::SIDE_BENCH) s.set_raw_size(uint64_t{1} << 62);
    }
  });
  testing::WriteCompare(dir_.Join("count.vis"), g, {});
  testing::RewriteToc(dir_.Join("count.vis"), [](vis::TableOfContents* toc) {
    for (auto& s : *toc->mutable_sections()) {
      if (s.kind() == vis::SECTION_NODE_INDEX && s.side() == vis::SIDE_BENCH && s.first() == 0) {
        s.set_count(1u << 30);
      }
    }
  });
  Start();
  FileInfo info;
  // The reader checks raw_size against what a section can hold before it
  // reserves anything: a forged size is a damaged file, not an allocation.
  grpc::Status st = Info("raw.vis", &info);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DATA_LOSS) << st.error_message();
  EXPECT_NE(st.error_message().find("raw.vis"), std::string::npos) << st.error_message();
  EXPECT_TRUE(Healthy());
  st = Info("count.vis", &info);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DATA_LOSS) << st.error_message();
  EXPECT_NE(st.error_message().find("count.vis"), std::string::npos) << st.error_message();
  EXPECT_TRUE(Healthy());
}

TEST_F(LimitsTest, ASectionSizeThatWrapsIsDataLossNotAnUnknownError) {
  const testing::FixtureGraph g = testing::ResnetLike();
  testing::WriteCompare(dir_.Join("wrap.vis"), g, {});
  // offset + compressed_size wraps to a small number: a range check on the
  // sum passes, and the size alone is past anything that can be allocated.
  testing::RewriteToc(dir_.Join("wrap.vis"), [](vis::TableOfContents* toc) {
    for (auto& s : *toc->mutable_sections()) {
      if (s.kind() == vis::SECTION_NODE_DETAILS && s.side() == vis::SIDE_NPU && s.first() == 0) {
        s.set_compressed_size(~uint64_t{0} - s.offset() + 2);
      }
    }
  });
  Start();
  FileInfo info;
  grpc::Status st = Info("wrap.vis", &info);
  if (st.ok()) {  // the reader let the table of contents through: the detail read must fail cleanly
    grpc::ClientContext ctx;
    NodeRequest req;
    req.mutable_view()->set_session("s");
    req.mutable_view()->set_file("wrap.vis");
    req.mutable_view()->set_micro_step(-1);
    req.set_node(1);
    NodeDetailReply reply;
    st = stub_->GetNodeDetail(&ctx, req, &reply);
  }
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DATA_LOSS) << st.error_message();
  EXPECT_NE(st.error_message().find("wrap.vis"), std::string::npos) << st.error_message();
  EXPECT_TRUE(Healthy());
}

TEST_F(LimitsTest, ColumnsOutOfTheirRangeAreDamage) {
  testing::FixtureGraph g = testing::ResnetLike();
  g.nodes[3].overflow = 255;  // would reach a shift by 255 in the overflow filter
  testing::WriteCompare(dir_.Join("overflow.vis"), g, {});
  Start();
  FileInfo info;
  grpc::Status st = Info("overflow.vis", &info);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DATA_LOSS);
  EXPECT_NE(st.error_message().find("overflow_level of node 3 out of range"), std::string::npos)
      << st.error_message();
}

TEST_F(LimitsTest, DeepHitsCarryTheNearestAncestorsAndBigPagesAreRefused) {
  const testing::FixtureGraph g = Chain(kDepth, 100);
  testing::WriteCompare(dir_.Join("chain.vis"), g, {});
  Start(size_t{1} << 20);
  NodeList last;
  grpc::Status st = Search("chain.vis", "Sequential", kDepth - 1, 1, &last);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(last.total(), static_cast<uint32_t>(kDepth));
  ASSERT_EQ(last.hits_size(), 1);
  const NodeHit& hit = last.hits(0);
  EXPECT_EQ(hit.name(), g.nodes[kDepth].name);
  ASSERT_EQ(hit.ancestors_size(), 100);
  EXPECT_EQ(hit.ancestors_omitted(), static_cast<uint32_t>(kDepth - 100));
  EXPECT_EQ(hit.ancestors(0), g.nodes[kDepth - 100].name);  // root first, nearest last
  EXPECT_EQ(hit.ancestors(99), g.nodes[kDepth - 1].name);

  NodeList page;
  st = Search("chain.vis", "Sequential", 0, 10000, &page);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(st.error_message().find("ask for fewer hits"), std::string::npos) << st.error_message();
  st = Search("chain.vis", "Sequential", 0, 20, &page);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(page.hits_size(), 20);
}

TEST_F(LimitsTest, ViewportsAtTheInt32EdgeAreRefused) {
  testing::WriteCompare(dir_.Join("a.vis"), testing::ResnetLike(), {});
  Start();
  for (auto [x, width] : {std::pair<int32_t, int32_t>{INT32_MAX, 100}, {0, INT32_MAX}, {INT32_MIN, 10}}) {
    grpc::ClientContext ctx;
    ViewRequest req;
    req.mutable_view()->set_session("s");
    req.mutable_view()->set_file("a.vis");
    req.mutable_view()->set_micro_step(-1);
    req.mutable_viewport()->set_x(x);
    req.mutable_viewport()->set_y(0);
    req.mutable_viewport()->set_width(width);
    req.mutable_viewport()->set_height(100);
    ViewReply reply;
    grpc::Status st = stub_->GetView(&ctx, req, &reply);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << x << " " << width;
    EXPECT_NE(st.error_message().find("viewport"), std::string::npos);
  }
  grpc::ClientContext ctx;
  ViewRequest req;
  req.mutable_view()->set_session("s");
  req.mutable_view()->set_file("a.vis");
  req.mutable_view()->set_micro_step(-1);
  req.mutable_viewport()->set_width(1 << 30);
  req.mutable_viewport()->set_height(1 << 30);
  ViewReply reply;
  ASSERT_TRUE(stub_->GetView(&ctx, req, &reply).ok());
  EXPECT_EQ(static_cast<uint32_t>(reply.nodes_size()), reply.total_visible());
}

TEST_F(LimitsTest, LongEchoedFieldsAreCutAndAnsweredAsBadRequests) {
  testing::WriteCompare(dir_.Join("a.vis"), testing::ResnetLike(), {});
  Start();
  grpc::ClientContext ctx;
  SetLegendRequest req;
  req.set_file("a.vis");
  req.add_legend()->set_color("#" + std::string(20000, 'F'));
  FileInfo info;
  grpc::Status st = stub_->SetLegend(&ctx, req, &info);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(st.error_message().size(), 1200u);
  EXPECT_NE(st.error_message().find(" bytes)"), std::string::npos) << st.error_message();

  st = Info(std::string(20000, 'a') + ".vis", &info);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(st.error_message().size(), 1200u);
}

TEST_F(LimitsTest, AFileOpenedThroughASymlinkHasOneNameAndItsConfigGoesBesideTheRealFile) {
  std::filesystem::create_directories(dir_.Join("runs/a"));
  testing::WriteCompare(dir_.Join("runs/a/compare.vis"), testing::ResnetLike(), {});
  std::filesystem::create_symlink("a/compare.vis", dir_.Join("runs/link.vis"));
  Start();
  FileInfo via_link, direct;
  ASSERT_TRUE(Info("runs/link.vis", &via_link).ok());
  ASSERT_TRUE(Info("runs/a/compare.vis", &direct).ok());
  EXPECT_EQ(via_link.file(), "runs/a/compare.vis");
  EXPECT_EQ(direct.file(), "runs/a/compare.vis");

  MatchReply mr;
  ASSERT_TRUE(MatchFc("runs/link.vis", &mr).ok());
  ASSERT_TRUE(mr.results(0).ok()) << mr.results(0).error();
  SaveMatchesReply saved;
  grpc::Status st = Save("runs/link.vis", &saved);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(saved.path(), "runs/a/compare.vis.config");
  EXPECT_TRUE(std::filesystem::is_regular_file(dir_.Join("runs/a/compare.vis.config")));
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("runs/link.vis.config")));
  ASSERT_TRUE(Info("runs/a/compare.vis", &direct).ok());
  EXPECT_EQ(direct.manual_matches(), 1u);  // the pair, seen under either name
}

TEST_F(LimitsTest, SaveMatchesNeverWritesThroughALink) {
  testing::WriteCompare(dir_.Join("a.vis"), testing::ResnetLike(), {});
  testing::WriteCompare(dir_.Join("victim.vis"), testing::ResnetLike(), {});
  const std::string victim = ReadAll(dir_.Join("victim.vis"));
  std::filesystem::create_symlink("victim.vis", dir_.Join("a.vis.config"));
  Start();
  MatchReply matched;
  ASSERT_TRUE(MatchFc("a.vis", &matched).ok());
  SaveMatchesReply saved;
  grpc::Status st = Save("a.vis", &saved);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("symbolic link"), std::string::npos) << st.error_message();
  EXPECT_EQ(ReadAll(dir_.Join("victim.vis")), victim);
  EXPECT_TRUE(std::filesystem::is_symlink(dir_.Join("a.vis.config")));

  // A link planted at the temporary name is replaced, not written through.
  std::filesystem::remove(dir_.Join("a.vis.config"));
  std::filesystem::create_symlink("victim.vis", dir_.Join("a.vis.config.tmp-" + std::to_string(getpid())));
  st = Save("a.vis", &saved);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(ReadAll(dir_.Join("victim.vis")), victim);
  EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::symlink_status(dir_.Join("a.vis.config"))));
  EXPECT_NE(ReadAll(dir_.Join("a.vis.config")).find("Module.fc.Linear.forward.0"), std::string::npos);
}

}  // namespace
}  // namespace graph_ascend::service
