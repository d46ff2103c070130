#include "builder_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace graph_ascend::service {
namespace {

// A line longer than this is cut (a tensor log line never is).
constexpr size_t kMaxLine = 64 << 10;

}  // namespace

Result<BuilderChild> BuilderChild::Start(const std::vector<std::string>& argv, const std::string& cwd) {
  if (argv.empty()) return Error{"", "", "no command"};
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Error{argv[0], "", std::string("pipe: ") + strerror(errno)};
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return Error{argv[0], "", std::string("pipe: ") + strerror(errno)};
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec (the server has threads).
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    // The server blocks SIGTERM, SIGINT, SIGHUP on every thread (one thread
    // sigwaits) and ignores SIGPIPE; a mask and an ignored signal outlive
    // exec. The builder starts as from a shell: with SIGTERM blocked, a
    // cancel or the server's death (the SIGTERM above) reached it only as the
    // SIGKILL 0.8 s later, or never.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, nullptr);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    syscall(SYS_close_range, 3U, ~0U, 0U);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    execv(args[0], args.data());
    const char msg[] = "graph-ascend: error: cannot start the builder executable\n";
    ssize_t ignored = write(2, msg, sizeof(msg) - 1);
    (void)ignored;
    _exit(127);
  }
  int fork_errno = errno;
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    return Error{argv[0], "", std::string("fork: ") + strerror(fork_errno)};
  }
  setpgid(pid, pid);  // also from here: no race with a Terminate() right after
  return BuilderChild(pid, out[0], err[0]);
}

BuilderChild::BuilderChild(BuilderChild&& o) noexcept
    : pid_(o.pid_), fds_{o.fds_[0], o.fds_[1]}, reaped_(o.reaped_), status_(o.status_) {
  pending_[0] = std::move(o.pending_[0]);
  pending_[1] = std::move(o.pending_[1]);
  o.pid_ = -1;
  o.fds_[0] = o.fds_[1] = -1;
}

BuilderChild::~BuilderChild() {
  if (pid_ > 0 && !reaped_) {
    Kill();
    Wait();
  }
  for (int fd : fds_) {
    if (fd >= 0) close(fd);
  }
}

bool BuilderChild::Read(int timeout_ms, const std::function<void(bool, const std::string&)>& line) {
  pollfd p[2];
  int n = 0;
  int which[2];
  for (int i = 0; i < 2; ++i) {
    if (fds_[i] < 0) continue;
    p[n] = {fds_[i], POLLIN, 0};
    which[n++] = i;
  }
  if (n == 0) return false;
  int r = poll(p, n, timeout_ms);
  if (r <= 0) return true;
  for (int k = 0; k < n; ++k) {
    if ((p[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    int i = which[k];
    char buf[16384];
    ssize_t got = read(fds_[i], buf, sizeof(buf));
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      if (!pending_[i].empty()) line(i == 1, pending_[i]);
      pending_[i].clear();
      close(fds_[i]);
      fds_[i] = -1;
      continue;
    }
    std::string& acc = pending_[i];
    acc.append(buf, static_cast<size_t>(got));
    size_t start = 0, nl;
    while ((nl = acc.find('\n', start)) != std::string::npos) {
      line(i == 1, acc.substr(start, nl - start));
      start = nl + 1;
    }
    acc.erase(0, start);
    if (acc.size() > kMaxLine) {
      line(i == 1, acc.substr(0, kMaxLine));
      acc.clear();
    }
  }
  return fds_[0] >= 0 || fds_[1] >= 0;
}

void BuilderChild::Terminate() {
  if (pid_ > 0 && !reaped_) kill(-pid_, SIGTERM);
}

void BuilderChild::Kill() {
  if (pid_ > 0 && !reaped_) kill(-pid_, SIGKILL);
}

int BuilderChild::Wait() {
  if (pid_ <= 0) return -1;
  if (!reaped_) {
    int st = 0;
    while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
  }
  return status_;
}

}  // namespace graph_ascend::service
