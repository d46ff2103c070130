// The service's conversion of msprobe's files, for robustness: a graph opened
// hierarchy first gets its details with no thread to spare and out of memory,
// the conversion cache stays outside the log directory and is cleaned of
// conversions left by dead processes, and the details read from the .vis.db
// before the whole file is written are those it then holds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "../builder/thread_limit.h"
#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

namespace fs = std::filesystem;
using testing::ExecSql;
using testing::MsprobeOutput;
using testing::TempDir;
// The whole file of a graph opened hierarchy first is written on a thread of
// its own, and the two sides of a compare are read on two; when no thread can
// be started (a thread limit) the work is done on the caller's thread, and
// the details come (issue 17, 1c: std::system_error escaped StartFill, and a
// fill that never ran would have left its waiters in DetailFill::Wait()).
TEST(ForeignFilesOpen, AGraphOpensWithItsDetailsWhenNoThreadCanBeStarted) {
  TempDir logs, cache;
  const std::string db = logs.Join("compare.vis.db");
  fs::copy_file(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"), db);
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
  fs::copy_file(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"), db);
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

TEST(ForeignFilesOpen, NodeDetailsBeforeTheFillAreTheFilledOnes) {
  TempDir logs;
  // msprobe 26.2.0 (tb_stack), a batch of steps and ranks, the 8.2 schema, inline stacks of 8.2.0.
  for (const char* name : {"dist_gloo_compare_26.2.0.vis.db", "dist_gloo_build_26.2.0.vis.db",
                           "dist_gloo_compare_8.2.1.vis.db", "p2p_micro_batch_8.2.0.vis.db"}) {
    ExpectDetailsBeforeTheFillAsAfter(MsprobeOutput(name), "");
  }
  for (const char* id : {"step0_rank1", "step1_rank0"}) {
    ExpectDetailsBeforeTheFillAsAfter(MsprobeOutput("dist_gloo_batch_26.2.0.vis.db"), id);
  }
  // The root last (msprobe 26.2 writes it so) and a repeated name, whose two
  // records ReadGraph merges into one node (the second with no input items).
  const std::string moved = logs.Join("moved.vis.db");
  fs::copy_file(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"), moved);
  ExecSql(moved, "PRAGMA journal_mode=DELETE; UPDATE tb_nodes SET node_order = 100000 WHERE up_node = ''");
  ExpectDetailsBeforeTheFillAsAfter(moved, "");
  const std::string twice = logs.Join("twice.vis.db");
  fs::copy_file(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"), twice);
  ExecSql(twice,
          "PRAGMA journal_mode=DELETE; INSERT INTO tb_nodes SELECT id || '_again', graph_id, node_order + 100000, "
          "node_name, node_type, up_node, sub_nodes, precision_index, overflow_level, micro_step_id, "
          "matched_node_link, stack_id, parallel_merge_info, matched_distributed, modified, '{}', output_data, "
          "data_source, dump_data_dir, step, rank, is_distributed FROM tb_nodes WHERE node_order IN (3, 5)");
  ExpectDetailsBeforeTheFillAsAfter(twice, "");
}

}  // namespace
}  // namespace graph_ascend::service
