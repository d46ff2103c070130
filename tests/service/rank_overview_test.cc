// The rank overview (docs/OVERVIEW.md): the origin trace over cross-rank
// links, and GetOverview on batches that bin/graph-ascend builds from the
// real msprobe dumps of samples/rank_origin (4 ranks, rank 2 perturbed) and
// samples/dist_gloo (2 ranks, rank 1 perturbed).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "../builder/cli_runner.h"
#include "../builder/thread_limit.h"
#include "graph_service.h"
#include "rank_overview.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

RankLink Self(int32_t rank) { return {rank, true, false, {}}; }
RankLink Comm(int32_t rank, std::vector<int32_t> peers) { return {rank, true, true, std::move(peers)}; }
RankLink Quiet(int32_t rank) { return {rank, false, false, {}}; }

TEST(TraceOriginsTest, CollectiveFromOnePerturbedRank) {
  // ranks 0, 1, 3 first diverge at an all_gather with everyone; rank 2 at its own layer_norm.
  auto o = TraceOrigins({Comm(0, {0, 1, 2, 3}), Comm(1, {0, 1, 2, 3}), Self(2), Comm(3, {0, 1, 2, 3})});
  ASSERT_EQ(o.size(), 4u);
  for (int i : {0, 1, 3}) {
    EXPECT_EQ(o[i].caused_by, 2) << "rank " << i;
    EXPECT_EQ(o[i].origin, 2) << "rank " << i;
  }
  EXPECT_EQ(o[2].caused_by, -1);
  EXPECT_EQ(o[2].origin, 2);
}

TEST(TraceOriginsTest, ChainOfReceivesLeadsBackToTheOrigin) {
  // 3 receives from 1, 1 receives from 0 (send/recv pipeline), 0 diverged by itself, 2 agrees.
  auto o = TraceOrigins({Self(0), Comm(1, {0}), Quiet(2), Comm(3, {1})});
  EXPECT_EQ(o[1].caused_by, 0);
  EXPECT_EQ(o[3].caused_by, 1);
  EXPECT_EQ(o[3].origin, 0);
  EXPECT_EQ(o[2].origin, -1) << "a rank that does not diverge has no origin";
}

TEST(TraceOriginsTest, NearestSenderAndLowerRankFirst) {
  // 2 hears from 0 (an origin) and 1 (caused by 0): it takes the origin itself.
  auto o = TraceOrigins({Self(0), Comm(1, {0}), Comm(2, {1, 0})});
  EXPECT_EQ(o[2].caused_by, 0);
  // Two origins in one collective: the lower rank is named.
  o = TraceOrigins({Comm(0, {0, 1, 2, 3}), Self(1), Self(2), Comm(3, {0, 1, 2, 3})});
  EXPECT_EQ(o[0].caused_by, 1);
  EXPECT_EQ(o[3].origin, 1);
  EXPECT_EQ(o[1].origin, 1);
  EXPECT_EQ(o[2].origin, 2);
}

TEST(TraceOriginsTest, CommunicationWithoutADivergingSenderIsItsOwnOrigin) {
  // 0 and 1 first diverge at an all_reduce with each other and nobody diverged before:
  // the data came from outside what the dumps rank (e.g. an input that differs from the start).
  auto o = TraceOrigins({Comm(0, {1}), Comm(1, {0}), Quiet(2)});
  EXPECT_EQ(o[0].origin, 0);
  EXPECT_EQ(o[0].caused_by, -1);
  EXPECT_EQ(o[1].origin, 1);
  // A peer whose file is missing (rank 5 is not in the list) leaves the receiver its own origin.
  o = TraceOrigins({Comm(0, {5})});
  EXPECT_EQ(o[0].origin, 0);
}

// A server over a log directory of batches built by bin/graph-ascend.
class RankOverviewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logdir_ = dir_ / "logdir";
    std::filesystem::create_directories(logdir_);
  }

  void Build(const std::string& sample, const std::string& out) {
    graph_ascend::testing::RunResult r = graph_ascend::testing::RunTool(
        {"graph", "-i", graph_ascend::testing::Sample(sample + "/batch.json"), "-o", logdir_ + "/" + out});
    ASSERT_EQ(r.status, 0) << r.err;
  }

  void Start() {
    ServiceOptions options;
    options.logdir = logdir_;
    options.cache_dir = dir_ / "cache";  // the conversions of msprobe's .vis.db
    service_.Start(options, dir_ / "s.sock");
  }

  // The paths ListRuns gives (a .vis.db: one per graph, "run.vis.db#step0_rank1").
  std::vector<std::string> Listed() {
    grpc::ClientContext ctx;
    ListRunsRequest req;
    ListRunsReply reply;
    EXPECT_TRUE(service_.stub()->ListRuns(&ctx, req, &reply).ok());
    std::vector<std::string> out;
    for (const RunFile& f : reply.files()) out.push_back(f.path());
    return out;
  }

  // The cell's counts are those of its file's info once opened (the page's own summary).
  void ExpectCountsOfItsFile(const OverviewCell& c) {
    FileInfo info;
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(c.file());
    ASSERT_TRUE(service_.stub()->GetFileInfo(&ctx, req, &info).ok()) << c.file();
    int worst = -1;
    for (const BucketCount& b : info.npu().buckets()) {
      if (b.count() > 0 && !info.meta().legend(b.bucket()).unmatched()) worst = std::max(worst, b.bucket());
    }
    EXPECT_EQ(c.worst_bucket(), worst) << c.file();
    EXPECT_EQ(c.overflow_medium(), info.npu().overflow_medium()) << c.file();
    EXPECT_EQ(c.overflow_high(), info.npu().overflow_high()) << c.file();
    EXPECT_EQ(c.overflow_critical(), info.npu().overflow_critical()) << c.file();
  }

  // The relative paths of the .vis files under `out`, in natural order.
  std::vector<std::string> Files(const std::string& out) {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(logdir_ + "/" + out)) {
      if (e.path().extension() == ".vis") files.push_back(out + "/" + e.path().filename().string());
    }
    std::sort(files.begin(), files.end(), NaturalLess);
    return files;
  }

  grpc::Status Overview(const std::string& file, OverviewReply* reply) {
    grpc::ClientContext ctx;
    OverviewRequest req;
    req.set_file(file);
    return service_.stub()->GetOverview(&ctx, req, reply);
  }

  // Cells by "stepS/rankR".
  static std::map<std::string, OverviewCell> Cells(const OverviewReply& r) {
    std::map<std::string, OverviewCell> out;
    for (const OverviewCell& c : r.cells()) out[r.steps(c.step()) + "/" + r.ranks(c.rank())] = c;
    return out;
  }

  graph_ascend::testing::TempDir dir_;
  std::string logdir_;
  testing::InProcessService service_;
};

TEST_F(RankOverviewTest, FourRanksOnePerturbedNamesRankTwo) {
  Build("rank_origin", "job");
  Start();
  std::vector<std::string> files = Files("job");
  ASSERT_EQ(files.size(), 8u) << "2 steps x 4 ranks";
  OverviewReply reply;
  ASSERT_TRUE(Overview(files[3], &reply).ok());
  EXPECT_EQ(std::vector<std::string>(reply.steps().begin(), reply.steps().end()),
            (std::vector<std::string>{"step0", "step1"}));
  EXPECT_EQ(std::vector<std::string>(reply.ranks().begin(), reply.ranks().end()),
            (std::vector<std::string>{"rank0", "rank1", "rank2", "rank3"}));
  ASSERT_EQ(reply.cells_size(), 8);
  EXPECT_EQ(reply.origin_step(), "step0");
  EXPECT_EQ(std::vector<std::string>(reply.origin_ranks().begin(), reply.origin_ranks().end()),
            std::vector<std::string>{"rank2"});
  auto cells = Cells(reply);
  const OverviewCell& two = cells["step0/rank2"];
  EXPECT_EQ(two.first(), "Functional.layer_norm.0.forward");
  EXPECT_FALSE(two.communication());
  EXPECT_EQ(two.origin(), "rank2");
  EXPECT_EQ(two.caused_by(), "");
  EXPECT_GE(two.first_node(), 0);
  for (const char* r : {"rank0", "rank1", "rank3"}) {
    const OverviewCell& c = cells[std::string("step0/") + r];
    EXPECT_EQ(c.first(), "Distributed.all_gather.0.forward") << r;
    EXPECT_TRUE(c.communication()) << r;
    EXPECT_EQ(c.caused_by(), "rank2") << r;
    EXPECT_EQ(c.origin(), "rank2") << r;
    EXPECT_EQ(c.reason_text(), "outputs differ, inputs agree") << r;
  }
  // Every cell carries the counts of its own file, the same as the file's info once opened.
  for (const OverviewCell& c : reply.cells()) {
    ASSERT_TRUE(c.error().empty()) << c.error();
    EXPECT_TRUE(c.counted()) << c.file();
    EXPECT_TRUE(c.ranked()) << c.file();
    FileInfo info;
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(c.file());
    ASSERT_TRUE(service_.stub()->GetFileInfo(&ctx, req, &info).ok());
    int worst = -1;
    for (const BucketCount& b : info.npu().buckets()) {
      if (b.count() > 0 && !info.meta().legend(b.bucket()).unmatched()) worst = std::max(worst, b.bucket());
    }
    EXPECT_EQ(c.worst_bucket(), worst) << c.file();
    EXPECT_EQ(c.overflow_medium(), info.npu().overflow_medium()) << c.file();
    EXPECT_EQ(c.overflow_high(), info.npu().overflow_high()) << c.file();
    EXPECT_EQ(c.overflow_critical(), info.npu().overflow_critical()) << c.file();
    EXPECT_EQ(c.divergence_count(), info.meta().divergence_count()) << c.file();
  }
  // The first divergence's node is the ranking's entry 0 (where a click on the cell lands).
  DivergenceReply div;
  {
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(two.file());
    ASSERT_TRUE(service_.stub()->GetDivergence(&ctx, req, &div).ok());
  }
  ASSERT_GT(div.items_size(), 0);
  EXPECT_EQ(div.items(0).npu_node(), two.first_node());
  EXPECT_EQ(div.items(0).name(), two.first());
  // GetDivergence's ranks agree with the overview's step 0.
  ASSERT_EQ(div.ranks_size(), 4);
  for (const DivergenceRank& r : div.ranks()) {
    EXPECT_EQ(r.caused_by(), cells["step0/" + r.rank()].caused_by()) << r.rank();
  }
}

TEST_F(RankOverviewTest, DistGlooAndARewrittenFile) {
  Build("dist_gloo", "gloo");
  Start();
  std::vector<std::string> files = Files("gloo");
  ASSERT_EQ(files.size(), 4u);
  OverviewReply reply;
  ASSERT_TRUE(Overview(files[0], &reply).ok());
  auto cells = Cells(reply);
  EXPECT_EQ(cells["step0/rank0"].first(), "Distributed.all_reduce.0.forward");
  EXPECT_EQ(cells["step0/rank0"].caused_by(), "rank1");
  EXPECT_EQ(cells["step0/rank1"].first(), "Functional.layer_norm.0.forward");
  EXPECT_EQ(reply.origin_step(), "step0");
  ASSERT_EQ(reply.origin_ranks_size(), 1);
  EXPECT_EQ(reply.origin_ranks(0), "rank1");

  // A file that is damaged later: its cell says why, the others stay (the cache sees the change).
  const std::string broken = files[3];
  graph_ascend::testing::WriteFile(logdir_ + "/" + broken, "not a graph-ascend file, and of another size\n");
  OverviewReply again;
  ASSERT_TRUE(Overview(files[0], &again).ok());
  ASSERT_EQ(again.cells_size(), 4);
  for (const OverviewCell& c : again.cells()) {
    if (c.file() == broken) {
      EXPECT_NE(c.error().find(broken), std::string::npos) << c.error();
      EXPECT_EQ(c.first(), "");
    } else {
      EXPECT_EQ(c.error(), "") << c.file();
    }
  }
  auto now = Cells(again);
  EXPECT_EQ(now["step0/rank0"].caused_by(), "rank1");
}

TEST_F(RankOverviewTest, RefusesBuildsAndUnknownFiles) {
  std::filesystem::create_directories(logdir_ + "/b");
  graph_ascend::testing::RunResult r = graph_ascend::testing::RunTool(
      {"graph", "-i", graph_ascend::testing::Sample("cnn_statistics/build.json"), "-o", logdir_ + "/b"});
  ASSERT_EQ(r.status, 0) << r.err;
  Start();
  OverviewReply reply;
  EXPECT_EQ(Overview("nope.vis", &reply).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Overview("../x.vis", &reply).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  std::vector<std::string> files = Files("b");
  ASSERT_EQ(files.size(), 1u);
  grpc::Status st = Overview(files[0], &reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("build"), std::string::npos) << st.error_message();
}

using testing::MsprobeOutput;

// msprobe 26.2.0's batch .vis.db (2 steps x 2 ranks in one file, rank 1
// perturbed): the overview of any of its graphs covers the four, each cell
// read from the graph's conversion (issue 29 point 2: it answered 404
// "...vis.db#step0_rank0: no such file in the log directory").
TEST_F(RankOverviewTest, TheGraphsOfOneMsprobeVisDb) {
  std::filesystem::create_directories(logdir_ + "/msprobe26");
  std::filesystem::copy_file(MsprobeOutput("dist_gloo_batch_26.2.0.vis.db"),
                             logdir_ + "/msprobe26/dist_gloo_batch_26.2.0.vis.db");
  Start();
  std::vector<std::string> listed = Listed();
  ASSERT_EQ(listed.size(), 4u);
  EXPECT_EQ(listed[1], "msprobe26/dist_gloo_batch_26.2.0.vis.db#step0_rank1");
  for (const std::string& asked : {listed[1], listed[3]}) {
    OverviewReply reply;
    grpc::Status st = Overview(asked, &reply);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(reply.group(), "msprobe26/dist_gloo_batch_26.2.0");
    EXPECT_EQ(std::vector<std::string>(reply.steps().begin(), reply.steps().end()),
              (std::vector<std::string>{"step0", "step1"}));
    EXPECT_EQ(std::vector<std::string>(reply.ranks().begin(), reply.ranks().end()),
              (std::vector<std::string>{"rank0", "rank1"}));
    ASSERT_EQ(reply.cells_size(), 4);
    EXPECT_GT(reply.legend_size(), 0) << "the legend of the graphs";
    for (const OverviewCell& c : reply.cells()) {
      EXPECT_EQ(c.error(), "") << c.file();
      EXPECT_TRUE(c.counted()) << c.file();
      EXPECT_EQ(c.file(), listed[c.step() * 2 + c.rank()]);
      ExpectCountsOfItsFile(c);
      if (!c.first().empty()) {  // a ranking from the conversion: its entry 0, where a click lands
        DivergenceReply div;
        grpc::ClientContext ctx;
        FileRequest req;
        req.set_file(c.file());
        ASSERT_TRUE(service_.stub()->GetDivergence(&ctx, req, &div).ok());
        ASSERT_GT(div.items_size(), 0) << c.file();
        EXPECT_EQ(div.items(0).name(), c.first()) << c.file();
        EXPECT_EQ(div.items(0).npu_node(), c.first_node()) << c.file();
      }
    }
  }
  // A graph the file does not hold, and a .vis.db that is not there.
  OverviewReply reply;
  EXPECT_EQ(Overview("msprobe26/dist_gloo_batch_26.2.0.vis.db#step9_rank0", &reply).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Overview("msprobe26/none.vis.db#step0_rank0", &reply).error_code(), grpc::StatusCode::NOT_FOUND);
}

// msprobe 8.x's build .vis.db has no compare to overview: said, not a 404.
TEST_F(RankOverviewTest, AMsprobeBuildVisDbIsRefusedWithItsReason) {
  std::filesystem::copy_file(MsprobeOutput("dist_gloo_build_26.2.0.vis.db"), logdir_ + "/b.vis.db");
  std::filesystem::copy_file(MsprobeOutput("dist_gloo_batch_8.3.3.vis.db"), logdir_ + "/batch833.vis.db");
  Start();
  OverviewReply reply;
  grpc::Status st = Overview("b.vis.db", &reply);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(reply.cells_size(), 1);
  EXPECT_NE(reply.cells(0).error().find("build"), std::string::npos) << reply.cells(0).error();
  // msprobe 8.3.3's batch db: four graphs, read as 26.2.0's.
  st = Overview("batch833.vis.db#step1_rank0", &reply);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(reply.cells_size(), 4);
  for (const OverviewCell& c : reply.cells()) EXPECT_EQ(c.error(), "") << c.file();
}

// A batch built in shards into one folder (graph --shard I/N, then link;
// docs/SCALE.md) is one run: its files share the batch's time stamp.
TEST_F(RankOverviewTest, ABatchBuiltInShards) {
  for (const char* shard : {"0/2", "1/2"}) {
    graph_ascend::testing::RunResult r = graph_ascend::testing::RunTool(
        {"graph", "-i", graph_ascend::testing::Sample("dist_gloo/batch.json"), "-o", logdir_ + "/sharded", "--shard",
         shard});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  graph_ascend::testing::RunResult linked = graph_ascend::testing::RunTool({"link", logdir_ + "/sharded"});
  ASSERT_EQ(linked.status, 0) << linked.err;
  Start();
  std::vector<std::string> files = Files("sharded");
  ASSERT_EQ(files.size(), 4u);
  OverviewReply reply;
  ASSERT_TRUE(Overview(files[2], &reply).ok());
  ASSERT_EQ(reply.cells_size(), 4);
  auto cells = Cells(reply);
  EXPECT_EQ(cells["step0/rank1"].first(), "Functional.layer_norm.0.forward");
  EXPECT_EQ(cells["step0/rank0"].caused_by(), "rank1") << "the links written by link";
  ASSERT_EQ(reply.origin_ranks_size(), 1);
  EXPECT_EQ(reply.origin_ranks(0), "rank1");
  for (const OverviewCell& c : reply.cells()) {
    EXPECT_EQ(c.error(), "") << c.file();
    ExpectCountsOfItsFile(c);
  }
}

// A run of more ranks than one thread reads alone (64) starts reader
// threads; when none can be started (a thread limit) this thread reads them
// all (issue 17, 1c: std::system_error escaped the overview).
TEST_F(RankOverviewTest, ARunOfManyRanksIsReadWhenNoThreadCanBeStarted) {
  Build("dist_gloo", "job");
  std::vector<std::string> built = Files("job");
  ASSERT_FALSE(built.empty());
  // 70 ranks of one step: copies of the built rank 0 under batch names.
  std::filesystem::create_directories(logdir_ + "/many");
  for (int r = 0; r < 70; ++r) {
    std::filesystem::copy_file(logdir_ + "/" + built[0],
                               logdir_ + "/many/compare_step0_rank" + std::to_string(r) + "_20250101000000.vis");
  }
  auto logdir = LogDir::Open(logdir_);
  ASSERT_TRUE(logdir.ok()) << logdir.error().ToString();
  std::vector<RunEntry> runs = logdir->ListRuns();
  OverviewCache cache;
  Result<std::shared_ptr<const OverviewReply>> reply = Error{};
  {
    graph_ascend::testing::NoNewThreads limit;
    ASSERT_TRUE(limit.ok());
    EXPECT_THROW(std::thread([] {}).join(), std::system_error);  // the limit holds
    reply = cache.Get(*logdir, runs, "many/compare_step0_rank5_20250101000000.vis");
  }
  ASSERT_TRUE(reply.ok()) << reply.error().ToString();
  ASSERT_EQ((*reply)->cells_size(), 70);
  for (const OverviewCell& c : (*reply)->cells()) {
    EXPECT_EQ(c.error(), "") << c.file();
    EXPECT_TRUE(c.counted()) << c.file();
  }
}

}  // namespace
}  // namespace graph_ascend::service
