// GetCkpt (checkpoint similarity on the page's side) on files bin/graph-ascend
// builds from the samples' Megatron-style dump (samples/layer_mapping/npu),
// with the similarity stored in the file (graph --ckpt), a ckpt_similarity.json
// of msprobe 26.2.0 beside a file, or a JSON named in the request.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../builder/cli_runner.h"
#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

namespace t = graph_ascend::testing;

class CkptServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logdir_ = dir_ / "logdir";
    std::filesystem::create_directories(logdir_);
  }

  // Builds samples/layer_mapping's npu dump into logdir/<out> with `flags`; returns the file, relative.
  std::string Build(const std::string& out, const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"graph", "-i", t::Sample("layer_mapping/build.json"), "-o", logdir_ + "/" + out};
    args.insert(args.end(), flags.begin(), flags.end());
    t::RunResult r = t::RunTool(args);
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

  grpc::Status Get(const CkptRequest& req, CkptReply* reply) {
    grpc::ClientContext ctx;
    return service_.stub()->GetCkpt(&ctx, req, reply);
  }

  t::TempDir dir_;
  std::string logdir_;
  testing::InProcessService service_;  // after dir_: shut down before its socket goes
};

TEST_F(CkptServiceTest, TheFilesOwnAndTolerances) {
  std::string file = Build("own", {"--ckpt", t::Sample("ckpt/tp2pp2_a"), t::Sample("ckpt/tp2pp2_b")});
  Start();
  CkptRequest req;
  req.set_file(file);
  CkptReply reply;
  ASSERT_TRUE(Get(req, &reply).ok());
  EXPECT_TRUE(reply.available());
  EXPECT_EQ(reply.source(), "file");
  EXPECT_EQ(reply.similarity().module_size(), 15);
  EXPECT_EQ(reply.differing_size(), 15) << "every module changed by the two SGD steps";
  EXPECT_EQ(reply.unmapped(), 12u);
  // Worst first: the first has the lowest cos.
  const auto& mods = reply.similarity().module();
  for (int i = 1; i < reply.differing_size(); ++i) {
    EXPECT_LE(mods[reply.differing(i - 1)].worst_cos(), mods[reply.differing(i)].worst_cos());
  }
  ASSERT_EQ(reply.differs_size(), 15);
  // Loose tolerances: only the modules beyond them.
  req.set_cos_tolerance(0.01);
  req.set_l2_tolerance(0.05);
  ASSERT_TRUE(Get(req, &reply).ok());
  int expected = 0;
  for (int i = 0; i < reply.similarity().module_size(); ++i) {
    const vis::CkptModule& m = reply.similarity().module(i);
    bool differs = m.worst_cos() < 0.99 || m.max_l2() > 0.05;
    EXPECT_EQ(reply.differs(i), differs) << m.path();
    expected += differs;
  }
  EXPECT_GT(expected, 0);
  EXPECT_LT(expected, 15);
  EXPECT_EQ(reply.differing_size(), expected);
  req.set_cos_tolerance(-1);
  EXPECT_EQ(Get(req, &reply).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(CkptServiceTest, MsprobesJsonBesideTheFileOrNamed) {
  std::string file = Build("beside", {});
  std::filesystem::copy_file(t::Sample("ckpt/msprobe/tp2pp2.json"), logdir_ + "/beside/ckpt_similarity.json");
  std::filesystem::create_directories(logdir_ + "/other");
  std::filesystem::copy_file(t::Sample("ckpt/msprobe/tp2pp2_vs_tp1pp1.json"), logdir_ + "/other/x.json");
  std::ofstream(logdir_ + "/other/bad.json") << "{\"a.weight\": {\"l2\": 1}}";
  Start();
  CkptRequest req;
  req.set_file(file);
  CkptReply reply;
  ASSERT_TRUE(Get(req, &reply).ok());
  EXPECT_EQ(reply.source(), "beside");
  EXPECT_EQ(reply.source_path(), "beside/ckpt_similarity.json");
  EXPECT_EQ(reply.similarity().module_size(), 15);
  EXPECT_EQ(reply.differing_size(), 15);

  req.set_json("other/x.json");
  ASSERT_TRUE(Get(req, &reply).ok());
  EXPECT_EQ(reply.source(), "json");
  EXPECT_EQ(reply.similarity().module_size(), 15);
  EXPECT_EQ(reply.differing_size(), 0) << "tp2pp2_b against tp1pp1_b: the same weights, split or not";
  EXPECT_EQ(reply.source_path(), "other/x.json");

  req.set_json("other/bad.json");
  grpc::Status st = Get(req, &reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("other/bad.json"), std::string::npos) << st.error_message();
  EXPECT_NE(st.error_message().find("has no cos"), std::string::npos) << st.error_message();
  req.set_json("../outside.json");
  EXPECT_EQ(Get(req, &reply).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  req.set_json("other/missing.json");
  EXPECT_EQ(Get(req, &reply).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(CkptServiceTest, NoneAvailable) {
  std::string file = Build("plain", {});
  Start();
  CkptRequest req;
  req.set_file(file);
  CkptReply reply;
  ASSERT_TRUE(Get(req, &reply).ok());
  EXPECT_FALSE(reply.available());
  EXPECT_EQ(reply.similarity().module_size(), 0);
}

}  // namespace
}  // namespace graph_ascend::service
