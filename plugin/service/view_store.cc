#include "view_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <set>

#include "base/mapped_file.h"
#include "config_files.h"

namespace graph_ascend::service {
namespace {

// A journal is rewritten as the view's expanded nodes once it holds this many
// lines, then each time it doubles: it stays in proportion to the view, and
// the rewrites cost O(1) a line.
constexpr size_t kCompactLines = 4096;
constexpr size_t kMaxJournalBytes = size_t{256} << 20;

const char* OpName(ViewOp op) {
  switch (op) {
    case ViewOp::kExpand:
      return "expand";
    case ViewOp::kCollapse:
      return "collapse";
    case ViewOp::kReveal:
      return "reveal";
    case ViewOp::kGet:
      break;
  }
  return "";
}

std::string Line(ViewOp op, std::string_view name) {
  nlohmann::json j = {{"op", OpName(op)}, {"node", std::string(name)}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void Warn(const std::string& what) { std::fprintf(stderr, "graph-ascend-server: warning: %s\n", what.c_str()); }

// Appends `text` (whole lines) to `path`; false when it could not.
bool Append(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < text.size()) {
    ssize_t w = write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  close(fd);
  return done == text.size();
}

// Removes the journals in `dir` not written for `idle_seconds` (their sessions are gone).
void RemoveIdleJournals(const std::string& dir, int64_t idle_seconds) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  const time_t now = time(nullptr);
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 8 || name.compare(name.size() - 8, 8, ".journal") != 0) continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && now - st.st_mtime > idle_seconds) unlink(path.c_str());
  }
  closedir(d);
}

}  // namespace

ViewStore::ViewStore(size_t max_views, size_t max_bytes, int64_t idle_seconds, std::string journal_dir)
    : max_views_(max_views), max_bytes_(max_bytes), idle_(idle_seconds), journal_dir_(std::move(journal_dir)) {
  if (journal_dir_.empty()) return;
  if (mkdir(journal_dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    Warn(journal_dir_ + ": cannot create the view journal folder; views will not outlive the server");
  }
  RemoveIdleJournals(journal_dir_, idle_seconds);
}

std::string ViewStore::JournalOf(const std::string& session, const std::string& file, int side,
                                 int32_t micro_step) const {
  std::string key = session;
  key += '\0';
  key += file + '\0' + std::to_string(side) + "/" + std::to_string(micro_step);
  return journal_dir_ + "/" + KeyHash(key) + ".journal";
}

std::shared_ptr<View> ViewStore::Get(const std::string& session, uint64_t file_id, int side, int32_t micro_step,
                                     const std::string& file, const SideGraph* g) {
  std::string key = session;
  key += '\0';
  key += std::to_string(file_id) + "/" + std::to_string(side) + "/" + std::to_string(micro_step);
  auto now = std::chrono::steady_clock::now();
  std::shared_ptr<View> view;
  std::unique_lock<std::mutex> replaying;  // the new view's lock, held while its journal replays
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = slots_.find(key);
    if (it != slots_.end()) {
      it->second.used = now;
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      view = it->second.view;
      EvictLocked(now);
      return view;
    }
    lru_.push_front(key);
    Slot slot{std::make_shared<View>(micro_step), session, now, lru_.begin()};
    view = slot.view;
    if (!journal_dir_.empty() && g != nullptr) {
      view->journal = JournalOf(session, file, side, micro_step);
      ++journal_users_[view->journal];
      // Other requests for this view wait on its lock until the replay is done.
      replaying = std::unique_lock<std::mutex>(view->mu);
    }
    slots_.emplace(key, std::move(slot));
    EvictLocked(now);
  }
  if (replaying.owns_lock()) view->journal_lines = ReplayViewJournal(view->journal, *g, &view->state);
  return view;
}

void ViewStore::Record(View* view, const SideGraph& g, ViewOp op, uint32_t node) {
  if (view->journal.empty() || op == ViewOp::kGet) return;
  if (!Append(view->journal, Line(op, g.name(node)))) {
    Warn(view->journal + ": cannot append to the view journal");
    return;
  }
  if (++view->journal_lines < view->compact_at) return;
  std::string snapshot;
  size_t expanded = 0;
  for (uint32_t n = 0; n < g.size(); ++n) {
    if (!view->state.IsExpanded(n)) continue;
    snapshot += Line(ViewOp::kExpand, g.name(n));  // Expand reveals ancestors: any order gives the same view
    ++expanded;
  }
  view->compact_at = std::max(kCompactLines, 2 * expanded);
  Status s = WriteAtomically(view->journal, view->journal, snapshot);
  if (!s.ok()) return Warn(s.error().ToString());
  view->journal_lines = expanded;
}

size_t ReplayViewJournal(const std::string& path, const SideGraph& g, ViewState* state) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  auto read = ReadFileToString(path, kMaxJournalBytes);
  if (!read.ok()) {
    Warn(read.error().ToString() + " (the view starts fresh)");
    unlink(path.c_str());
    return 0;
  }
  const std::string& text = *read;
  size_t start = 0, lines = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {  // the server died mid-append
      Warn(path + ": torn last line ignored");
      if (truncate(path.c_str(), static_cast<off_t>(start)) != 0) Warn(path + ": cannot cut its torn last line");
      break;
    }
    nlohmann::json j = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(start),
                                             text.begin() + static_cast<std::ptrdiff_t>(end), nullptr, false);
    start = end + 1;
    ++lines;
    if (!j.is_object() || !j.contains("op") || !j["op"].is_string() || !j.contains("node") || !j["node"].is_string()) {
      continue;
    }
    int32_t node = g.Find(j["node"].get<std::string>());
    if (node < 0) continue;  // the file changed: a node gone
    const std::string op = j["op"].get<std::string>();
    auto n = static_cast<uint32_t>(node);
    Status s = op == "expand" ? state->Expand(g, n) : op == "collapse" ? state->Collapse(g, n) : state->Reveal(g, n);
    (void)s;  // a node that cannot take the op (no children) leaves the view as it is
  }
  return lines;
}

void ViewStore::EvictLocked(std::chrono::steady_clock::time_point now) {
  size_t bytes = 0;
  for (const auto& [key, slot] : slots_) bytes += slot.view->bytes.load();
  // The most recent view (the one being asked for) always stays.
  while (lru_.size() > 1) {
    auto it = slots_.find(lru_.back());
    bool idle = now - it->second.used > std::chrono::seconds(idle_);
    if (slots_.size() <= max_views_ && bytes <= max_bytes_ && !idle) break;
    bytes -= it->second.view->bytes.load();
    // A dropped view comes back fresh, after a restart too: its journal goes
    // unless another view (the same file opened again) still writes it.
    const std::string& journal = it->second.view->journal;
    if (!journal.empty() && --journal_users_[journal] == 0) {
      journal_users_.erase(journal);
      unlink(journal.c_str());
    }
    slots_.erase(it);
    lru_.pop_back();
  }
}

size_t ViewStore::views() const {
  std::lock_guard<std::mutex> l(mu_);
  return slots_.size();
}

size_t ViewStore::sessions() const {
  std::lock_guard<std::mutex> l(mu_);
  std::set<std::string> s;
  for (const auto& [k, slot] : slots_) s.insert(slot.session);
  return s.size();
}

}  // namespace graph_ascend::service
