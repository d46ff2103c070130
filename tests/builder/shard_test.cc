// Shards of a batch (job/shard_job.h): which shard builds which unit, the
// shard index from the engines' environments, and end to end: shards then
// `graph-ascend link` give the one-process batch's graph content on the real
// samples (dist_gloo: send/recv and all_reduce across 2 ranks; parallel_merge:
// batch_isend_irecv and TP all_reduce across 4 ranks, and the merged
// compare), also after a failed or killed shard is run again, and under
// Open MPI's mpirun.
#include "job/shard_job.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <thread>

#include "cli_runner.h"
#include "same_graphs.h"
#include "test_files.h"

namespace graph_ascend {
namespace {

namespace fs = std::filesystem;
using testing::ExpectOneError;
using testing::FolderContentDiff;
using testing::RunResult;
using testing::RunTool;
using testing::Sample;
using testing::TempDir;

// ---------------------------------------------------------------- assignment

TEST(AssignShardsTest, EveryUnitExactlyOnceForAnyCount) {
  std::mt19937 random(7);
  for (size_t units : {0u, 1u, 2u, 7u, 64u, 1000u}) {
    std::vector<uint64_t> weights(units);
    for (uint64_t& w : weights) w = random() % 5000;
    for (uint32_t count = 1; count <= units + 3 && count <= 40; ++count) {
      std::vector<uint32_t> shard = job::AssignShards(weights, count);
      ASSERT_EQ(shard.size(), units);
      std::vector<uint64_t> load(count, 0);
      std::vector<int> seen(units, 0);
      for (uint32_t s = 0; s < count; ++s) {
        for (size_t u = 0; u < units; ++u) {
          if (shard[u] != s) continue;
          ++seen[u];
          load[s] += std::max<uint64_t>(weights[u], 1);
        }
      }
      for (size_t u = 0; u < units; ++u) ASSERT_EQ(seen[u], 1) << "unit " << u << " of " << units << ", " << count;
      // Greedy on the heaviest first: no shard is over the lightest by more than one unit.
      uint64_t heaviest = units ? std::max<uint64_t>(*std::max_element(weights.begin(), weights.end()), 1) : 0;
      EXPECT_LE(*std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()), heaviest);
      EXPECT_EQ(job::AssignShards(weights, count), shard) << "the same weights, the same split";
    }
  }
}

TEST(AssignShardsTest, EqualWeightsSpreadEvenly) {
  std::vector<uint64_t> weights(10, 100);
  std::vector<uint32_t> shard = job::AssignShards(weights, 4);
  std::map<uint32_t, int> per;
  for (uint32_t s : shard) ++per[s];
  EXPECT_EQ(per, (std::map<uint32_t, int>{{0, 3}, {1, 3}, {2, 2}, {3, 2}}));
}

// ---------------------------------------------------------------- end to end

// The number of nodes with cross-rank links in the files of `dir`.
int LinkedNodes(const std::string& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".vis") continue;
    auto r = vis::VisReader::Open(e.path().string());
    if (!r.ok()) {
      ADD_FAILURE() << r.error().ToString();
      continue;
    }
    for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
      if (!(*r)->has_side(side)) continue;
      Status st = (*r)->ReadIndex(side, [&](vis::NodeIndexChunk& c) -> Status {
        for (uint32_t f : c.flags()) n += (f & vis::FLAG_DISTRIBUTED) != 0;
        return Status::Ok();
      });
      EXPECT_TRUE(st.ok());
    }
  }
  return n;
}

// One way of running a batch: the command and its arguments before -o.
struct BatchCase {
  std::string name;
  std::vector<std::string> args;  // {"graph", "-i", config} or {"graph_visualize", "-tp", ...}
  bool linked;                    // the batch has cross-rank links
};
void PrintTo(const BatchCase& c, std::ostream* os) { *os << c.name; }

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The one-process batch into `out`.
void RunWhole(const std::vector<std::string>& args, const std::string& out) {
  RunResult r = RunTool(With(args, {"-o", out}));
  ASSERT_EQ(r.status, 0) << r.err;
}

void RunShard(const std::vector<std::string>& args, const std::string& out, const std::string& shard) {
  RunResult r = RunTool(With(args, {"-o", out, "--shard", shard}));
  ASSERT_EQ(r.status, 0) << shard << ": " << r.err;
}

void RunLink(const std::string& out) {
  RunResult r = RunTool({"link", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(out + "/.graph-ascend-shards")) << "link removes the shard state";
}

class ShardBatchTest : public ::testing::TestWithParam<BatchCase> {};

TEST_P(ShardBatchTest, ShardsThenLinkGiveTheOneProcessBatch) {
  TempDir dir;
  const std::string whole = dir / "whole";
  RunWhole(GetParam().args, whole);
  if (GetParam().linked) {
    ASSERT_GT(LinkedNodes(whole), 0) << "the batch has links to compare";
  }
  for (uint32_t count : {1u, 2u, 3u, 9u}) {
    SCOPED_TRACE("shards: " + std::to_string(count));
    const std::string out = dir / ("shards" + std::to_string(count));
    // Last shard first: the order the shards run in does not matter.
    for (uint32_t i = count; i-- > 0;) RunShard(GetParam().args, out, std::to_string(i) + "/" + std::to_string(count));
    if (GetParam().linked) {
      EXPECT_EQ(LinkedNodes(out), 0) << "shards write no links";
    }
    RunLink(out);
    EXPECT_EQ(FolderContentDiff(whole, out), "");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Samples, ShardBatchTest,
    ::testing::Values(BatchCase{"dist_gloo_compare", {"graph", "-i", Sample("dist_gloo/batch.json")}, true},
                      BatchCase{"dist_gloo_overflow", {"graph", "-i", Sample("dist_gloo/batch.json"), "-oc"}, true},
                      BatchCase{"dist_gloo_visualize",
                                {"graph_visualize", "-tp", Sample("dist_gloo/npu"), "-gp", Sample("dist_gloo/bench")},
                                true},
                      BatchCase{"dist_gloo_build", {"graph_visualize", "-tp", Sample("dist_gloo/npu")}, true},
                      BatchCase{"parallel_merge_ranks", {"graph_visualize", "-tp", Sample("parallel_merge/npu")}, true},
                      // isend/irecv link only by msprobe 26's rule (C26-p2p): the shard state carries it to link.
                      BatchCase{"p2p_micro_visualize",
                                {"graph_visualize", "-tp", Sample("p2p_micro/npu"), "-gp", Sample("p2p_micro/bench")},
                                true},
                      BatchCase{"parallel_merge_merged",
                                {"graph", "-i", Sample("parallel_merge/compare.json")},
                                false}),
    [](const ::testing::TestParamInfo<BatchCase>& i) { return i.param.name; });

// The one-process batch (job/batch_run.h) gives the same files however many
// pairs run at once, and with a memory budget that lets one run at a time.
TEST_P(ShardBatchTest, OneProcessGivesTheSameFilesAtAnyJobs) {
  TempDir dir;
  const std::string one = dir / "jobs1";
  RunWhole(With(GetParam().args, {"--jobs", "1"}), one);
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--jobs", "2"}, {"--jobs", "5"}, {"--jobs", "3", "--max-memory", "1K"}}) {
    SCOPED_TRACE(flags[0] + " " + flags[1] + (flags.size() > 2 ? " " + flags[3] : ""));
    const std::string out = dir / ("jobs" + flags[1] + std::to_string(flags.size()));
    RunWhole(With(GetParam().args, flags), out);
    EXPECT_EQ(FolderContentDiff(one, out), "");
  }
}

// One pair's threads (issue 31: reading, comparing and writing inside the
// pair) leave its file as it is: the real transformer sample's compare and
// build, each at --jobs 1 and --jobs 4 (one pair: it gets every thread) and
// with --threads 1, 2, 4 and 16.
TEST(OnePairTest, TheSameFileOnAnyNumberOfThreads) {
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"graph", "-i", Sample("gpt_statistics/compare.json")},
        std::vector<std::string>{"graph", "-i", Sample("gpt_statistics/build.json"), "-oc"}}) {
    SCOPED_TRACE(args[2]);
    const std::string one = dir / "threads1";
    fs::remove_all(one);
    RunWhole(With(args, {"--jobs", "1", "--threads", "1"}), one);
    for (const std::vector<std::string>& flags : {std::vector<std::string>{"--jobs", "4"},
                                                  {"--jobs", "1"},
                                                  {"--threads", "2"},
                                                  {"--threads", "4"},
                                                  {"--jobs", "4", "--threads", "16"}}) {
      const std::string out = dir / "other";
      fs::remove_all(out);
      RunWhole(With(args, flags), out);
      EXPECT_EQ(FolderContentDiff(one, out), "") << flags[0] << " " << flags[1];
    }
  }
}

const std::vector<std::string> kGloo = {"graph", "-i", Sample("dist_gloo/batch.json")};

TEST(ShardLinkTest, LinkNeedsEveryShard) {
  TempDir dir;
  ExpectOneError(RunTool({"link", dir / "none"}), {"no sharded batch to link"});
  const std::string out = dir / "out";
  RunShard(kGloo, out, "0/3");
  RunShard(kGloo, out, "2/3");
  RunResult r = RunTool({"link", out});
  ExpectOneError(r, {".graph-ascend-shards", "have not been built", "shard 1", "run those shards again"});
  EXPECT_TRUE(fs::exists(out + "/.graph-ascend-shards/batch")) << "a failed link keeps the state";
  RunShard(kGloo, out, "1/3");
  RunLink(out);
  const std::string whole = dir / "whole";
  RunWhole(kGloo, whole);
  EXPECT_EQ(FolderContentDiff(whole, out), "");
  ExpectOneError(RunTool({"link", out}), {"no sharded batch to link"});
}

TEST(ShardLinkTest, ShardsOfAnotherBatchAreRefused) {
  TempDir dir;
  const std::string out = dir / "out";
  RunShard(kGloo, out, "0/2");
  ExpectOneError(RunTool(With(kGloo, {"-o", out, "--shard", "1/2", "-oc"})),
                 {".graph-ascend-shards/batch", "records another batch", "graph-ascend link"});
  ExpectOneError(RunTool({"graph_visualize", "-tp", Sample("dist_gloo/npu"), "-o", dir / "db", "--output_format",
                          "db", "--shard", "0/2"}),
                 {"flag --shard", "--output_format db", "export --format db"});
  ExpectOneError(RunTool(With(kGloo, {"-o", out, "--shard", "2/2"})), {"flag --shard", "numbered from 0"});
}

TEST(ShardLinkTest, DamagedStateIsNamed) {
  TempDir dir;
  const std::string out = dir / "out";
  RunShard(kGloo, out, "0/1");
  const std::string summary = out + "/.graph-ascend-shards/compare_step1_rank0.summary";
  const std::string good = testing::ReadFile(summary);
  testing::WriteFile(summary, good.substr(0, good.size() - 3));
  ExpectOneError(RunTool({"link", out}), {"compare_step1_rank0.summary", "byte 8", "damaged"});
  testing::WriteFile(summary, "{}");
  ExpectOneError(RunTool({"link", out}), {"compare_step1_rank0.summary", "byte 0", "not a graph-ascend shard state"});
  testing::WriteFile(summary, good);
  const std::string batch = out + "/.graph-ascend-shards/batch";
  const std::string record = testing::ReadFile(batch);
  testing::WriteFile(batch, record.substr(0, 20));
  ExpectOneError(RunTool(With(kGloo, {"-o", out, "--shard", "0/1"})), {".graph-ascend-shards/batch", "damaged"});
  testing::WriteFile(batch, record);
  RunLink(out);
}

// A copy of samples/dist_gloo whose folders can be damaged and repaired.
std::string CopyGloo(const std::string& to) {
  fs::copy(Sample("dist_gloo"), to, fs::copy_options::recursive);
  return to + "/batch.json";
}

TEST(ShardLinkTest, FailedShardRunsAgain) {
  TempDir dir;
  const std::vector<std::string> args = {"graph", "-i", CopyGloo(dir / "gloo")};
  const std::string whole = dir / "whole";
  RunWhole(args, whole);
  const std::string dump = dir / "gloo/npu/step1/rank1/dump.json";
  const std::string good = testing::ReadFile(dump);
  testing::WriteFile(dump, good.substr(0, good.size() / 2));
  const std::string out = dir / "out";
  std::vector<std::string> failed;
  for (const char* shard : {"0/2", "1/2"}) {
    RunResult r = RunTool(With(args, {"-o", out, "--shard", shard}));
    if (r.status != 0) {
      ExpectOneError(r, {"step1/rank1/dump.json"});
      failed.push_back(shard);
    }
  }
  ASSERT_EQ(failed.size(), 1u) << "one shard holds the damaged rank";
  ExpectOneError(RunTool({"link", out}), {"have not been built", "shard " + failed[0].substr(0, 1)});
  testing::WriteFile(dump, good);
  RunShard(args, out, failed[0]);
  RunLink(out);
  EXPECT_EQ(FolderContentDiff(whole, out), "");
}

// A damaged rank among pairs built at once: one error naming its file, and
// nothing of the batch left (the pairs written before it removed).
TEST(ShardLinkTest, OneProcessBatchWithADamagedRankLeavesNothing) {
  TempDir dir;
  const std::string config = CopyGloo(dir / "gloo");
  const std::string dump = dir / "gloo/npu/step1/rank1/dump.json";
  const std::string good = testing::ReadFile(dump);
  testing::WriteFile(dump, good.substr(0, good.size() / 2));
  for (const char* jobs : {"1", "2", "4"}) {
    const std::string out = dir / (std::string("out") + jobs);
    ExpectOneError(RunTool({"graph", "-i", config, "-o", out, "--jobs", jobs}), {"step1/rank1/dump.json"});
    EXPECT_EQ(testing::Files(out), std::vector<std::string>{}) << "--jobs " << jobs;
  }
}

// A batch of `steps` steps of dist_gloo's two ranks (the real step folders
// copied), long enough to kill a shard half way.
std::string ManySteps(const std::string& to, int steps) {
  for (const char* side : {"npu", "bench"}) {
    fs::create_directories(to + "/" + side);
    for (int s = 0; s < steps; ++s) {
      fs::copy(Sample(std::string("dist_gloo/") + side + "/step" + std::to_string(s % 2)),
               to + "/" + side + "/step" + std::to_string(s), fs::copy_options::recursive);
    }
  }
  testing::WriteFile(to + "/batch.json", R"({"npu_path": "npu", "bench_path": "bench"})");
  return to + "/batch.json";
}

TEST(ShardLinkTest, KilledShardRunsAgain) {
  TempDir dir;
  const std::vector<std::string> args = {"graph", "-i", ManySteps(dir / "many", 40)};
  const std::string out = dir / "out";
  std::vector<std::string> full = With({testing::Binary()}, With(args, {"-o", out, "--shard", "0/1"}));
  std::vector<char*> argv;
  for (std::string& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, full[0].c_str(), &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  // Killed once a few of its units are done.
  auto summaries = [&]() {
    int n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(out + "/.graph-ascend-shards", ec)) {
      n += e.path().extension() == ".summary";
    }
    return n;
  };
  // The shard runs 2 ms at a time and is looked at while stopped, so that it
  // cannot finish its 80 units between the look and the kill, however fast.
  auto stop = [&] {
    kill(pid, SIGSTOP);
    int st = 0;
    return waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st);
  };
  ASSERT_TRUE(stop());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (summaries() < 3 && std::chrono::steady_clock::now() < deadline) {
    kill(pid, SIGCONT);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_TRUE(stop()) << "the shard ended before it was killed";
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the shard was killed before it finished (80 units)";
  ExpectOneError(RunTool({"link", out}), {"have not been built", "shard 0"});
  RunShard(args, out, "0/1");
  RunLink(out);
  const std::string whole = dir / "whole";
  RunWhole(args, whole);
  EXPECT_EQ(FolderContentDiff(whole, out), "") << "and nothing the killed shard left behind";
}

// Two shards started by Open MPI's mpirun take their index from its
// environment (OMPI_COMM_WORLD_RANK / _SIZE).
TEST(ShardEngineTest, MpirunTwoShards) {
  ASSERT_EQ(system("command -v mpirun >/dev/null"), 0) << "mpirun (Debian openmpi-bin, scripts/install-deps.sh)";
  TempDir dir;
  const std::string out = dir / "out";
  std::string command = "mpirun --allow-run-as-root --oversubscribe -np 2 " + testing::Binary() + " graph -i " +
                        Sample("dist_gloo/batch.json") + " -o " + out + " --shard > " + (dir / "mpi.log") +
                        " 2>&1";
  ASSERT_EQ(system(command.c_str()), 0) << testing::ReadFile(dir / "mpi.log");
  RunLink(out);
  const std::string whole = dir / "whole";
  RunWhole(kGloo, whole);
  EXPECT_EQ(FolderContentDiff(whole, out), "");
}

}  // namespace
}  // namespace graph_ascend
