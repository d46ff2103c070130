#include "base/temp_files.h"

#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace graph_ascend {
namespace {

// Fixed storage: the handler may only read memory and call unlink() / rmdir().
constexpr int kSlots = 64;
constexpr int kFree = 0, kFilling = 1, kArmed = 2;
std::atomic<int> g_state[kSlots];
char g_path[kSlots][PATH_MAX];

// Folders made by this process, in order (never unregistered: a folder that
// holds the run's results is not empty, and rmdir leaves it).
constexpr int kFolders = 32;
std::atomic<int> g_folders{0};
std::atomic<bool> g_folder_set[kFolders];
char g_folder[kFolders][PATH_MAX];

// The default action of each ends the process.
constexpr int kSignals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGPIPE,   SIGXFSZ,
                            SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF};

// "graph-ascend: stopped by SIGTERM" on stderr: whoever reads the log (the
// service's conversion log, a batch system's) sees why the run ended. Not for
// SIGPIPE: output piped into `head` is an ordinary end, not news.
void SayStopped(int sig) {
  if (sig == SIGPIPE) return;
  const char* name = sig == SIGINT    ? "SIGINT"
                     : sig == SIGTERM ? "SIGTERM"
                     : sig == SIGHUP  ? "SIGHUP"
                     : sig == SIGXFSZ ? "SIGXFSZ"
                     : sig == SIGUSR1 ? "SIGUSR1"
                     : sig == SIGUSR2 ? "SIGUSR2"
                     : sig == SIGALRM ? "SIGALRM"
                     : sig == SIGVTALRM ? "SIGVTALRM"
                                        : "SIGPROF";
  char line[96] = "graph-ascend: stopped by ";
  size_t n = strlen(line);
  for (const char* c = name; *c != 0; ++c) line[n++] = *c;
  const char tail[] = " (unfinished files removed)\n";
  memcpy(line + n, tail, sizeof(tail) - 1);
  n += sizeof(tail) - 1;
  // stderr may be a pipe nobody reads any more (the server that started us
  // died): its SIGPIPE, pending until this handler returns, would end the
  // process first (lower number) and hide the signal that did.
  signal(SIGPIPE, SIG_IGN);
  ssize_t ignored = write(2, line, n);
  (void)ignored;
}

void OnSignal(int sig) {
  int saved = errno;
  RemoveTemporariesNow();
  RemoveEmptyCreatedFolders();
  SayStopped(sig);
  errno = saved;
  // Die of the signal as if there were no handler (the exit status says so).
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void RemoveTemporariesNow() {
  for (int i = 0; i < kSlots; ++i) {
    if (g_state[i].load() == kArmed) unlink(g_path[i]);
  }
}

void RemoveTemporariesOnSignals() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    for (int s : kSignals) sigaddset(&sa.sa_mask, s);
    for (int s : kSignals) {
      struct sigaction old;
      // A signal ignored by whoever started us (nohup, a shell's trap '') stays ignored.
      if (sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      sigaction(s, &sa, nullptr);
    }
  });
}

void RegisterCreatedFolder(const std::string& dir) {
  if (dir.empty() || dir.size() >= PATH_MAX) return;
  int i = g_folders.fetch_add(1);
  if (i >= kFolders) return;  // past the table: left as before
  memcpy(g_folder[i], dir.c_str(), dir.size() + 1);
  g_folder_set[i].store(true);
}

void RemoveEmptyCreatedFolders() {
  int n = g_folders.load();
  if (n > kFolders) n = kFolders;
  for (int i = n - 1; i >= 0; --i) {
    if (g_folder_set[i].load()) rmdir(g_folder[i]);  // fails, as it should, when not empty
  }
}

Status MakeOutputFolders(const std::string& dir, unsigned mode) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    struct stat st;
    if (stat(part.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return Error{part, "", "output path is not a directory"};
      continue;
    }
    if (mkdir(part.c_str(), mode) == 0) {
      RegisterCreatedFolder(part);
    } else if (errno != EEXIST) {
      return Error{part, "", std::string("cannot create output directory: ") + strerror(errno)};
    }
  }
  return Status::Ok();
}

TemporaryFile::TemporaryFile(const std::string& path) {
  if (path.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (g_state[i].compare_exchange_strong(expected, kFilling)) {
      memcpy(g_path[i], path.c_str(), path.size() + 1);
      g_state[i].store(kArmed);
      slot_ = i;
      return;
    }
  }
}

void TemporaryFile::Release() {
  if (slot_ >= 0) g_state[slot_].store(kFree);
  slot_ = -1;
}

Status WriteFileReplacing(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  TemporaryFile temp(tmp);
  FILE* f = fopen(tmp.c_str(), "wb");
  if (f == nullptr) return Error{path, "", std::string("cannot write: ") + strerror(errno)};
  bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return Error{path, "", std::string("cannot write: ") + strerror(err)};
  }
  temp.Release();
  return Status::Ok();
}

}  // namespace graph_ascend
