// The divergence ranking of msprobe's own files in the service (issue 29
// point 1): every graph of a .vis.db of msprobe 26.2.0 (opened from its index,
// ranked with the whole file written behind it) and a JSON .vis of msprobe
// 8.1.2 answer GetDivergence with the ranking `graph-ascend import` gives the
// same file (one implementation, vis::AddRanking); a compare that cannot be
// ranked answers why, in full.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <shared_mutex>
#include <string>
#include <vector>

#include "formats/foreign_file.h"
#include "graph_service.h"
#include "open_graph.h"
#include "rerank.h"
#include "service_fixture.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::service {
namespace {

namespace fs = std::filesystem;
using testing::ExecSql;
using testing::InProcessService;
using testing::MsprobeOutput;
using testing::TempDir;

// The entries' names of each graph of `source` as the import writes them, in ReadGraphs' order.
std::vector<std::vector<std::string>> ImportedRankings(const std::string& source) {
  TempDir dir;
  size_t n = 0;
  auto written =
      formats::ConvertGraphs(source, [&](const vis::FileMeta&) { return dir.Join(std::to_string(n++) + ".vis"); });
  EXPECT_TRUE(written.ok()) << written.error().ToString();
  std::vector<std::vector<std::string>> out;
  if (!written.ok()) return out;
  for (const std::string& f : *written) {
    auto reader = vis::VisReader::Open(f);
    EXPECT_TRUE(reader.ok());
    if (!reader.ok()) return out;
    auto npu = vis::LoadSideIndex(**reader, vis::SIDE_NPU);
    auto ranking = (*reader)->ReadDivergence();
    EXPECT_TRUE(npu.ok() && ranking.ok());
    std::vector<std::string> names;
    for (const vis::DivergenceEntry& e : ranking->entry()) names.emplace_back(npu->Name(e.node()));
    out.push_back(std::move(names));
  }
  return out;
}

class ForeignRankingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(logs_.Join("run26"));
    fs::create_directories(logs_.Join("run81"));
    fs::create_directories(logs_.Join("unmatched"));
    fs::copy_file(MsprobeOutput("dist_gloo_batch_26.2.0.vis.db"), logs_.Join("run26/compare_dist_gloo.vis.db"));
    fs::copy_file(MsprobeOutput("dist_gloo_compare_8.1.2.vis"), logs_.Join("run81/compare_dist_gloo.vis"));
    // msprobe's compare with every match link taken out (a copy).
    std::string db = logs_.Join("unmatched/compare_unmatched.vis.db");
    fs::copy_file(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"), db);
    ASSERT_NO_FATAL_FAILURE(ExecSql(db, "UPDATE tb_nodes SET matched_node_link = '[]'"));
    ServiceOptions options;
    options.logdir = logs_.path();
    options.cache_dir = cache_.Join("c");
    service_.Start(options, sock_.Join("s.sock"));
  }
  DivergenceReply Divergence(const std::string& file) {
    {
      grpc::ClientContext ctx;
      FileRequest req;
      req.set_file(file);
      auto reader = service_.stub()->OpenFile(&ctx, req);
      OpenProgress p;
      while (reader->Read(&p)) {
      }
      grpc::Status st = reader->Finish();
      EXPECT_TRUE(st.ok()) << st.error_message();
    }
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    DivergenceReply reply;
    grpc::Status st = service_.stub()->GetDivergence(&ctx, req, &reply);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return reply;
  }

  TempDir logs_, cache_, sock_;
  InProcessService service_;  // declared last: shut down before the folders
};

std::vector<std::string> Names(const DivergenceReply& r) {
  std::vector<std::string> out;
  for (const DivergenceItem& i : r.items()) out.push_back(i.name());
  return out;
}

TEST_F(ForeignRankingTest, EveryGraphOfADbIsRankedAsImportRanksIt) {
  std::vector<std::vector<std::string>> want = ImportedRankings(MsprobeOutput("dist_gloo_batch_26.2.0.vis.db"));
  const std::vector<std::string> ids = {"step0_rank0", "step0_rank1", "step1_rank0", "step1_rank1"};
  ASSERT_EQ(want.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    SCOPED_TRACE(ids[i]);
    DivergenceReply r = Divergence("run26/compare_dist_gloo.vis.db#" + ids[i]);
    EXPECT_TRUE(r.ranked());
    EXPECT_EQ(r.unranked_reason(), "");
    EXPECT_EQ(r.rule(), vis::DIVERGENCE_RULE_NOISE);
    ASSERT_FALSE(r.items().empty());
    EXPECT_EQ(Names(r), want[i]);
    EXPECT_GE(r.items(0).bench_node(), 0);
  }
}

TEST_F(ForeignRankingTest, AJsonVisOfMsprobe81IsRankedAsImportRanksIt) {
  std::vector<std::vector<std::string>> want = ImportedRankings(MsprobeOutput("dist_gloo_compare_8.1.2.vis"));
  ASSERT_EQ(want.size(), 1u);
  DivergenceReply r = Divergence("run81/compare_dist_gloo.vis");
  EXPECT_TRUE(r.ranked());
  ASSERT_FALSE(r.items().empty());
  EXPECT_EQ(Names(r), want[0]);
}

TEST_F(ForeignRankingTest, ACompareThatCannotBeRankedSaysWhy) {
  DivergenceReply r = Divergence("unmatched/compare_unmatched.vis.db");
  EXPECT_FALSE(r.ranked());
  EXPECT_EQ(r.items_size(), 0);
  EXPECT_EQ(r.unranked_reason(),
            "No divergence ranking: no node of the two runs is matched, so no pair's metrics say where they part");
}

// The service's re-ranking (rerank.h) over an imported file's own matches is the ranking the import
// stored: the two are one computation (divergence::RankFromDetails).
TEST(ImportedFileRerankTest, RankingAnewGivesTheStoredRanking) {
  size_t files = 0;
  for (const char* name : {"dist_gloo_batch_26.2.0.vis.db", "dist_gloo_compare_8.3.3.vis.db",
                           "dist_gloo_compare_8.1.2.vis", "p2p_micro_batch_26.2.0.vis.db"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    size_t n = 0;
    auto written = formats::ConvertGraphs(MsprobeOutput(name),
                                          [&](const vis::FileMeta&) { return dir.Join(std::to_string(n++) + ".vis"); });
    ASSERT_TRUE(written.ok()) << written.error().ToString();
    for (const std::string& path : *written) {
      auto f = OpenGraph::Open(path, path, {});
      ASSERT_TRUE(f.ok()) << f.error().ToString();
      ASSERT_TRUE((*f)->meta().divergence_ranked());
      std::shared_lock<std::shared_mutex> l((*f)->mutex());
      auto anew = (*f)->reranking().RankAnew(**f);
      ASSERT_TRUE(anew.ok()) << anew.error().ToString();
      EXPECT_EQ(anew->SerializeAsString(), (*f)->divergence()->SerializeAsString()) << path;
      ++files;
    }
  }
  EXPECT_EQ(files, 8u);  // 4 + 1 + 1 graphs, and p2p_micro's 2
}

}  // namespace
}  // namespace graph_ascend::service
