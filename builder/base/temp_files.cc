#include "base/temp_files.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace graph_ascend {
namespace {

// Fixed storage: the handler may only read memory and call unlink().
constexpr int kSlots = 64;
constexpr int kFree = 0, kFilling = 1, kArmed = 2;
std::atomic<int> g_state[kSlots];
char g_path[kSlots][PATH_MAX];

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

void OnSignal(int sig) {
  RemoveTemporariesNow();
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
    for (int s : kSignals) sigaction(s, &sa, nullptr);
  });
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

}  // namespace graph_ascend
