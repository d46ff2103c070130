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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <ctime>
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

// How a run of bin/graph-ascend is held and ended.
struct Hold {
  std::vector<std::string> targets;  // a FIFO is planted at "<target>.tmp-<pid>" of each
  int signal = SIGTERM;              // sent once it writes into one of them (0: none)
  rlim_t file_size = RLIM_INFINITY;  // RLIMIT_FSIZE of the child (SIGXFSZ past it)
  int stderr_fd = -1;                // the child's stderr (default /dev/null)
};

// Runs bin/graph-ascend `args` as `hold` says: with FIFOs at the temporary
// names, waits until it writes into one (it then blocks: nothing is read and
// the pipe holds one page) and sends the signal. Returns how it ended
// (waitpid's status); `writing` tells whether it got as far as the write.
// The FIFOs it did not open are removed.
int RunHeld(const std::vector<std::string>& args, const Hold& hold, bool* writing) {
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
    dup2(hold.stderr_fd >= 0 ? hold.stderr_fd : null, 2);
    struct rlimit size = {hold.file_size, hold.file_size}, core = {0, 0};
    setrlimit(RLIMIT_FSIZE, &size);
    setrlimit(RLIMIT_CORE, &core);  // SIGXFSZ dumps core by default
    execv(argv[0], argv.data());
    _exit(121);
  }
  close(gate[0]);
  std::vector<pollfd> fds;
  std::vector<std::string> fifos;
  for (const std::string& target : hold.targets) {
    std::string fifo = target + ".tmp-" + std::to_string(pid);
    if (mkfifo(fifo.c_str(), 0600) != 0) continue;
    int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    fcntl(fd, F_SETPIPE_SZ, 4096);
    fds.push_back({fd, POLLIN, 0});
    fifos.push_back(fifo);
  }
  (void)!write(gate[1], "x", 1);
  close(gate[1]);
  int used = -1;
  if (!fds.empty()) {
    // A hang guard, not a time limit: the writer is there in well under a second.
    if (poll(fds.data(), fds.size(), 120000) > 0) {
      for (size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].revents & POLLIN) used = static_cast<int>(i);
      }
    }
    *writing = used >= 0;
  }
  if (hold.signal != 0) kill(pid, hold.signal);
  int status = 0;
  waitpid(pid, &status, 0);
  for (size_t i = 0; i < fds.size(); ++i) {
    close(fds[i].fd);
    if (static_cast<int>(i) != used) unlink(fifos[i].c_str());
  }
  return status;
}

int SigtermWhileWriting(const std::vector<std::string>& args, const std::string& target, bool* writing) {
  return RunHeld(args, Hold{{target}}, writing);
}

void ExpectDeathBy(int status, int signal) {
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), signal) << strsignal(WTERMSIG(status));
}

void ExpectNoTemporary(const std::string& dir) {
  for (const std::string& f : Tree(dir)) {
    EXPECT_EQ(f.find(".tmp-"), std::string::npos) << "temporary file left: " << f;
  }
}

void ExpectSignalDeathAndNothingLeft(int status, bool writing, const std::string& dir) {
  EXPECT_TRUE(writing) << "the command never wrote into the FIFO";
  ExpectDeathBy(status, SIGTERM);
  ExpectNoTemporary(dir);
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

// One of the commands that write outputs, run in `dir`: its arguments, the
// outputs it writes (where a FIFO holds it), and the folder it makes ("" when none).
struct Writer {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> targets;
  std::string made;
};

// graph names its .vis after the second it starts: one target for each second
// of the hang guard, from now.
std::vector<std::string> BuildNames(const std::string& dir) {
  std::vector<std::string> out;
  time_t now = time(nullptr);
  for (int s = 0; s <= 120; ++s) {
    time_t t = now + s;
    struct tm local;
    localtime_r(&t, &local);
    char buf[32];
    strftime(buf, sizeof(buf), "%Y%m%d%H%M%S", &local);
    out.push_back(dir + "/build_" + buf + ".vis");
  }
  return out;
}

// The five writers, each writing into `out` below `dir` (`out` is made by
// those that make their folder; the others write beside it).
std::vector<Writer> Writers(const TempDir& dir, const std::string& out) {
  const std::string api = "Functional.conv2d.0";
  WriteFile(dir / "config_op.json",
            "{\"dump_json_path\": \"" + Sample("cnn_statistics/npu/step0/rank0/dump.json") + "\", \"api_name\": \"" +
                api + "\", \"extract_api_path\": \"" + (dir / (out + "/extract.json")) +
                "\", \"propagation\": \"forward\", \"data_mode\": \"random_data\", \"random_seed\": 1234, "
                "\"iter_times\": 1}");
  WriteFile(dir / "compare.json", "{\"npu_path\": \"" + Sample("gpt_statistics/npu/step0/rank0") + "\"}");
  if (!fs::exists(dir / "input.vis")) {
    RunResult built = RunTool({"graph", "-i", dir / "compare.json", "-o", dir / "input"});
    EXPECT_EQ(built.status, 0) << built.err;
    for (const std::string& f : Files(dir / "input")) fs::rename(dir / ("input/" + f), dir / "input.vis");
  }
  return {
      {"op_generate", {"op_generate", "-i", dir / "config_op.json", "-o", dir / out},
       {dir / (out + "/" + api + ".forward.py")}, out},
      {"graph", {"graph", "-i", dir / "compare.json", "-o", dir / out}, BuildNames(dir / out), out},
      {"ckpt_compare", {"ckpt_compare", Sample("ckpt/tp1pp1_b"), Sample("ckpt/release_b"), "-o", dir / "ckpt.json"},
       {dir / "ckpt.json"}, ""},
      {"export", {"export", dir / "input.vis", "-o", dir / "export.json"}, {dir / "export.json"}, ""},
      {"import",
       {"import", SourceDir() + "/tests/data/msprobe_outputs/dist_gloo_build_8.1.2.vis", "-o", dir / "import.vis"},
       {dir / "import.vis"}, ""},
  };
}

// Every writer, held in its write, dies of each signal a user can meet with
// nothing left: SIGPIPE, SIGXFSZ, SIGUSR1, SIGUSR2, SIGALRM (before, only
// SIGINT, SIGTERM and SIGHUP removed the temporaries).
TEST(OutputSignalTest, EverySignalThatEndsAWriterRemovesItsTemporaries) {
  TempDir dir;
  for (int sig : {SIGPIPE, SIGXFSZ, SIGUSR1, SIGUSR2, SIGALRM}) {
    for (const Writer& w : Writers(dir, "held")) {
      SCOPED_TRACE(w.name + " " + strsignal(sig));
      fs::create_directories(dir / "held");  // the FIFOs go there before the run
      bool writing = false;
      int status = RunHeld(w.args, Hold{w.targets, sig}, &writing);
      EXPECT_TRUE(writing) << "the command never wrote into the FIFO";
      ExpectDeathBy(status, sig);
      ExpectNoTemporary(dir.path());
      fs::remove_all(dir / "held");
    }
  }
}

// The real SIGXFSZ: a file size limit (`ulimit -f`) the output passes. The
// temporaries go, and so do the folders the run made.
TEST(OutputSignalTest, AFileSizeLimitLeavesNoTemporaryNorFolder) {
  TempDir dir;
  for (const Writer& w : Writers(dir, "made/deeper")) {
    SCOPED_TRACE(w.name);
    bool writing = false;
    Hold hold;
    hold.signal = 0;
    hold.file_size = 2048;
    int status = RunHeld(w.args, hold, &writing);
    ExpectDeathBy(status, SIGXFSZ);
    ExpectNoTemporary(dir.path());
    EXPECT_FALSE(fs::exists(dir / "made")) << "the folders it made";
  }
}

// The real SIGPIPE: progress written to a pipe nobody reads any more
// (`graph-ascend graph --progress_json ... 2>&1 | head -1`).
TEST(OutputSignalTest, ProgressIntoAClosedPipeLeavesNoFolder) {
  TempDir dir;
  Writers(dir, "x");
  int closed[2];
  ASSERT_EQ(pipe(closed), 0);
  close(closed[0]);
  Hold hold;
  hold.signal = 0;
  hold.stderr_fd = closed[1];
  bool writing = false;
  int status = RunHeld({"graph", "-i", dir / "compare.json", "-o", dir / "made/deeper", "--progress_json"}, hold,
                       &writing);
  close(closed[1]);
  ExpectDeathBy(status, SIGPIPE);
  ExpectNoTemporary(dir.path());
  EXPECT_FALSE(fs::exists(dir / "made"));
}

// nohup: a signal ignored at the start stays ignored (the handlers used to replace it).
TEST(OutputSignalTest, ASignalIgnoredAtTheStartStaysIgnored) {
  TempDir dir;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGHUP, SIG_IGN);
    RemoveTemporariesOnSignals();
    raise(SIGHUP);  // ignored
    (void)!write(ready[1], "x", 1);
    for (;;) pause();
  }
  close(ready[1]);
  char c;
  EXPECT_EQ(read(ready[0], &c, 1), 1) << "the child died of the SIGHUP it ignores";
  close(ready[0]);
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ExpectDeathBy(status, SIGTERM);
}

}  // namespace
}  // namespace graph_ascend::testing
