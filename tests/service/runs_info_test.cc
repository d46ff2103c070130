// FileInfo.runs (issue 33 point 4): a file of OUT/run<i>/ of a runs output
// (bin/graph-ascend graph -i samples/repeat_runs/runs.json) tells the page
// which run it shows against which reference, the other runs' files of the
// same step and rank, and where the runs first disagree.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../builder/cli_runner.h"
#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

namespace t = graph_ascend::testing;

class RunsInfoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logdir_ = dir_ / "logdir";
    std::filesystem::create_directories(logdir_);
  }

  // The repeat_runs sample built into logdir/<out>; returns run<run>'s file, relative.
  std::string Build(const std::string& out, int run) {
    t::RunResult r = t::RunTool({"graph", "-i", t::Sample("repeat_runs/runs.json"), "-o", logdir_ + "/" + out});
    EXPECT_EQ(r.status, 0) << r.err;
    std::string folder = out + "/run" + std::to_string(run);
    for (const auto& e : std::filesystem::directory_iterator(logdir_ + "/" + folder))
      if (e.path().extension() == ".vis") return folder + "/" + e.path().filename().string();
    return "";
  }

  void Start() {
    ServiceOptions options;
    options.logdir = logdir_;
    service_.Start(options, dir_ / "s.sock");
  }

  FileInfo Info(const std::string& file) {
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    FileInfo info;
    grpc::Status st = service_.stub()->GetFileInfo(&ctx, req, &info);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return info;
  }

  t::TempDir dir_;
  std::string logdir_;
  testing::InProcessService service_;  // after dir_: shut down before its socket goes
};

TEST_F(RunsInfoTest, RunFileKnowsItsRunsAndWhereTheyFirstDisagree) {
  std::string file = Build("repeat", 1);
  ASSERT_FALSE(file.empty());
  std::string name = file.substr(file.rfind('/') + 1);
  Start();
  FileInfo info = Info(file);
  ASSERT_TRUE(info.has_runs());
  const RunsInfo& runs = info.runs();
  EXPECT_EQ(runs.error(), "");
  ASSERT_EQ(runs.runs_size(), 3);
  EXPECT_EQ(runs.reference(), 0);
  EXPECT_EQ(runs.run(), 1);
  ASSERT_EQ(runs.files_size(), 3);
  EXPECT_EQ(runs.files(0), "") << "the reference has no file of its own";
  EXPECT_EQ(runs.files(1), file);
  EXPECT_EQ(runs.files(2), "repeat/run2/" + name);
  EXPECT_EQ(runs.first(), "Module.pool.Pool.forward.0");
  EXPECT_EQ(runs.summary().rfind("step0 rank0: first disagreement at Module.pool.Pool.forward.0 (entry 5)", 0), 0u)
      << runs.summary();
  // Run 2's file answers the same summary as run 2.
  FileInfo other = Info(runs.files(2));
  EXPECT_EQ(other.runs().run(), 2);
  EXPECT_EQ(other.runs().summary(), runs.summary());
}

TEST_F(RunsInfoTest, OrdinaryFilesAndBrokenSummaries) {
  std::string file = Build("repeat", 1);
  // An ordinary compare (no run<i>/ folder) has no runs.
  std::filesystem::create_directories(logdir_ + "/plain");
  std::filesystem::copy_file(logdir_ + "/" + file, logdir_ + "/plain/compare_step0_rank0_1.vis");
  // A run<i>/ folder without runs.json beside neither.
  std::filesystem::create_directories(logdir_ + "/lone/run1");
  std::filesystem::copy_file(logdir_ + "/" + file, logdir_ + "/lone/run1/compare_step0_rank0_1.vis");
  // A broken runs.json: the error travels to the page.
  std::filesystem::create_directories(logdir_ + "/broken/run1");
  std::filesystem::copy_file(logdir_ + "/" + file, logdir_ + "/broken/run1/compare_step0_rank0_1.vis");
  std::ofstream(logdir_ + "/broken/runs.json") << "{\"runs\": [\"a\", ";
  Start();
  EXPECT_FALSE(Info("plain/compare_step0_rank0_1.vis").has_runs());
  EXPECT_FALSE(Info("lone/run1/compare_step0_rank0_1.vis").has_runs());
  FileInfo broken = Info("broken/run1/compare_step0_rank0_1.vis");
  EXPECT_EQ(broken.runs().error().rfind("broken/runs.json: ", 0), 0u) << broken.runs().error();
  EXPECT_EQ(broken.runs().runs_size(), 0);
}

// FileInfo comes with every edit and legend change: runs.json is read again
// only when its size, modification time or inode changed.
TEST_F(RunsInfoTest, ARunsJsonIsReadAgainOnlyWhenItChanges) {
  std::string file = Build("repeat", 1);
  ASSERT_FALSE(file.empty());
  Start();
  ASSERT_NE(Info(file).runs().summary().find("(entry 5)"), std::string::npos);
  const std::string path = logdir_ + "/repeat/runs.json";
  struct stat before;
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  std::string text = t::ReadFile(path);
  const size_t at = text.find("(entry 5)");  // the stored summary line
  ASSERT_NE(at, std::string::npos);
  text[at + 7] = '4';  // the same size, written in place, the same mtime again
  std::ofstream(path, std::ios::in | std::ios::out) << text;
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  EXPECT_NE(Info(file).runs().summary().find("(entry 5)"), std::string::npos) << "read once, kept";
  times[1].tv_sec += 1;  // changed: read again
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  EXPECT_NE(Info(file).runs().summary().find("(entry 4)"), std::string::npos) << Info(file).runs().summary();
}

}  // namespace
}  // namespace graph_ascend::service
