// bin/graph-ascend stopped by SIGTERM while it reads the dumps: it dies of the
// signal at once (no cancel flag to wait for: the handler of base/temp_files
// runs on whichever thread is reading), says so on stderr, and leaves neither
// an output file, a temporary nor the output folder it made.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.h"

namespace graph_ascend::testing {
namespace {

// A scaled transformer dump (bench/scale, real msprobe structure) whose
// reading lasts many slices of the loop below on any machine.
std::string ScaledDump(const TempDir& dir) {
  std::string out = dir / "scaled";
  std::string cmd = "python3 " + SourceDir() + "/bench/scale/scale_sample.py --case " + Sample("gpt_statistics") +
                    " --nodes 100000 --out " + out + " > /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return out;
}

// The last "graph-ascend: progress" line's stage in `err`.
std::string LastStage(const std::string& err) {
  const std::string key = "graph-ascend: progress {\"stage\": \"";
  size_t at = err.rfind(key);
  if (at == std::string::npos) return "";
  at += key.size();
  return err.substr(at, err.find('"', at) - at);
}

// Everything readable now from the non-blocking `fd`.
void Drain(int fd, std::string* into) {
  char buf[4096];
  ssize_t got;
  while ((got = read(fd, buf, sizeof(buf))) > 0) into->append(buf, static_cast<size_t>(got));
}

TEST(CliSignalTest, SigtermWhileReadingTheDumpsEndsTheRunAndLeavesNothing) {
  TempDir dir;
  std::string scaled = ScaledDump(dir);
  std::string out = dir / "out";
  WriteFile(dir / "compare.json",
            "{\"npu_path\": \"" + scaled + "/npu\", \"bench_path\": \"" + scaled + "/bench\"}");
  int err[2];
  ASSERT_EQ(pipe2(err, O_CLOEXEC), 0);
  std::vector<std::string> args = {Binary(), "graph", "-i", dir / "compare.json", "-o", out, "--progress_json"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(err[1], 2);
    raise(SIGSTOP);  // held from its first instruction on
    execv(argv[0], argv.data());
    _exit(121);
  }
  close(err[1]);
  // A failed assertion below leaves no stopped process behind.
  struct Reaper {
    pid_t pid;
    bool reaped = false;
    ~Reaper() {
      if (reaped) return;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reaper{pid};
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  // Runs it 5 ms at a time; stopped, all it printed is in the pipe (progress
  // lines are flushed), so a last stage of "reading dumps" says where it is.
  std::string text;
  int status = 0;
  bool reading = false;
  for (int i = 0; i < 20000 && !reading; ++i) {
    ASSERT_EQ(waitpid(pid, &status, WUNTRACED), pid);
    if (!WIFSTOPPED(status)) reaper.reaped = true;
    ASSERT_TRUE(WIFSTOPPED(status)) << "it ended before its reading was seen:\n" << text;
    Drain(err[0], &text);
    reading = LastStage(text) == "reading dumps";
    if (reading) break;
    ASSERT_EQ(LastStage(text), "") << "past the reading already:\n" << text;
    kill(pid, SIGCONT);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    kill(pid, SIGSTOP);
  }
  ASSERT_TRUE(reading) << text;
  kill(pid, SIGTERM);
  kill(pid, SIGCONT);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  reaper.reaped = true;
  fcntl(err[0], F_SETFL, 0);
  Drain(err[0], &text);
  close(err[0]);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status) << "\n" << text;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  std::vector<std::string> lines = Lines(text);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "graph-ascend: stopped by SIGTERM (unfinished files removed)") << text;
  EXPECT_FALSE(fs::exists(out)) << "the output folder it made is removed";
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
    EXPECT_EQ(e.path().string().find(".vis"), std::string::npos) << e.path();
  }
}

}  // namespace
}  // namespace graph_ascend::testing
