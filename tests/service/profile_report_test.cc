// GetProfile and GetReport (issue 32): the layer profile and the HTML report
// of a compare built from the samples, answered by the service through the
// builder's libraries: the same numbers and the same HTML as the command line's.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../builder/cli_runner.h"
#include "graph_service.h"
#include "profile/layer_profile.h"
#include "report/html_report.h"
#include "service_fixture.h"
#include "verdict/verdict.h"

namespace graph_ascend::service {
namespace {

namespace t = graph_ascend::testing;

class ProfileServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logdir_ = dir_ / "logdir";
    std::filesystem::create_directories(logdir_);
  }

  // Runs graph on `config` into logdir/<out>; returns the file, relative to the log directory.
  std::string Build(const std::string& config, const std::string& out) {
    t::RunResult r = t::RunTool({"graph", "-i", t::Sample(config), "-o", logdir_ + "/" + out});
    EXPECT_EQ(r.status, 0) << r.err;
    for (const auto& e : std::filesystem::directory_iterator(logdir_ + "/" + out))
      if (e.path().extension() == ".vis") return out + "/" + e.path().filename().string();
    return "";
  }

  void Start() {
    ServiceOptions options;
    options.logdir = logdir_;
    service_.Start(options, dir_ / "s.sock");
  }

  grpc::Status Profile(const std::string& file, uint32_t depth, ProfileReply* reply) {
    grpc::ClientContext ctx;
    ProfileRequest req;
    req.set_file(file);
    req.set_depth(depth);
    return service_.stub()->GetProfile(&ctx, req, reply);
  }

  grpc::Status Report(const std::string& file, ReportReply* reply) {
    grpc::ClientContext ctx;
    ProfileRequest req;
    req.set_file(file);
    return service_.stub()->GetReport(&ctx, req, reply);
  }

  t::TempDir dir_;
  std::string logdir_;
  testing::InProcessService service_;  // after dir_: shut down before its socket goes
};

TEST_F(ProfileServiceTest, TheProfileIsTheLibrarysOnTheSameFile) {
  std::string file = Build("gpt_statistics/compare.json", "gpt");
  Start();
  ProfileReply reply;
  ASSERT_TRUE(Profile(file, 0, &reply).ok());
  ASSERT_TRUE(reply.available()) << reply.message();
  EXPECT_EQ(reply.grouping(), "model.layers.N");
  EXPECT_EQ(std::vector<std::string>(reply.series().begin(), reply.series().end()),
            (std::vector<std::string>{"forward", "backward", "parameter gradients"}));
  ASSERT_EQ(reply.colour_size(), 3);

  auto reader = t::Ok(vis::VisReader::Open(logdir_ + "/" + file));
  auto npu = t::Ok(vis::LoadSideIndex(*reader, vis::SIDE_NPU));
  auto bench = t::Ok(vis::LoadSideIndex(*reader, vis::SIDE_BENCH));
  auto v = t::Ok(verdict::ReadVerdict(*reader, npu, file));
  profile::Profile p = t::Ok(profile::ReadProfile(*reader, npu, bench, v, 0));
  ASSERT_EQ(reply.points_size(), static_cast<int>(p.points.size()));
  for (size_t i = 0; i < p.points.size(); ++i) {
    const ProfilePoint& got = reply.points(static_cast<int>(i));
    EXPECT_EQ(got.label(), p.points[i].label);
    EXPECT_EQ(got.node(), p.points[i].node);
    EXPECT_EQ(got.ranked(), p.points[i].ranked);
    EXPECT_EQ(got.first(), p.points[i].first);
    ASSERT_EQ(got.value_size(), profile::kSeriesCount);
    for (int k = 0; k < profile::kSeriesCount; ++k) {
      EXPECT_EQ(got.value(k).has(), p.points[i].value[k].has);
      EXPECT_EQ(got.value(k).error(), p.points[i].value[k].error) << i << " " << k;
      EXPECT_EQ(got.value(k).floor(), p.points[i].value[k].floor) << i << " " << k;
    }
  }
  EXPECT_TRUE(reply.points(1).first()) << "Functional.linear.11.forward in layer 1";
  EXPECT_EQ(npu.Name(reply.points(1).node()), "Module.model.layers.1.LlamaDecoderLayer.forward.0");
  // The chart: one clickable column per layer, opening its forward module.
  EXPECT_EQ(reply.svg().rfind("<svg class=\"ga-profile-chart\"", 0), 0u);
  EXPECT_NE(reply.svg().find("data-point=\"1\" data-node=\"" + std::to_string(reply.points(1).node()) + "\""),
            std::string::npos);

  // A depth with no module: an answer saying so, not an error.
  ASSERT_TRUE(Profile(file, 9, &reply).ok());
  EXPECT_FALSE(reply.available());
  EXPECT_NE(reply.message().find("no forward module lies at that depth"), std::string::npos) << reply.message();
  ASSERT_TRUE(Profile(file, 2, &reply).ok());
  EXPECT_TRUE(reply.available());
  EXPECT_EQ(reply.grouping(), "depth 2");
}

TEST_F(ProfileServiceTest, TheReportIsTheCommandLinesHtml) {
  std::string file = Build("gpt_statistics/compare.json", "gpt");
  Start();
  ReportReply reply;
  ASSERT_TRUE(Report(file, &reply).ok());
  auto reader = t::Ok(vis::VisReader::Open(logdir_ + "/" + file));
  std::string expected = t::Ok(report::RenderReport(*reader, file, 0));
  EXPECT_EQ(reply.html(), expected);
  EXPECT_NE(reply.html().find("First divergence: <span class=\"name\">Functional.linear.11.forward</span>"),
            std::string::npos);
  EXPECT_EQ(reply.html().find("http"), std::string::npos);
  EXPECT_EQ(reply.html().find("src="), std::string::npos);
  std::string stem = std::filesystem::path(file).stem().string();
  EXPECT_EQ(reply.file_name(), stem + ".report.html");
}

TEST_F(ProfileServiceTest, ABuildAndPathsOutsideTheLogDirectoryAreRefused) {
  std::string build = Build("gpt_statistics/build.json", "build");
  Start();
  ProfileReply profile;
  grpc::Status st = Profile(build, 0, &profile);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("a build of one run"), std::string::npos) << st.error_message();
  ReportReply report;
  EXPECT_EQ(Report(build, &report).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_FALSE(Report("../outside.vis", &report).ok());
  EXPECT_FALSE(Profile("missing.vis", 0, &profile).ok());
  EXPECT_EQ(Profile(build, 5000, &profile).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace graph_ascend::service
