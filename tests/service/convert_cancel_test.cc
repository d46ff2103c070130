// Cancelling a conversion and the server's death while its builder runs
// (the builder held by SIGSTOP where the test needs it: never a race with the
// machine's speed), through the in-process service and bin/graph-ascend-server.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "convert_fixture.h"

namespace graph_ascend::service {
namespace {

using namespace convert_testing;  // NOLINT: the fixture and its helpers

// The state letter of /proc/<pid>/stat ('T' stopped), 0 when the process is gone.
char ProcessState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? 0 : stat[close + 2];
}

// Whether SIGTERM waits to be delivered to the (stopped) process, or it is gone.
bool TerminatedOrGone(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ShdPnd:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> (SIGTERM - 1)) & 1;
  }
  return true;
}

// A builder the test holds, however fast it is: the service runs the real
// graph-ascend through a shell that stops itself first (SIGSTOP); Run() then
// lets it go 20 ms at a time until `ready`, and it stays stopped there.
class HeldBuilder {
 public:
  // `parent`: the process that starts it (this one: the in-process service).
  explicit HeldBuilder(const std::string& dir, pid_t parent = getpid())
      : path_(dir + "/held-graph-ascend"), parent_(parent) {
    std::ofstream(path_) << "#!/bin/sh\nkill -STOP $$\nexec '" << Builder() << "' \"$@\"\n";
    fs::permissions(path_, fs::perms::owner_all);
  }
  const std::string& path() const { return path_; }

  // The builder this process started, once it has stopped itself.
  pid_t Find() {
    for (int i = 0; i < 60000 && pid_ <= 0; ++i) {
      for (const auto& e : fs::directory_iterator("/proc")) {
        std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream in(e.path() / "stat");
        std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        size_t close = stat.rfind(')');
        if (close == std::string::npos) continue;
        char state = 0;
        long ppid = 0;
        if (sscanf(stat.c_str() + close + 1, " %c %ld", &state, &ppid) == 2 && ppid == parent_ && state == 'T') {
          pid_ = std::stoi(name);
        }
      }
      if (pid_ <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return pid_;
  }

  // Runs the stopped builder in slices until `ready` (asked while it is stopped).
  bool Run(const std::function<bool()>& ready) {
    if (Find() <= 0) return false;
    for (int i = 0; i < 3000; ++i) {
      if (ready()) return true;
      if (kill(pid_, SIGCONT) != 0) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      kill(pid_, SIGSTOP);
      while (ProcessState(pid_) != 'T') {
        if (ProcessState(pid_) == 0 || ProcessState(pid_) == 'Z') return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    return false;
  }

  // Once the service's SIGTERM waits for it, continues it: the builder then
  // handles SIGTERM itself (removes its temporaries), or is gone already.
  void ContinueWhenTerminated() {
    for (int i = 0; i < 30000 && !TerminatedOrGone(pid_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    kill(pid_, SIGCONT);
  }

 private:
  std::string path_;
  pid_t parent_;
  pid_t pid_ = -1;
};

// The job as ConvertList gives it (asking does not watch it).
ConvertJob Listed(GraphService::Stub* stub, const std::string& id) {
  grpc::ClientContext ctx;
  ConvertListRequest lr;
  lr.set_session("tab1");
  ConvertListReply list;
  EXPECT_TRUE(stub->ConvertList(&ctx, lr, &list).ok());
  for (const ConvertJob& j : list.jobs()) {
    if (j.id() == id) return j;
  }
  return ConvertJob();
}

TEST_F(ConvertTest, CancelMidWayLeavesNoFile) {
  HeldBuilder builder(sock_.path());
  ServiceOptions options;
  options.builder = builder.path();
  options.convert_orphan_seconds = 3600;  // watched only once cancelled
  Serve(options);
  fs::create_symlink(ScaledDump(), dir_.Join("scaled_link"));  // refused: it leaves the log directory
  fs::copy(ScaledDump(), dir_.Join("scaled"), fs::copy_options::recursive);
  ConvertJob started;
  ConvertJob refused;
  EXPECT_EQ(Start(Request("scaled_link/npu", "", "x"), &refused).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(Start(Request("scaled/npu", "scaled/bench", "big"), &started).ok());
  // Held once it has read part of a file: the cancel comes mid-way however fast the builder is.
  ASSERT_TRUE(builder.Run([&] {
    ConvertJob j = Listed(stub_.get(), started.id());
    return j.state() == CONVERT_RUNNING && j.file_fraction() > 0;
  })) << Listed(stub_.get(), started.id()).DebugString();
  ConvertJob cancelled;
  EXPECT_TRUE(Cancel(started.id(), &cancelled).ok());
  builder.ContinueWhenTerminated();
  std::vector<ConvertJob> seen = Watch(started.id());
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(cancelled.state(), CONVERT_CANCELLED);
  EXPECT_EQ(seen.back().state(), CONVERT_CANCELLED);
  EXPECT_EQ(seen.back().error_message(), "cancelled from the page");
  EXPECT_EQ(seen.back().outputs_size(), 0);
  EXPECT_FALSE(fs::exists(dir_.Join("big")));
  EXPECT_EQ(Leftovers(dir_.path()), std::vector<std::string>{});
}

// Whether `sig` is set in the /proc/<pid>/status mask `field` ("SigBlk:", "SigIgn:").
bool InMask(pid_t pid, const std::string& field, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return (std::stoull(line.substr(field.size()), nullptr, 16) >> (sig - 1)) & 1;
  }
  return false;
}

// The signal state graph-ascend-server gives its threads (server_main.cc):
// SIGTERM, SIGINT, SIGHUP blocked on every thread started meanwhile (one of
// them sigwaits), SIGPIPE ignored; restored on destruction.
class ServerSignals {
 public:
  ServerSignals() {
    sigset_t blocked;
    sigemptyset(&blocked);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&blocked, s);
    pthread_sigmask(SIG_BLOCK, &blocked, &mask_);
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &pipe_);
  }
  // The threads are started: this one goes back to its own mask.
  void Unblock() { pthread_sigmask(SIG_SETMASK, &mask_, nullptr); }
  ~ServerSignals() {
    Unblock();
    sigaction(SIGPIPE, &pipe_, nullptr);
  }

 private:
  sigset_t mask_;
  struct sigaction pipe_;
};

TEST_F(ConvertTest, CancelWhileReadingStopsTheBuilderWithSigtermUnderTheServersSignalMask) {
  HeldBuilder builder(sock_.path());
  ServiceOptions options;
  options.builder = builder.path();
  options.convert_orphan_seconds = 3600;    // watched only once cancelled
  options.convert_term_grace_ms = 600000;  // SIGTERM alone must end it
  ServerSignals signals;
  Serve(options);  // its conversion thread starts with the server's mask
  signals.Unblock();
  fs::copy(ScaledDump(), dir_.Join("scaled"), fs::copy_options::recursive);
  ConvertJob started;
  ASSERT_TRUE(Start(Request("scaled/npu", "scaled/bench", "big"), &started).ok());
  // Held in its reading stage: stopped, with all it printed read by the
  // service (the progress lines are flushed as they are printed).
  ASSERT_TRUE(builder.Run([&] {
    int fd = open(("/proc/" + std::to_string(builder.Find()) + "/fd/2").c_str(), O_RDONLY | O_NONBLOCK);
    int unread = -1;
    if (fd >= 0) ioctl(fd, FIONREAD, &unread);
    if (fd >= 0) close(fd);
    ConvertJob j = Listed(stub_.get(), started.id());
    return unread == 0 && j.state() == CONVERT_RUNNING && j.stage() == "reading dumps";
  })) << Listed(stub_.get(), started.id()).DebugString();
  EXPECT_FALSE(InMask(builder.Find(), "SigBlk:", SIGTERM)) << "the builder inherited the server's mask";
  EXPECT_FALSE(InMask(builder.Find(), "SigIgn:", SIGPIPE));
  ConvertJob cancelled;
  EXPECT_TRUE(Cancel(started.id(), &cancelled).ok());
  builder.ContinueWhenTerminated();
  std::vector<ConvertJob> seen = Watch(started.id());
  ASSERT_FALSE(seen.empty());
  const ConvertJob& last = seen.back();
  EXPECT_EQ(last.state(), CONVERT_CANCELLED);
  EXPECT_EQ(last.error_message(), "cancelled from the page");
  // The builder's own handler ended it (its temporaries removed), not SIGKILL.
  std::vector<std::string> log(last.log().begin(), last.log().end());
  EXPECT_NE(std::find(log.begin(), log.end(), "graph-ascend: stopped by SIGTERM (unfinished files removed)"),
            log.end())
      << last.DebugString();
  for (const std::string& line : log) EXPECT_EQ(line.find("SIGKILL"), std::string::npos) << line;
  EXPECT_FALSE(fs::exists(dir_.Join("big")));
  EXPECT_EQ(Leftovers(dir_.path()), std::vector<std::string>{});
}

// The server's death reaches its builder (the parent-death signal is SIGTERM)
// however the server masked its own signals: bin/graph-ascend-server itself,
// killed with SIGKILL while its builder is held in the reading stage. This
// process adopts the orphan (a child subreaper) to see how it ended.
TEST_F(ConvertTest, TheServersDeathStopsItsBuilderWhileItReads) {
  const char* bin = std::getenv("GA_BINARY_DIR");
  const std::string server_binary = std::string(bin ? bin : "build") + "/bin/graph-ascend-server";
  ASSERT_EQ(access(server_binary.c_str(), X_OK), 0) << server_binary;
  fs::copy(ScaledDump(), dir_.Join("scaled"), fs::copy_options::recursive);
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  struct Unreap {
    ~Unreap() { prctl(PR_SET_CHILD_SUBREAPER, 0); }
  } unreap;
  const std::string socket = sock_.Join("real.sock"), cache = sock_.Join("cache"), log = sock_.Join("server.log");
  const std::string script = HeldBuilder(sock_.path()).path();  // written before the fork
  pid_t server = fork();
  ASSERT_GE(server, 0);
  if (server == 0) {
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(out, 1);
    dup2(out, 2);
    execl(server_binary.c_str(), server_binary.c_str(), "--logdir", dir_.path().c_str(), "--socket", socket.c_str(),
          "--cache-dir", cache.c_str(), "--allow-convert", "on", "--builder", script.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  HeldBuilder builder(sock_.path(), server);
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reap_server{server};
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  ASSERT_TRUE(channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(60)));
  auto stub = GraphService::NewStub(channel);
  ConvertJob started;
  {
    grpc::ClientContext ctx;
    grpc::Status st = stub->ConvertStart(&ctx, Request("scaled/npu", "scaled/bench", "big"), &started);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  ASSERT_TRUE(builder.Run([&] {
    int fd = open(("/proc/" + std::to_string(builder.Find()) + "/fd/2").c_str(), O_RDONLY | O_NONBLOCK);
    int unread = -1;
    if (fd >= 0) ioctl(fd, FIONREAD, &unread);
    if (fd >= 0) close(fd);
    ConvertJob j = Listed(stub.get(), started.id());
    return unread == 0 && j.state() == CONVERT_RUNNING && j.stage() == "reading dumps";
  })) << Listed(stub.get(), started.id()).DebugString();
  const pid_t held = builder.Find();
  EXPECT_FALSE(InMask(held, "SigBlk:", SIGTERM)) << "the builder inherited the server's mask";
  ASSERT_EQ(kill(server, SIGKILL), 0);
  ASSERT_EQ(waitpid(server, nullptr, 0), server);
  builder.ContinueWhenTerminated();  // the parent-death signal is pending
  int status = 0;
  ASSERT_EQ(waitpid(held, &status, 0), held) << "adopted by this process";
  ASSERT_TRUE(WIFSIGNALED(status)) << "it went on to the end: exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  // Its staging folder stays for the next server to remove (RemoveStaleStaging), empty of results.
  for (const std::string& left : Leftovers(dir_.path())) {
    EXPECT_EQ(left.find(".vis"), std::string::npos) << left;
    EXPECT_EQ(left.find(".tmp-"), std::string::npos) << left;
  }
  EXPECT_FALSE(fs::exists(dir_.Join("big")));
}

TEST_F(ConvertTest, AJobNobodyWatchesIsCancelled) {
  HeldBuilder builder(sock_.path());
  ServiceOptions options;
  options.convert_orphan_seconds = 1;
  options.builder = builder.path();
  Serve(options);
  ConvertJob job;
  ASSERT_TRUE(Start(Request("gpt/npu", "gpt/bench", "orphan"), &job).ok());
  // No ConvertProgress: the page that started it has gone. The builder is
  // held (stopped before it starts), so the job outlasts the orphan timeout
  // however fast the builder is.
  ASSERT_GT(builder.Find(), 0);
  builder.ContinueWhenTerminated();
  ConvertJob now;
  for (int i = 0; i < 600; ++i) {
    grpc::ClientContext ctx;
    ConvertListRequest lr;
    lr.set_session("tab1");
    ConvertListReply list;
    ASSERT_TRUE(stub_->ConvertList(&ctx, lr, &list).ok());
    now = list.jobs(0);
    if (now.state() != CONVERT_QUEUED && now.state() != CONVERT_RUNNING) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(now.state(), CONVERT_CANCELLED);
  EXPECT_NE(now.error_message().find("no page watched"), std::string::npos) << now.error_message();
  EXPECT_FALSE(fs::exists(dir_.Join("orphan")));
}

}  // namespace
}  // namespace graph_ascend::service
