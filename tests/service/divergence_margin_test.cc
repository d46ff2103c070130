// GetDivergence carries the noise rule's margins and verdict (docs/DIVERGENCE.md,
// docs/API.md) for compares that bin/graph-ascend builds from real msprobe dumps:
// samples/gpt_statistics (a first divergence) and a noise-only case of the scored
// corpus (bench/divergence/corpus.tar.xz: "no divergence beyond noise"); a file of
// before the noise rule says nothing of margins.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../builder/cli_runner.h"
#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

// The corpus case whose npu run has only `order` noise (fp32, another summation order).
constexpr char kNoiseOnlyCase[] = "gpt-order-none";

// Runs `argv` (found on PATH) and returns its exit status.
int Spawn(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid;
  if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class DivergenceMarginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logdir_ = dir_ / "logdir";
    std::filesystem::create_directories(logdir_);
  }

  // Builds `compare_json` into logdir/out and returns the .vis's path relative to the logdir.
  std::string Build(const std::string& compare_json, const std::string& out) {
    graph_ascend::testing::RunResult r =
        graph_ascend::testing::RunTool({"graph", "-i", compare_json, "-o", logdir_ + "/" + out});
    EXPECT_EQ(r.status, 0) << r.err;
    for (const auto& e : std::filesystem::directory_iterator(logdir_ + "/" + out)) {
      if (e.path().extension() == ".vis") return out + "/" + e.path().filename().string();
    }
    ADD_FAILURE() << "no .vis in " << out;
    return "";
  }

  // Extracts the noise-only case from the corpus and writes its compare.json.
  std::string NoiseOnlyCompare() {
    std::string corpus = graph_ascend::testing::SourceDir() + "/bench/divergence/corpus.tar.xz";
    std::string dest = dir_ / "corpus";
    std::filesystem::create_directories(dest);
    EXPECT_EQ(Spawn({"tar", "-xJf", corpus, "-C", dest}), 0) << "tar -xJf " << corpus;
    auto manifest = nlohmann::json::parse(graph_ascend::testing::ReadFile(dest + "/corpus/manifest.json"));
    const auto& c = manifest.at(kNoiseOnlyCase);
    EXPECT_TRUE(c.at("culprit").is_null()) << kNoiseOnlyCase << " is a noise-only case";
    std::string json = dest + "/compare.json";
    graph_ascend::testing::WriteFile(
        json, nlohmann::json{{"npu_path", dest + "/corpus/" + c.at("npu").get<std::string>()},
                             {"bench_path", dest + "/corpus/" + c.at("bench").get<std::string>()}}
                  .dump());
    return json;
  }

  void Start() {
    ServiceOptions options;
    options.logdir = logdir_;
    service_.Start(options, dir_ / "s.sock");
  }

  DivergenceReply Divergence(const std::string& file) {
    DivergenceReply reply;
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    grpc::Status st = service_.stub()->GetDivergence(&ctx, req, &reply);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return reply;
  }

  graph_ascend::testing::TempDir dir_;
  std::string logdir_;
  testing::InProcessService service_;
};

TEST_F(DivergenceMarginTest, FirstDivergenceCarriesItsMargin) {
  std::string file = Build(graph_ascend::testing::Sample("gpt_statistics/compare.json"), "gpt");
  Start();
  DivergenceReply reply = Divergence(file);
  EXPECT_TRUE(reply.ranked());
  EXPECT_EQ(reply.rule(), vis::DIVERGENCE_RULE_NOISE) << "statistics mode ranks by the noise rule";
  EXPECT_DOUBLE_EQ(reply.threshold(), 5);
  EXPECT_FALSE(reply.none_beyond_noise());
  ASSERT_GT(reply.items_size(), 0);
  const DivergenceItem& first = reply.items(0);
  EXPECT_EQ(first.name(), "Functional.linear.11.forward");
  EXPECT_TRUE(first.has_margin());
  EXPECT_GT(first.margin(), reply.threshold()) << "the first divergence is beyond the noise";
  for (const DivergenceItem& item : reply.items()) {
    EXPECT_EQ(item.has_margin(), item.reason() != vis::DIVERGENCE_UNMATCHED) << item.name();
  }
  // The largest margin is one of the ranked candidates'.
  EXPECT_TRUE(reply.has_largest());
  EXPECT_GE(reply.largest_margin(), first.margin());
  EXPECT_GE(reply.largest_margin_node(), 0);
  EXPECT_FALSE(reply.largest_margin_name().empty());
}

TEST_F(DivergenceMarginTest, NoiseOnlyRunSaysNoDivergenceBeyondNoise) {
  std::string file = Build(NoiseOnlyCompare(), "noise");
  Start();
  DivergenceReply reply = Divergence(file);
  EXPECT_TRUE(reply.ranked());
  EXPECT_EQ(reply.rule(), vis::DIVERGENCE_RULE_NOISE);
  EXPECT_EQ(reply.items_size(), 0);
  EXPECT_TRUE(reply.none_beyond_noise());
  ASSERT_TRUE(reply.has_largest()) << "the run's ops were measured";
  EXPECT_GT(reply.largest_margin(), 0);
  EXPECT_LE(reply.largest_margin(), reply.threshold()) << "nothing passed the margin";
  EXPECT_GE(reply.largest_margin_node(), 0);
  EXPECT_FALSE(reply.largest_margin_name().empty());

  // The name is the node's: GetNodeDetail of that index names the same node.
  NodeRequest req;
  req.mutable_view()->set_session("margin");
  req.mutable_view()->set_file(file);
  req.mutable_view()->set_side(vis::SIDE_NPU);
  req.mutable_view()->set_micro_step(-1);
  req.set_node(reply.largest_margin_node());
  NodeDetailReply detail;
  grpc::ClientContext ctx;
  grpc::Status st = service_.stub()->GetNodeDetail(&ctx, req, &detail);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(detail.node().name(), reply.largest_margin_name());
}

TEST_F(DivergenceMarginTest, FileOfBeforeTheNoiseRuleHasNoMargins) {
  // The fixture writes a ranking as files of the floor rule did: no rule, no margins.
  testing::FixtureGraph graph = testing::ResnetLike();
  testing::FixtureOptions fixture;
  fixture.divergent = {"Module.layer2.Sequential.forward.0"};
  std::filesystem::create_directories(logdir_ + "/old");
  testing::WriteCompare(logdir_ + "/old/compare.vis", graph, fixture);
  Start();
  DivergenceReply reply = Divergence("old/compare.vis");
  EXPECT_TRUE(reply.ranked());
  EXPECT_EQ(reply.rule(), vis::DIVERGENCE_RULE_FLOOR);
  EXPECT_FALSE(reply.none_beyond_noise());
  EXPECT_FALSE(reply.has_largest());
  EXPECT_EQ(reply.largest_margin_node(), -1);
  EXPECT_DOUBLE_EQ(reply.threshold(), 0);
  ASSERT_EQ(reply.items_size(), 1);
  EXPECT_FALSE(reply.items(0).has_margin());
}

}  // namespace
}  // namespace graph_ascend::service
