// Thresholds and metric (SetLegend, ResetLegend, the saved choice) and the
// match configs beside a file (ListMatchConfigs, tb_graph_ascend's names), on
// msprobe's own outputs (tests/data/msprobe_outputs): an 8.1.2 statistics
// compare (JSON .vis) and a 26.2.0 batch .vis.db.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config_files.h"
#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

namespace fs = std::filesystem;
using testing::MsprobeOutput;
using testing::TempDir;

constexpr char kFile[] = "run81/compare_dist_gloo.vis";

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The test's own reading of a relative error text: "12.5%" -> 0.125, "Nan" / "inf%" -> 1.
double Relative(const std::string& text, bool* has) {
  *has = false;
  if (text == "Nan" || text.rfind("inf", 0) == 0) return *has = true, 1.0;
  if (text.empty() || text.back() != '%') return 0;
  *has = true;
  return std::stod(text.substr(0, text.size() - 1)) / 100;
}

class ThresholdsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(logs_.Join("run81"));
    fs::create_directories(logs_.Join("run26"));
    fs::copy_file(MsprobeOutput("dist_gloo_compare_8.1.2.vis"), logs_.Join(kFile));
    fs::copy_file(MsprobeOutput("dist_gloo_build_8.1.2.vis"), logs_.Join("run81/build_dist_gloo.vis"));
    fs::copy_file(MsprobeOutput("dist_gloo_batch_26.2.0.vis.db"), logs_.Join("run26/compare_dist_gloo.vis.db"));
    Start();
  }
  void TearDown() override { Stop(); }
  void Start() {
    ServiceOptions options;
    options.logdir = logs_.path();
    options.cache_dir = cache_.Join("c" + std::to_string(++servers_));
    auto impl = GraphServiceImpl::Create(options);
    ASSERT_TRUE(impl.ok()) << impl.error().ToString();
    impl_ = std::move(*impl);
    grpc::ServerBuilder builder;
    std::string address = "unix:" + sock_.Join("s" + std::to_string(servers_) + ".sock");
    builder.AddListeningPort(address, grpc::InsecureServerCredentials());
    builder.RegisterService(impl_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = GraphService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  void Stop() {
    if (server_) server_->Shutdown();
    server_.reset();
  }
  FileInfo Info(const std::string& file = kFile) {
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    FileInfo info;
    grpc::Status st = stub_->GetFileInfo(&ctx, req, &info);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return info;
  }
  grpc::Status SetLegend(const SetLegendRequest& req, FileInfo* info) {
    grpc::ClientContext ctx;
    return stub_->SetLegend(&ctx, req, info);
  }
  // NPU index -> precision of every NPU node with one (a filter over every numeric bucket).
  std::map<int32_t, double> Precisions() {
    FileInfo info = Info();
    FilterRequest req;
    req.mutable_view()->set_session("s");
    req.mutable_view()->set_file(kFile);
    req.mutable_view()->set_micro_step(-1);
    for (int b = 0; b < info.meta().legend_size(); ++b) {
      if (!info.meta().legend(b).unmatched()) req.add_buckets(b);
    }
    req.set_limit(10000);
    grpc::ClientContext ctx;
    NodeList hits;
    grpc::Status st = stub_->Filter(&ctx, req, &hits);
    EXPECT_TRUE(st.ok()) << st.error_message();
    std::map<int32_t, double> out;
    for (const NodeHit& h : hits.hits()) {
      if (h.has_precision()) out[h.index()] = h.precision_index();
    }
    return out;
  }
  NodeDetailReply Detail(int32_t node) {
    grpc::ClientContext ctx;
    NodeRequest req;
    req.mutable_view()->set_session("s");
    req.mutable_view()->set_file(kFile);
    req.mutable_view()->set_micro_step(-1);
    req.set_node(node);
    NodeDetailReply reply;
    EXPECT_TRUE(stub_->GetNodeDetail(&ctx, req, &reply).ok());
    return reply;
  }
  static vis::ColorBucket Bucket(const char* colour, double lo, double hi) {
    vis::ColorBucket b;
    b.set_color(colour);
    b.set_lo(lo);
    b.set_hi(hi);
    b.set_name(std::to_string(lo) + "-" + std::to_string(hi));
    return b;
  }

  TempDir logs_, cache_, sock_;
  int servers_ = 0;
  std::unique_ptr<GraphServiceImpl> impl_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GraphService::Stub> stub_;
};

TEST_F(ThresholdsTest, AMetricRecomputesTheIndexAsTbGraphAscendAndResets) {
  std::map<int32_t, double> own = Precisions();
  ASSERT_FALSE(own.empty());
  SetLegendRequest req;
  req.set_file(kFile);
  req.add_metrics("MinRelativeErr");
  FileInfo info;
  grpc::Status st = SetLegend(req, &info);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(info.metrics_size(), 1);
  EXPECT_EQ(info.metrics(0), "MinRelativeErr");
  EXPECT_EQ(info.meta().legend_size(), Info().meta().legend_size());  // an empty legend keeps the current one
  std::map<int32_t, double> min = Precisions();
  size_t changed = 0, checked = 0;
  for (const auto& [node, p] : min) {
    NodeDetailReply d = Detail(node);
    if (d.node().node_type() == vis::NODE_API_COLLECTION) continue;
    double worst = 0;
    for (const vis::Item& it : d.detail().output()) {
      for (const vis::Metric& m : it.metric()) {
        bool has = false;
        double v = Relative(m.text(), &has);
        if (m.name() == "MinRelativeErr" && has) worst = std::max(worst, v);
      }
    }
    EXPECT_NEAR(p, std::min(worst, 1.0), 1e-12) << d.node().name();
    ++checked;
    if (own.count(node) && std::fabs(own[node] - p) > 1e-12) ++changed;
  }
  EXPECT_GT(checked, 10u);
  EXPECT_GT(changed, 0u);  // the sample's Min errors differ from its worst error somewhere

  req.clear_metrics();
  ASSERT_TRUE(SetLegend(req, &info).ok());
  EXPECT_EQ(info.metrics_size(), 0);
  EXPECT_EQ(Precisions(), own);
}

TEST_F(ThresholdsTest, AThresholdChangeRecoloursAndRefilters) {
  std::map<int32_t, double> own = Precisions();
  int32_t node = -1;
  double p = 0;
  for (const auto& [n, v] : own) {
    if (v > 0.01 && v < 1) node = n, p = v;
  }
  ASSERT_GE(node, 0);
  SetLegendRequest req;
  req.set_file(kFile);
  *req.add_legend() = Bucket("#00FF00", 0, p + (1 - p) / 2);
  *req.add_legend() = Bucket("#FF0000", p + (1 - p) / 2, 1);
  FileInfo info;
  ASSERT_TRUE(SetLegend(req, &info).ok());
  EXPECT_EQ(Detail(node).node().bucket(), 0);
  req.mutable_legend(0)->set_hi(p / 2);
  req.mutable_legend(1)->set_lo(p / 2);
  ASSERT_TRUE(SetLegend(req, &info).ok());
  EXPECT_EQ(Detail(node).node().bucket(), 1);
  FilterRequest f;
  f.mutable_view()->set_session("s");
  f.mutable_view()->set_file(kFile);
  f.mutable_view()->set_micro_step(-1);
  f.add_buckets(1);
  f.set_limit(10000);
  grpc::ClientContext ctx;
  NodeList hits;
  ASSERT_TRUE(stub_->Filter(&ctx, f, &hits).ok());
  bool listed = false;
  for (const NodeHit& h : hits.hits()) listed |= h.index() == node;
  EXPECT_TRUE(listed);
  EXPECT_EQ(info.npu().buckets(0).count() + info.npu().buckets(1).count(), own.size());
}

TEST_F(ThresholdsTest, TheSavedChoiceIsTbGraphAscendsColorsAndComesBackUntilReset) {
  FileInfo before = Info();
  EXPECT_FALSE(before.legend_saved());
  EXPECT_EQ(before.legend_file(), "run81/compare_dist_gloo.vis.legend.json");
  SetLegendRequest req;
  req.set_file(kFile);
  *req.add_legend() = Bucket("#00FF00", 0, 0.3);
  *req.add_legend() = Bucket("#FF0000", 0.3, 1);
  vis::ColorBucket* grey = req.add_legend();
  grey->set_color("#C7C7C7");
  grey->set_unmatched(true);
  grey->set_description("比对过程中节点未匹配上");
  req.add_metrics("MaxRelativeErr");
  req.add_metrics("NormRelativeErr");
  req.set_save(true);
  FileInfo info;
  grpc::Status st = SetLegend(req, &info);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_TRUE(info.legend_saved());
  std::map<int32_t, double> chosen = Precisions();

  auto doc = nlohmann::json::parse(Read(logs_.Join("run81/compare_dist_gloo.vis.legend.json")));
  EXPECT_EQ(doc["Colors"]["#00FF00"]["value"], nlohmann::json::array({0.0, 0.3}));
  EXPECT_EQ(doc["Colors"]["#FF0000"]["value"], nlohmann::json::array({0.3, 1.0}));
  EXPECT_EQ(doc["Colors"]["#C7C7C7"]["value"], "无匹配节点");
  EXPECT_EQ(doc["Colors"]["#C7C7C7"]["description"], "比对过程中节点未匹配上");
  EXPECT_EQ(doc["metrics"], nlohmann::json::array({"MaxRelativeErr", "NormRelativeErr"}));

  // A new server (a TensorBoard restart) shows the saved choice.
  Stop();
  Start();
  FileInfo again = Info();
  EXPECT_EQ(again.legend_error(), "");
  ASSERT_EQ(again.meta().legend_size(), 3);
  EXPECT_EQ(again.meta().legend(1).color(), "#FF0000");
  EXPECT_DOUBLE_EQ(again.meta().legend(1).lo(), 0.3);
  EXPECT_TRUE(again.meta().legend(2).unmatched());
  ASSERT_EQ(again.metrics_size(), 2);
  EXPECT_EQ(Precisions(), chosen);

  grpc::ClientContext ctx;
  FileRequest reset;
  reset.set_file(kFile);
  FileInfo after;
  ASSERT_TRUE(stub_->ResetLegend(&ctx, reset, &after).ok());
  EXPECT_FALSE(after.legend_saved());
  EXPECT_FALSE(fs::exists(logs_.Join("run81/compare_dist_gloo.vis.legend.json")));
  EXPECT_EQ(after.metrics_size(), 0);
  ASSERT_EQ(after.meta().legend_size(), before.meta().legend_size());
  for (int i = 0; i < after.meta().legend_size(); ++i) {
    EXPECT_EQ(after.meta().legend(i).color(), before.meta().legend(i).color());
  }
}

TEST_F(ThresholdsTest, ABadSavedChoiceIsReportedAndTheFileStillOpens) {
  std::ofstream(logs_.Join("run81/compare_dist_gloo.vis.legend.json")) << "{\"Colors\": {\"#00FF00\": [";
  FileInfo info = Info();
  EXPECT_NE(info.legend_error().find("run81/compare_dist_gloo.vis.legend.json"), std::string::npos)
      << info.legend_error();
  EXPECT_NE(info.legend_error().find("byte"), std::string::npos) << info.legend_error();
  EXPECT_GT(info.meta().legend_size(), 0);
}

TEST_F(ThresholdsTest, BadChoicesGetFittingCodes) {
  SetLegendRequest req;
  req.set_file(kFile);
  req.add_metrics("MaxAbsErr");
  FileInfo info;
  grpc::Status st = SetLegend(req, &info);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("metrics[0]"), std::string::npos) << st.error_message();

  req.clear_metrics();
  *req.add_legend() = Bucket("#00FF00", 0, 0.5);
  *req.add_legend() = Bucket("#00ff00", 0.5, 1);
  req.set_save(true);
  st = SetLegend(req, &info);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("legend[1]"), std::string::npos) << st.error_message();
  EXPECT_FALSE(fs::exists(logs_.Join("run81/compare_dist_gloo.vis.legend.json")));

  SetLegendRequest build;
  build.set_file("run81/build_dist_gloo.vis");
  build.add_metrics("MaxRelativeErr");
  EXPECT_EQ(SetLegend(build, &info).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(ThresholdsTest, MatchConfigsBesideAFileAreListedUnderTbGraphAscendsNames) {
  EXPECT_EQ(BesideNamesOf("a/compare.vis", "", "").match_config, "a/compare.vis.config");
  EXPECT_EQ(BesideNamesOf("run26/x.vis.db#step1_rank0", "", "").match_config, "run26/x_1_0.vis.config");
  EXPECT_EQ(BesideNamesOf("x.vis.db", "step2", "rank3").legend, "x_2_3.vis.legend.json");

  std::ofstream(logs_.Join("run81/other.vis.config")) << "{}";
  std::ofstream(logs_.Join("run81/notes.txt")) << "x";
  std::ofstream(cache_.Join("outside.vis.config")) << "{}";
  fs::create_symlink(cache_.Join("outside.vis.config"), logs_.Join("run81/link.vis.config"));
  grpc::ClientContext sctx;
  FileRequest req;
  req.set_file(kFile);
  SaveMatchesReply saved;
  ASSERT_TRUE(stub_->SaveMatches(&sctx, req, &saved).ok());
  EXPECT_EQ(saved.path(), "run81/compare_dist_gloo.vis.config");
  EXPECT_EQ(Read(logs_.Join(saved.path())), "{}");  // json.dump({}, indent=4)

  grpc::ClientContext ctx;
  MatchConfigList list;
  ASSERT_TRUE(stub_->ListMatchConfigs(&ctx, req, &list).ok());
  EXPECT_EQ(list.own(), "run81/compare_dist_gloo.vis.config");
  std::vector<std::string> paths;
  for (const MatchConfigFile& c : list.configs()) paths.push_back(c.path());
  EXPECT_EQ(paths, (std::vector<std::string>{"run81/compare_dist_gloo.vis.config", "run81/other.vis.config"}));

  // A graph of a .vis.db: its config beside the db, as tb_graph_ascend names it.
  grpc::ClientContext dctx;
  FileRequest db;
  db.set_file("run26/compare_dist_gloo.vis.db#step1_rank0");
  MatchConfigList dlist;
  ASSERT_TRUE(stub_->ListMatchConfigs(&dctx, db, &dlist).ok());
  EXPECT_EQ(dlist.own(), "run26/compare_dist_gloo_1_0.vis.config");
  EXPECT_EQ(dlist.configs_size(), 0);
  EXPECT_EQ(Info(db.file()).match_config(), "run26/compare_dist_gloo_1_0.vis.config");
}

}  // namespace
}  // namespace graph_ascend::service
