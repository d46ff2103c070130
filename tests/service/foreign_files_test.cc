// The service on msprobe's own files: a .vis.db of msprobe 26.2.0 (four steps
// and ranks) and a JSON .vis of msprobe 8.1.2 (tests/data/msprobe_outputs),
// listed, opened through a cache directory outside the log directory,
// searched and shown. The log directory is never written.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "formats/foreign_file.h"
#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

namespace fs = std::filesystem;
using testing::ExecSql;
using testing::MsprobeOutput;
using testing::TempDir;

std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.insert(e.path().string());
  return out;
}

class ForeignFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(logs_.Join("run26"));
    fs::create_directories(logs_.Join("run81"));
    fs::copy_file(MsprobeOutput("dist_gloo_batch_26.2.0.vis.db"), logs_.Join("run26/compare_dist_gloo.vis.db"));
    fs::copy_file(MsprobeOutput("dist_gloo_compare_8.1.2.vis"), logs_.Join("run81/compare_dist_gloo.vis"));
    // The 8.2 and 8.3 schemas (no is_distributed column).
    fs::create_directories(logs_.Join("run8x"));
    fs::copy_file(MsprobeOutput("dist_gloo_batch_8.3.3.vis.db"), logs_.Join("run8x/batch_833.vis.db"));
    fs::copy_file(MsprobeOutput("dist_gloo_compare_8.2.1.vis.db"), logs_.Join("run8x/compare_821.vis.db"));
    before_ = Listing(logs_.path());
    ASSERT_NO_FATAL_FAILURE(Start());
  }
  // A server on the log and cache directories (again after Stop(): a restart).
  void Start() {
    ServiceOptions options;
    options.logdir = logs_.path();
    options.cache_dir = cache_.Join("c");
    auto impl = GraphServiceImpl::Create(options);
    ASSERT_TRUE(impl.ok()) << impl.error().ToString();
    impl_ = std::move(*impl);
    grpc::ServerBuilder builder;
    std::string address = "unix:" + sock_.Join("s.sock");
    builder.AddListeningPort(address, grpc::InsecureServerCredentials());
    builder.RegisterService(impl_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = GraphService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  void TearDown() override { Stop(); }
  void Stop() {
    if (server_) server_->Shutdown();
    server_.reset();
    impl_.reset();  // waits for the details still being written
  }
  grpc::Status Open(const std::string& file) {
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    auto reader = stub_->OpenFile(&ctx, req);
    OpenProgress p;
    while (reader->Read(&p)) {
    }
    return reader->Finish();
  }

  // The file's first all_reduce is found by search and has matched details.
  void ExpectAllReduceDetail(const std::string& file) {
    grpc::ClientContext ctx;
    SearchRequest search;
    search.mutable_view()->set_session("s");
    search.mutable_view()->set_file(file);
    search.set_query("Distributed.all_reduce.0.forward");
    NodeList hits;
    ASSERT_TRUE(stub_->Search(&ctx, search, &hits).ok());
    ASSERT_GE(hits.total(), 1u);
    grpc::ClientContext dctx;
    NodeRequest node;
    *node.mutable_view() = search.view();
    node.set_node(hits.hits(0).index());
    NodeDetailReply detail;
    ASSERT_TRUE(stub_->GetNodeDetail(&dctx, node, &detail).ok());
    EXPECT_GT(detail.detail().input_size(), 0);
    EXPECT_TRUE(detail.has_matched());
  }

  // The index of `name` on one side of an open file, -1 when not found.
  int32_t Find(const std::string& file, vis::Side side, const std::string& name) {
    grpc::ClientContext ctx;
    SearchRequest search;
    search.mutable_view()->set_session("s");
    search.mutable_view()->set_file(file);
    search.mutable_view()->set_side(side);
    search.mutable_view()->set_micro_step(-1);  // every micro step
    search.set_query(name);
    NodeList hits;
    grpc::Status st = stub_->Search(&ctx, search, &hits);
    EXPECT_TRUE(st.ok()) << st.error_message();
    for (const auto& h : hits.hits()) {
      if (h.name() == name) return h.index();
    }
    return -1;
  }
  NodeDetailReply Detail(const std::string& file, vis::Side side, int32_t node) {
    grpc::ClientContext ctx;
    NodeRequest req;
    req.mutable_view()->set_session("s");
    req.mutable_view()->set_file(file);
    req.mutable_view()->set_side(side);
    req.mutable_view()->set_micro_step(-1);
    req.set_node(node);
    NodeDetailReply detail;
    grpc::Status st = stub_->GetNodeDetail(&ctx, req, &detail);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return detail;
  }
  MatchReply CallMatch(bool match, const std::string& file, int32_t npu, int32_t bench) {
    grpc::ClientContext ctx;
    MatchRequest req;
    req.set_file(file);
    req.set_npu_node(npu);
    req.set_bench_node(bench);
    MatchReply reply;
    grpc::Status st = match ? stub_->Match(&ctx, req, &reply) : stub_->Unmatch(&ctx, req, &reply);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return reply;
  }

  FileInfo Info(const std::string& file) {
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    FileInfo info;
    grpc::Status st = stub_->GetFileInfo(&ctx, req, &info);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return info;
  }

  TempDir logs_, cache_, sock_;
  std::set<std::string> before_;
  std::unique_ptr<GraphServiceImpl> impl_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GraphService::Stub> stub_;
};

TEST_F(ForeignFilesTest, StepsAndRanksOfADbAreListedLikeABatch) {
  grpc::ClientContext ctx;
  ListRunsReply runs;
  ASSERT_TRUE(stub_->ListRuns(&ctx, ListRunsRequest(), &runs).ok());
  std::vector<std::string> db;
  for (const RunFile& f : runs.files()) {
    if (f.dir() != "run26") continue;
    db.push_back(f.path() + " " + f.step() + " " + f.rank() + " " + f.group() + " " + f.kind());
  }
  EXPECT_EQ(db, (std::vector<std::string>{
                    "run26/compare_dist_gloo.vis.db#step0_rank0 step0 rank0 run26/compare_dist_gloo compare",
                    "run26/compare_dist_gloo.vis.db#step0_rank1 step0 rank1 run26/compare_dist_gloo compare",
                    "run26/compare_dist_gloo.vis.db#step1_rank0 step1 rank0 run26/compare_dist_gloo compare",
                    "run26/compare_dist_gloo.vis.db#step1_rank1 step1 rank1 run26/compare_dist_gloo compare"}));
}

TEST_F(ForeignFilesTest, OpensEveryGraphOfTheDbAndTheJsonVisAndSearchesThem) {
  for (const std::string file : {"run26/compare_dist_gloo.vis.db#step1_rank1",
                                 "run26/compare_dist_gloo.vis.db#step0_rank0", "run81/compare_dist_gloo.vis"}) {
    SCOPED_TRACE(file);
    grpc::Status st = Open(file);
    ASSERT_TRUE(st.ok()) << st.error_message();
    FileInfo info = Info(file);
    EXPECT_EQ(info.meta().kind(), vis::GRAPH_COMPARE);
    // The node counts the file itself holds.
    std::string source =
        file.find("run26/") == 0 ? MsprobeOutput("dist_gloo_batch_26.2.0.vis.db") : MsprobeOutput("dist_gloo_compare_8.1.2.vis");
    auto graphs = formats::ReadGraphs(source);
    ASSERT_TRUE(graphs.ok()) << graphs.error().ToString();
    const formats::GraphFile* expected = &graphs->front();
    for (const formats::GraphFile& g : *graphs) {
      if (file.find("#" + g.meta.step() + "_" + g.meta.rank()) != std::string::npos) expected = &g;
    }
    EXPECT_EQ(info.npu().nodes(), expected->npu.index.size());
    EXPECT_EQ(info.bench().nodes(), expected->bench.index.size());
    EXPECT_EQ(info.meta().step(), expected->meta.step());
    EXPECT_EQ(info.meta().rank(), expected->meta.rank());
    ASSERT_NO_FATAL_FAILURE(ExpectAllReduceDetail(file));
  }
  EXPECT_EQ(Listing(logs_.path()), before_);  // nothing written into the log directory
  EXPECT_FALSE(Listing(cache_.Join("c")).empty());
}

TEST_F(ForeignFilesTest, OpensTheDbsOfMsprobe82And83) {
  for (const std::string file : {"run8x/batch_833.vis.db#step1_rank0", "run8x/compare_821.vis.db"}) {
    SCOPED_TRACE(file);
    grpc::Status st = Open(file);
    ASSERT_TRUE(st.ok()) << st.error_message();
    FileInfo info = Info(file);
    EXPECT_EQ(info.meta().kind(), vis::GRAPH_COMPARE);
    auto graphs =
        formats::ReadGraphs(file.find("batch") != std::string::npos ? MsprobeOutput("dist_gloo_batch_8.3.3.vis.db")
                                                                    : MsprobeOutput("dist_gloo_compare_8.2.1.vis.db"));
    ASSERT_TRUE(graphs.ok()) << graphs.error().ToString();
    const formats::GraphFile* expected = &graphs->front();
    for (const formats::GraphFile& g : *graphs) {
      if (file.find("#" + g.meta.step() + "_" + g.meta.rank()) != std::string::npos) expected = &g;
    }
    EXPECT_EQ(info.meta().step(), expected->meta.step());
    EXPECT_EQ(info.npu().nodes(), expected->npu.index.size());
    EXPECT_EQ(info.bench().nodes(), expected->bench.index.size());
    ASSERT_NO_FATAL_FAILURE(ExpectAllReduceDetail(file));
  }
  EXPECT_EQ(Listing(logs_.path()), before_);
}

std::vector<std::string> CacheFiles(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Hierarchy first: the open writes the graph's index alone into the cache,
// details come from the whole file written behind it, and a restarted
// server opens the whole file at once.
TEST_F(ForeignFilesTest, ADbGraphOpensHierarchyFirstAndItsDetailsFollow) {
  const std::string file = "run26/compare_dist_gloo.vis.db#step1_rank0";
  ASSERT_TRUE(Open(file).ok());
  EXPECT_EQ(CacheFiles(cache_.Join("c"), ".index.vis"), std::vector<std::string>{"step1_rank0.index.vis"});
  FileInfo first = Info(file);
  ASSERT_NO_FATAL_FAILURE(ExpectAllReduceDetail(file));  // from the .vis.db, or the whole file once written
  Stop();                                                // waits for the whole file
  EXPECT_EQ(CacheFiles(cache_.Join("c"), "rank0.vis"), std::vector<std::string>{"step1_rank0.vis"});
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_TRUE(Open(file).ok());
  FileInfo again = Info(file);
  EXPECT_EQ(again.npu().nodes(), first.npu().nodes());
  EXPECT_EQ(again.bench().matched(), first.bench().matched());
  EXPECT_EQ(again.meta().npu().stack_count(), first.meta().npu().stack_count());
  ASSERT_NO_FATAL_FAILURE(ExpectAllReduceDetail(file));
  EXPECT_EQ(Listing(logs_.path()), before_);
}

// Damaged items show when the details are read, not at open: the hierarchy
// opens, and a node's details are an error naming the file and the column.
TEST_F(ForeignFilesTest, DamagedItemsOfADbAreAnErrorOfTheDetailsNamingTheFile) {
  std::string db = logs_.Join("run26/damaged.vis.db");
  fs::copy_file(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"), db);
  ExecSql(db,
          "PRAGMA journal_mode=DELETE; UPDATE tb_nodes SET input_data = '{\"x\": {\"Max\": ' "
          "WHERE node_name = 'Distributed.all_reduce.0.forward'");
  grpc::Status st = Open("run26/damaged.vis.db");
  ASSERT_TRUE(st.ok()) << st.error_message();
  // The damaged node itself: read from the .vis.db while the whole file is
  // written, else (any node) the error of the whole file.
  int32_t damaged = Find("run26/damaged.vis.db", vis::SIDE_NPU, "Distributed.all_reduce.0.forward");
  ASSERT_GE(damaged, 0);
  grpc::ClientContext ctx;
  NodeRequest node;
  node.mutable_view()->set_session("s");
  node.mutable_view()->set_file("run26/damaged.vis.db");
  node.set_node(damaged);
  NodeDetailReply detail;
  st = stub_->GetNodeDetail(&ctx, node, &detail);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DATA_LOSS);
  EXPECT_NE(st.error_message().find("run26/damaged.vis.db"), std::string::npos) << st.error_message();
  EXPECT_NE(st.error_message().find("column input_data"), std::string::npos) << st.error_message();
}

TEST_F(ForeignFilesTest, ABrokenDbIsAnErrorNamingTheFile) {
  std::ofstream(logs_.Join("run26/broken.vis.db")) << "not a database at all, but long enough";
  grpc::Status st = Open("run26/broken.vis.db");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.error_message().find("run26/broken.vis.db"), std::string::npos) << st.error_message();
}

// Manual matching on imported statistics (issue 9, point 2): a pair of a
// msprobe .vis.db and of a msprobe JSON .vis is unmatched, then matched
// again by hand; the service compares the imported items and grades the
// pair. Nothing is written into the log directory.
TEST_F(ForeignFilesTest, ManualMatchOnADbAndAJsonVis) {
  const std::string name = "Distributed.all_reduce.0.forward";
  for (const std::string file : {"run26/compare_dist_gloo.vis.db#step0_rank1", "run81/compare_dist_gloo.vis"}) {
    SCOPED_TRACE(file);
    ASSERT_TRUE(Open(file).ok());
    int32_t npu = Find(file, vis::SIDE_NPU, name), bench = Find(file, vis::SIDE_BENCH, name);
    ASSERT_GE(npu, 0);
    ASSERT_GE(bench, 0);
    NodeDetailReply before = Detail(file, vis::SIDE_NPU, npu);
    ASSERT_TRUE(before.has_matched()) << "msprobe matched it";
    ASSERT_GT(before.detail().input_size(), 0);
    const uint32_t matched = Info(file).npu().matched();

    MatchReply un = CallMatch(false, file, npu, bench);
    ASSERT_EQ(un.results_size(), 1);
    EXPECT_TRUE(un.results(0).ok()) << un.results(0).error();
    EXPECT_EQ(un.info().npu().matched(), matched - 1);
    NodeDetailReply apart = Detail(file, vis::SIDE_NPU, npu);
    EXPECT_FALSE(apart.has_matched());
    for (const vis::Item& item : apart.detail().input()) EXPECT_EQ(item.metric_size(), 0) << item.key();

    MatchReply again = CallMatch(true, file, npu, bench);
    ASSERT_EQ(again.results_size(), 1);
    EXPECT_TRUE(again.results(0).ok()) << again.results(0).error();
    EXPECT_EQ(again.results(0).npu(), name);
    EXPECT_EQ(again.results(0).bench(), name);
    EXPECT_TRUE(again.results(0).has_precision());
    EXPECT_EQ(again.info().npu().matched(), matched);
    NodeDetailReply after = Detail(file, vis::SIDE_NPU, npu);
    ASSERT_TRUE(after.has_matched());
    EXPECT_EQ(after.matched().name(), name);
    int with_metrics = 0;
    for (const vis::Item& item : after.detail().input()) with_metrics += item.metric_size() > 0;
    EXPECT_GT(with_metrics, 0) << "the imported statistics compared again";
  }
  EXPECT_EQ(Listing(logs_.path()), before_);
}

// A .vis.db of two micro steps (msprobe 26.2.0 on samples/p2p_micro): the
// file's micro steps become the page's picker, a view of one micro step
// shows its own nodes, and the isend/irecv links are in the details.
TEST_F(ForeignFilesTest, MicroStepsAndLinksOfADb) {
  fs::create_directories(logs_.Join("micro"));
  fs::copy_file(MsprobeOutput("p2p_micro_batch_26.2.0.vis.db"), logs_.Join("micro/p2p.vis.db"));
  const std::string file = "micro/p2p.vis.db#step0_rank0";
  ASSERT_TRUE(Open(file).ok());
  FileInfo info = Info(file);
  EXPECT_EQ(info.meta().micro_steps(), 2u);
  for (int micro : {0, 1}) {
    SCOPED_TRACE(micro);
    grpc::ClientContext ctx;
    SearchRequest search;
    search.mutable_view()->set_session("s");
    search.mutable_view()->set_file(file);
    search.mutable_view()->set_micro_step(micro);
    search.set_query("Module.fc.Linear.forward.");
    NodeList hits;
    ASSERT_TRUE(stub_->Search(&ctx, search, &hits).ok());
    ASSERT_EQ(hits.total(), 1u) << "one forward call a micro step";
    EXPECT_EQ(hits.hits(0).name(), "Module.fc.Linear.forward." + std::to_string(micro));
  }
  int32_t isend = Find(file, vis::SIDE_NPU, "Distributed.isend.1.forward");
  ASSERT_GE(isend, 0);
  NodeDetailReply d = Detail(file, vis::SIDE_NPU, isend);
  ASSERT_EQ(d.detail().distributed_size(), 1);
  EXPECT_EQ(d.detail().distributed(0).peer_node(), "Distributed.irecv.1.forward");
  EXPECT_EQ(d.detail().distributed(0).rank(), 1);
}

// Damaged msprobe files opened through the service (the page's open, which
// reads a .vis.db hierarchy first): an error naming the file and the place,
// never a crash, and the server goes on serving the good files.
TEST_F(ForeignFilesTest, DamagedFilesAreAnErrorNamingTheFile) {
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  fs::create_directories(logs_.Join("bad"));
  const std::string db = read(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"));
  std::ofstream(logs_.Join("bad/truncated.vis.db"), std::ios::binary) << db.substr(0, db.size() / 2);
  fs::copy_file(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"), logs_.Join("bad/no_table.vis.db"));
  ExecSql(logs_.Join("bad/no_table.vis.db"), "PRAGMA journal_mode=DELETE; DROP TABLE tb_config");
  fs::copy_file(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"), logs_.Join("bad/no_column.vis.db"));
  ExecSql(logs_.Join("bad/no_column.vis.db"),
          "PRAGMA journal_mode=DELETE; ALTER TABLE tb_nodes DROP COLUMN sub_nodes");
  const std::string json = read(MsprobeOutput("dist_gloo_compare_8.1.2.vis"));
  std::ofstream(logs_.Join("bad/half.vis"), std::ios::binary) << json.substr(0, json.size() / 2);
  // A matched_node_link naming no node of the other side (the server died of SIGSEGV).
  fs::copy_file(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"), logs_.Join("bad/link.vis.db"));
  ExecSql(logs_.Join("bad/link.vis.db"),
          "PRAGMA journal_mode=DELETE; UPDATE tb_nodes SET matched_node_link = '[\"Module.no_such_node\"]' "
          "WHERE node_name = 'Distributed.all_reduce.0.forward' AND data_source = 'NPU'");
  // The first link of the file (a list of names, the peer last) names no node.
  std::string relinked = json;
  size_t at = relinked.find("\"matched_node_link\": [");
  ASSERT_NE(at, std::string::npos);
  relinked.replace(at, relinked.find(']', at) + 1 - at, "\"matched_node_link\": [\"Module.no_such_node\"]");
  std::ofstream(logs_.Join("bad/link.vis"), std::ios::binary) << relinked;
  const std::set<std::string> with_bad = Listing(logs_.path());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bad/truncated.vis.db", "SQLite"},
      {"bad/no_table.vis.db", "table tb_config"},
      {"bad/no_column.vis.db", "column sub_nodes"},
      {"bad/half.vis", "line "},
      {"bad/link.vis.db", "node Distributed.all_reduce.0.forward: matched_node_link names 'Module.no_such_node'"},
      {"bad/link.vis", ": matched_node_link names 'Module.no_such_node'"}};
  for (const auto& [file, where] : cases) {
    SCOPED_TRACE(file);
    grpc::Status st = Open(file);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error_code(), grpc::StatusCode::DATA_LOSS) << st.error_message();
    EXPECT_NE(st.error_message().find(file), std::string::npos) << st.error_message();
    EXPECT_NE(st.error_message().find(where), std::string::npos) << st.error_message();
    EXPECT_EQ(st.error_message().find('\n'), std::string::npos) << "one line: " << st.error_message();
  }
  EXPECT_EQ(Listing(logs_.path()), with_bad);
  ASSERT_TRUE(Open("run81/compare_dist_gloo.vis").ok()) << "the server is still up";
}

}  // namespace
}  // namespace graph_ascend::service
