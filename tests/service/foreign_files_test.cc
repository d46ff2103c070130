// The service on msprobe's own files: a .vis.db of msprobe 26.2.0 (four steps
// and ranks) and a JSON .vis of msprobe 8.1.2 (tests/data/msprobe_outputs),
// listed, opened through a cache directory outside the log directory,
// searched and shown. The log directory is never written.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <new>
#include <set>
#include <system_error>
#include <thread>
#include <vector>

#include "../builder/thread_limit.h"
#include "formats/foreign_file.h"
#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string Fixture(const std::string& name) {
  const char* src = getenv("GA_SOURCE_DIR");
  return std::string(src != nullptr ? src : ".") + "/tests/data/msprobe_outputs/" + name;
}

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
    fs::copy_file(Fixture("dist_gloo_batch_26.2.0.vis.db"), logs_.Join("run26/compare_dist_gloo.vis.db"));
    fs::copy_file(Fixture("dist_gloo_compare_8.1.2.vis"), logs_.Join("run81/compare_dist_gloo.vis"));
    // The 8.2 and 8.3 schemas (no is_distributed column).
    fs::create_directories(logs_.Join("run8x"));
    fs::copy_file(Fixture("dist_gloo_batch_8.3.3.vis.db"), logs_.Join("run8x/batch_833.vis.db"));
    fs::copy_file(Fixture("dist_gloo_compare_8.2.1.vis.db"), logs_.Join("run8x/compare_821.vis.db"));
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
        file.find("run26/") == 0 ? Fixture("dist_gloo_batch_26.2.0.vis.db") : Fixture("dist_gloo_compare_8.1.2.vis");
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
        formats::ReadGraphs(file.find("batch") != std::string::npos ? Fixture("dist_gloo_batch_8.3.3.vis.db")
                                                                    : Fixture("dist_gloo_compare_8.2.1.vis.db"));
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
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), db);
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h,
                         "PRAGMA journal_mode=DELETE; UPDATE tb_nodes SET input_data = '{\"x\": {\"Max\": ' "
                         "WHERE node_name = 'Distributed.all_reduce.0.forward'",
                         nullptr, nullptr, &err),
            SQLITE_OK)
      << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
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
  fs::copy_file(Fixture("p2p_micro_batch_26.2.0.vis.db"), logs_.Join("micro/p2p.vis.db"));
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
  auto exec = [](const std::string& db, const std::string& sql) {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(h, ("PRAGMA journal_mode=DELETE; " + sql).c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(h);
  };
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  fs::create_directories(logs_.Join("bad"));
  const std::string db = read(Fixture("dist_gloo_compare_26.2.0.vis.db"));
  std::ofstream(logs_.Join("bad/truncated.vis.db"), std::ios::binary) << db.substr(0, db.size() / 2);
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), logs_.Join("bad/no_table.vis.db"));
  exec(logs_.Join("bad/no_table.vis.db"), "DROP TABLE tb_config");
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), logs_.Join("bad/no_column.vis.db"));
  exec(logs_.Join("bad/no_column.vis.db"), "ALTER TABLE tb_nodes DROP COLUMN sub_nodes");
  const std::string json = read(Fixture("dist_gloo_compare_8.1.2.vis"));
  std::ofstream(logs_.Join("bad/half.vis"), std::ios::binary) << json.substr(0, json.size() / 2);
  // A matched_node_link naming no node of the other side (the server died of SIGSEGV).
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), logs_.Join("bad/link.vis.db"));
  exec(logs_.Join("bad/link.vis.db"),
       "UPDATE tb_nodes SET matched_node_link = '[\"Module.no_such_node\"]' "
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

// The whole file of a graph opened hierarchy first is written on a thread of
// its own, and the two sides of a compare are read on two; when no thread can
// be started (a thread limit) the work is done on the caller's thread, and
// the details come (issue 17, 1c: std::system_error escaped StartFill, and a
// fill that never ran would have left its waiters in DetailFill::Wait()).
TEST(ForeignFilesOpen, AGraphOpensWithItsDetailsWhenNoThreadCanBeStarted) {
  TempDir logs, cache;
  const std::string db = logs.Join("compare.vis.db");
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), db);
  auto foreign = ForeignFiles::Open(cache.Join("c"), logs.path());
  ASSERT_TRUE(foreign.ok()) << foreign.error().ToString();
  graph_ascend::testing::NoNewThreads limit;
  ASSERT_TRUE(limit.ok());
  EXPECT_THROW(std::thread([] {}).join(), std::system_error);  // the limit holds
  auto opened = foreign->Converted(db, "");
  ASSERT_TRUE(opened.ok()) << opened.error().ToString();
  ASSERT_NE(opened->details, nullptr) << "an index-only file and its fill";
  auto file = OpenGraph::Open(opened->path, "compare.vis.db", {}, DetailsOf(opened->details, db, "compare.vis.db"));
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  foreign->StartFill(*opened);
  auto whole = opened->details->Wait();
  ASSERT_TRUE(whole.ok()) << whole.error().ToString();
  int32_t all_reduce = (*file)->side(vis::SIDE_NPU)->Find("Distributed.all_reduce.0.forward");
  ASSERT_GE(all_reduce, 0);
  auto detail = (*file)->Detail(vis::SIDE_NPU, static_cast<uint32_t>(all_reduce));
  ASSERT_TRUE(detail.ok()) << detail.error().ToString();
  EXPECT_GT(detail->input_size(), 0);
}

// The fill out of memory, for real: a child process opens a graph hierarchy
// first, then lowers its address-space limit to what it uses plus a margin,
// from none (no thread can start: the fill runs on the caller's thread) to a
// few tens of MiB (the fill's thread starts and its allocations fail), and
// starts the fill. Each child must get an answer from Wait(), the whole file
// or an error, and end normally: an exception on the fill's thread
// (std::bad_alloc) or from StartFill (std::system_error) would abort it.
//
// Each child is this test binary started afresh (as gtest's threadsafe death
// tests do), running only this test with the level in its environment: a
// child forked from a process that other tests had grown kept their freed
// heap and thread stacks, inside its limit, and its fill never ran short.
constexpr char kFillTest[] = "ForeignFilesOpen.AFillOutOfMemoryIsAnErrorOfTheDetailsNotAnAbort";

// The child's side: exits 0 (the whole file), 1 (an error, written to the
// fd GA_FILL_FD), 3 (no verdict) or 10-13 (could not set up).
[[noreturn]] void FillUnderLimit(size_t mib) {
  const char* fd = getenv("GA_FILL_FD");
  const char* db = getenv("GA_FILL_DB");
  const char* cache = getenv("GA_FILL_CACHE");
  const char* logs = getenv("GA_FILL_LOGS");
  if (fd == nullptr || db == nullptr || cache == nullptr || logs == nullptr) _exit(10);
  auto foreign = ForeignFiles::Open(cache, logs);
  if (!foreign.ok()) _exit(10);
  auto opened = foreign->Converted(db, "");
  if (!opened.ok() || opened->details == nullptr) _exit(11);
  long pages = 0;
  FILE* statm = fopen("/proc/self/statm", "r");
  if (statm == nullptr || fscanf(statm, "%ld", &pages) != 1) _exit(12);
  fclose(statm);
  rlimit lim;
  getrlimit(RLIMIT_AS, &lim);
  rlimit low = lim;
  low.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (mib << 20);
  if (setrlimit(RLIMIT_AS, &low) != 0) _exit(13);
  Result<std::string> whole = Error{};
  try {
    foreign->StartFill(*opened);
    whole = opened->details->Wait();
  } catch (const std::bad_alloc&) {
    _exit(3);  // this (the test's) thread's own copy of the answer failed: no verdict
  }
  setrlimit(RLIMIT_AS, &lim);
  std::string said = whole.ok() ? "ok" : whole.error().ToString();
  (void)!write(atoi(fd), said.data(), said.size());
  _exit(whole.ok() ? 0 : 1);
}

TEST(ForeignFilesOpen, AFillOutOfMemoryIsAnErrorOfTheDetailsNotAnAbort) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an address-space limit and AddressSanitizer's shadow memory do not mix";
#else
  if (const char* mib = getenv("GA_FILL_MIB")) FillUnderLimit(static_cast<size_t>(atol(mib)));
  TempDir logs, cache;
  const std::string db = logs.Join("compare.vis.db");
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), db);
  int errors = 0, answers = 0;
  for (size_t mib : {0, 1, 2, 4, 8, 10, 12, 16, 24, 32, 48, 64, 96}) {
    SCOPED_TRACE(std::to_string(mib) + " MiB above what the process uses");
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    // Made before the fork: the child only execs.
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.push_back("GA_FILL_MIB=" + std::to_string(mib));
    env.push_back("GA_FILL_FD=" + std::to_string(out[1]));
    env.push_back("GA_FILL_DB=" + db);
    env.push_back("GA_FILL_CACHE=" + cache.Join("c" + std::to_string(mib)));
    env.push_back("GA_FILL_LOGS=" + logs.path());
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string filter = std::string("--gtest_filter=") + kFillTest;
    char self[] = "/proc/self/exe";
    char* argv[] = {self, filter.data(), nullptr};
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(out[0]);
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, STDOUT_FILENO);  // the child's gtest report
      execve(self, argv, envp.data());
      _exit(14);
    }
    close(out[1]);
    std::string said;
    char buf[4096];
    for (ssize_t n; (n = read(out[0], buf, sizeof(buf))) > 0;) said.append(buf, static_cast<size_t>(n));
    close(out[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "died of signal " << WTERMSIG(status);
    int code = WEXITSTATUS(status);
    ASSERT_TRUE(code == 0 || code == 1 || code == 3) << "exit " << code << ": " << said;
    answers += code != 3;
    if (code == 1) {
      ++errors;
      EXPECT_FALSE(said.empty());
    }
  }
  EXPECT_GT(answers, 0);
  EXPECT_GT(errors, 0) << "the limit never made the fill fail";
#endif
}

TEST(ForeignFilesOpen, CacheInsideTheLogDirectoryIsRefused) {
  TempDir logs;
  ServiceOptions options;
  options.logdir = logs.path();
  options.cache_dir = logs.Join("cache");
  EXPECT_FALSE(GraphServiceImpl::Create(options).ok());
}

// A conversion cut short by SIGKILL leaves "<key>.tmp-<pid>"; the next
// server removes it once its process is gone and it has not been written
// for 10 minutes, and leaves the others (a live writer, a recent one).
TEST(ForeignFilesOpen, ConversionsLeftByDeadProcessesAreRemoved) {
  TempDir cache;
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  auto make = [&](const std::string& name, bool old) {
    fs::create_directories(cache.Join(name));
    std::ofstream(cache.Join(name + "/graph.vis.tmp-1")) << "half";
    if (old) fs::last_write_time(cache.Join(name), fs::file_time_type::clock::now() - std::chrono::hours(1));
  };
  const std::string dead_old = "0000000000000001.tmp-" + std::to_string(dead);
  const std::string dead_recent = "0000000000000002.tmp-" + std::to_string(dead);
  const std::string alive_old = "0000000000000003.tmp-" + std::to_string(getppid());
  make(dead_old, true);
  make(dead_recent, false);
  make(alive_old, true);
  fs::create_directories(cache.Join("0000000000000004"));  // a finished conversion
  TempDir logs;
  ASSERT_TRUE(ForeignFiles::Open(cache.path(), logs.path()).ok());
  EXPECT_FALSE(fs::exists(cache.Join(dead_old)));
  EXPECT_TRUE(fs::exists(cache.Join(dead_recent)));
  EXPECT_TRUE(fs::exists(cache.Join(alive_old)));
  EXPECT_TRUE(fs::exists(cache.Join("0000000000000004")));
}

// Details asked before the whole file of a graph opened hierarchy first is
// written (its fill not started yet: the test holds it) are read from the
// .vis.db node by node, and each must be the detail the finished file gives:
// every node of both sides of graph `id` of `db`.
void ExpectDetailsBeforeTheFillAsAfter(const std::string& db, const std::string& id) {
  SCOPED_TRACE(db + "#" + id);
  TempDir cache;
  auto foreign = ForeignFiles::Open(cache.Join("c"), fs::path(db).parent_path().string());
  ASSERT_TRUE(foreign.ok()) << foreign.error().ToString();
  auto opened = foreign->Converted(db, id);
  ASSERT_TRUE(opened.ok()) << opened.error().ToString();
  ASSERT_NE(opened->details, nullptr) << "an index-only file and its fill";
  auto file = OpenGraph::Open(opened->path, "run.vis.db", {}, DetailsOf(opened->details, db, "run.vis.db"),
                              NodeDetailsOf(opened->details, db, "run.vis.db", opened->path));
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  std::vector<std::string> early[2];
  int with_stack = 0;
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    const SideGraph* g = (*file)->side(side);
    if (g == nullptr) continue;
    for (uint32_t n = 0; n < g->size(); ++n) {
      auto d = (*file)->Detail(side, n);
      ASSERT_TRUE(d.ok()) << g->name(n) << ": " << d.error().ToString();
      with_stack += d->stack_id() >= 0;
      early[side == vis::SIDE_BENCH].push_back(d->SerializeAsString());
    }
  }
  EXPECT_FALSE(opened->details->done()) << "the details were asked before the fill";
  EXPECT_GT(with_stack, 0);
  foreign->StartFill(*opened);
  auto whole = opened->details->Wait();
  ASSERT_TRUE(whole.ok()) << whole.error().ToString();
  auto filled = OpenGraph::Open(*whole, "run.vis.db", {});
  ASSERT_TRUE(filled.ok()) << filled.error().ToString();
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    const SideGraph* g = (*filled)->side(side);
    if (g == nullptr) continue;
    ASSERT_EQ(g->size(), early[side == vis::SIDE_BENCH].size());
    for (uint32_t n = 0; n < g->size(); ++n) {
      auto d = (*filled)->Detail(side, n);
      ASSERT_TRUE(d.ok()) << d.error().ToString();
      ASSERT_EQ(d->SerializeAsString(), early[side == vis::SIDE_BENCH][n]) << g->name(n);
      // The same file, its fill done, reads them from the whole file.
      auto again = (*file)->Detail(side, n);
      ASSERT_TRUE(again.ok()) << again.error().ToString();
      ASSERT_EQ(again->SerializeAsString(), early[side == vis::SIDE_BENCH][n]) << g->name(n);
    }
  }
}

void ExecSql(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

TEST(ForeignFilesOpen, NodeDetailsBeforeTheFillAreTheFilledOnes) {
  TempDir logs;
  // msprobe 26.2.0 (tb_stack), a batch of steps and ranks, the 8.2 schema, inline stacks of 8.2.0.
  for (const char* name : {"dist_gloo_compare_26.2.0.vis.db", "dist_gloo_build_26.2.0.vis.db",
                           "dist_gloo_compare_8.2.1.vis.db", "p2p_micro_batch_8.2.0.vis.db"}) {
    ExpectDetailsBeforeTheFillAsAfter(Fixture(name), "");
  }
  for (const char* id : {"step0_rank1", "step1_rank0"}) {
    ExpectDetailsBeforeTheFillAsAfter(Fixture("dist_gloo_batch_26.2.0.vis.db"), id);
  }
  // The root last (msprobe 26.2 writes it so) and a repeated name, whose two
  // records ReadGraph merges into one node (the second with no input items).
  const std::string moved = logs.Join("moved.vis.db");
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), moved);
  ExecSql(moved, "PRAGMA journal_mode=DELETE; UPDATE tb_nodes SET node_order = 100000 WHERE up_node = ''");
  ExpectDetailsBeforeTheFillAsAfter(moved, "");
  const std::string twice = logs.Join("twice.vis.db");
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), twice);
  ExecSql(twice,
          "PRAGMA journal_mode=DELETE; INSERT INTO tb_nodes SELECT id || '_again', graph_id, node_order + 100000, "
          "node_name, node_type, up_node, sub_nodes, precision_index, overflow_level, micro_step_id, "
          "matched_node_link, stack_id, parallel_merge_info, matched_distributed, modified, '{}', output_data, "
          "data_source, dump_data_dir, step, rank, is_distributed FROM tb_nodes WHERE node_order IN (3, 5)");
  ExpectDetailsBeforeTheFillAsAfter(twice, "");
}

}  // namespace
}  // namespace graph_ascend::service
