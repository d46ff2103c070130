// The companions' output files (companions/output): written under a
// temporary name and renamed, and the temporary file never outlives the
// command, neither an error nor SIGTERM / SIGINT in the middle of the write
// (issue 17, 2d). End to end: a SIGTERM while bin/graph-ascend op_generate and
// ckpt_compare are writing, held in the write by a FIFO planted at the
// temporary name (a slow disk: the test reads nothing, so the write blocks
// once the pipe is full, and the signal comes while it waits).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "base/temp_files.h"
#include "cli_runner.h"
#include "output/output_file.h"

namespace graph_ascend::testing {
namespace {

// Every file under `dir`, relative, sorted.
std::vector<std::string> Tree(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); ++it) {
    out.push_back(fs::relative(it->path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(StagedFileTest, CommitRenamesAndAnUncommittedFileLeavesNothing) {
  TempDir dir;
  {
    auto staged = output::StagedFile::Write(dir / "a.json", "{}");
    ASSERT_TRUE(staged.ok()) << staged.error().ToString();
    EXPECT_EQ((*staged)->temporary(), dir / ("a.json.tmp-" + std::to_string(getpid())));
    EXPECT_EQ(Files(dir.path()), std::vector<std::string>{"a.json.tmp-" + std::to_string(getpid())});
  }  // an error elsewhere: never committed
  EXPECT_EQ(Files(dir.path()), std::vector<std::string>{});
  auto staged = output::StagedFile::Write(dir / "a.json", "{}");
  ASSERT_TRUE(staged.ok());
  ASSERT_TRUE((*staged)->Commit().ok());
  EXPECT_EQ(Files(dir.path()), std::vector<std::string>{"a.json"});
  EXPECT_EQ(ReadFile(dir / "a.json"), "{}");
}

TEST(StagedFileTest, ErrorsNameTheOutputAndLeaveNoTemporary) {
  TempDir dir;
  auto missing = output::StagedFile::Write(dir / "no/such/folder/a.json", "{}");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().file, dir / "no/such/folder/a.json");
  // The rename fails: the target is a folder that is not empty.
  fs::create_directories(dir / "taken/inside");
  Status st = output::WriteFileAtomically(dir / "taken", "{}", true);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().file, dir / "taken");
  EXPECT_NE(st.error().message.find("cannot rename"), std::string::npos) << st.error().ToString();
  EXPECT_EQ(Tree(dir.path()), (std::vector<std::string>{"taken", "taken/inside"}));
}

TEST(StagedFileTest, SigtermWhileStagedRemovesTheTemporaryFiles) {
  TempDir dir;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    RemoveTemporariesOnSignals();
    auto a = output::StagedFile::Write(dir / "a.json", "{}");
    auto b = output::StagedFile::Write(dir / "b.py", "print()\n");
    if (!a.ok() || !b.ok()) _exit(3);
    (void)!write(ready[1], "x", 1);
    for (;;) pause();  // killed by the parent
  }
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  EXPECT_EQ(Files(dir.path()).size(), 2u) << "the child has staged both";
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(Files(dir.path()), std::vector<std::string>{}) << "no temporary left";
}

// Runs bin/graph-ascend `args` with a FIFO at "<target>.tmp-<its pid>", waits
// until it writes into it (it then blocks: nothing is read and the pipe holds
// one page), sends SIGTERM and returns how it ended (waitpid's status).
// `writing` tells whether it got as far as the write.
int SigtermWhileWriting(const std::vector<std::string>& args, const std::string& target, bool* writing) {
  *writing = false;
  int gate[2];
  if (pipe(gate) != 0) return -1;
  std::vector<std::string> full = {Binary()};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(gate[1]);
    char c;
    if (read(gate[0], &c, 1) != 1) _exit(120);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execv(argv[0], argv.data());
    _exit(121);
  }
  close(gate[0]);
  const std::string fifo = target + ".tmp-" + std::to_string(pid);
  int fd = -1;
  if (mkfifo(fifo.c_str(), 0600) == 0) fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) fcntl(fd, F_SETPIPE_SZ, 4096);
  (void)!write(gate[1], "x", 1);
  close(gate[1]);
  if (fd >= 0) {
    // A hang guard, not a time limit: the writer is there in well under a second.
    pollfd p{fd, POLLIN, 0};
    *writing = poll(&p, 1, 120000) == 1 && (p.revents & POLLIN) != 0;
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  if (fd >= 0) close(fd);
  return status;
}

void ExpectSignalDeathAndNothingLeft(int status, bool writing, const std::string& dir) {
  EXPECT_TRUE(writing) << "the command never wrote into the FIFO";
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  for (const std::string& f : Tree(dir)) {
    EXPECT_EQ(f.find(".tmp-"), std::string::npos) << "temporary file left: " << f;
  }
}

TEST(OutputSignalTest, SigtermWhileOpGenerateWritesLeavesNoTemporary) {
  TempDir dir;
  const std::string api = "Functional.conv2d.0";
  const std::string config = dir / "config_op.json";
  WriteFile(config, "{\"dump_json_path\": \"" + Sample("cnn_statistics/npu/step0/rank0/dump.json") +
                        "\", \"api_name\": \"" + api + "\", \"extract_api_path\": \"" + (dir / "out/extract.json") +
                        "\", \"propagation\": \"forward\", \"data_mode\": \"random_data\", \"random_seed\": 1234, "
                        "\"iter_times\": 1}");
  fs::create_directories(dir / "out");
  // The extract is staged first, then the script (over a page: it holds the runtime) blocks in its write.
  bool writing = false;
  int status = SigtermWhileWriting({"op_generate", "-i", config, "-o", dir / "out"},
                                   dir / ("out/" + api + ".forward.py"), &writing);
  ExpectSignalDeathAndNothingLeft(status, writing, dir / "out");
  EXPECT_EQ(Tree(dir / "out"), std::vector<std::string>{}) << "neither the extract nor the script";
  // Unhindered, the same command writes both.
  RunResult r = RunTool({"op_generate", "-i", config, "-o", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Tree(dir / "out"), (std::vector<std::string>{api + ".forward.py", "extract.json"}));
}

TEST(OutputSignalTest, SigtermWhileCkptCompareWritesLeavesNoTemporary) {
  TempDir dir;
  bool writing = false;
  int status = SigtermWhileWriting(
      {"ckpt_compare", Sample("ckpt/tp1pp1_b"), Sample("ckpt/release_b"), "-o", dir / "similarity.json"},
      dir / "similarity.json", &writing);
  ExpectSignalDeathAndNothingLeft(status, writing, dir.path());
  EXPECT_EQ(Tree(dir.path()), std::vector<std::string>{});
}

}  // namespace
}  // namespace graph_ascend::testing
