// View state per client session: one ViewState per (session, file, side,
// micro step), so two browser tabs never disturb each other.
//
// Bounded: at most `max_views` views holding at most `max_bytes` of layout;
// the least recently used go first, and views idle for longer than
// `idle_seconds` are dropped. A dropped view comes back fresh (root expanded).
//
// Durable: with a journal folder, every Expand, Collapse and Reveal a view
// takes is appended to its journal there (one JSON line, written before the
// reply; no fsync: it is the server dying that it outlives, not the machine),
// and a view created on a fresh server (after a crash, a kill -9) replays its
// journal, so a restart loses no session's view. A dropped view's journal
// goes with it; journals idle for longer than `idle_seconds` are removed when
// a store opens.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "layout.h"
#include "side_graph.h"

namespace graph_ascend::service {

struct View {
  std::mutex mu;  // guards state and the journal's counts
  ViewState state;
  std::atomic<size_t> bytes{0};  // state.MemoryBytes() after the last request, for the store's budget
  std::string journal;           // "" when the store keeps none
  size_t journal_lines = 0;
  size_t compact_at = 4096;  // lines: then the journal is rewritten as the expanded nodes
  explicit View(int32_t micro_step) : state(micro_step) {}
};

enum class ViewOp { kGet, kExpand, kCollapse, kReveal };

class ViewStore {
 public:
  // `journal_dir`: "" for views that do not outlive the process.
  ViewStore(size_t max_views, size_t max_bytes, int64_t idle_seconds, std::string journal_dir = "");

  // The view of the key, created (root expanded) when missing. `file_id`
  // identifies the open file: a file opened again starts fresh views. With a
  // journal folder and `g` (the view's side of `file`, the file's name), a
  // view created here replays its journal first.
  std::shared_ptr<View> Get(const std::string& session, uint64_t file_id, int side, int32_t micro_step,
                            const std::string& file = "", const SideGraph* g = nullptr);

  // Appends `op` on `node`, just applied to `view` (under view->mu), to its journal.
  void Record(View* view, const SideGraph& g, ViewOp op, uint32_t node);

  size_t views() const;
  size_t sessions() const;

 private:
  struct Slot {
    std::shared_ptr<View> view;
    std::string session;
    std::chrono::steady_clock::time_point used;
    std::list<std::string>::iterator lru;
  };
  void EvictLocked(std::chrono::steady_clock::time_point now);
  std::string JournalOf(const std::string& session, const std::string& file, int side, int32_t micro_step) const;

  const size_t max_views_;
  const size_t max_bytes_;
  const int64_t idle_;
  const std::string journal_dir_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Slot> slots_;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, int> journal_users_;  // journal -> the slots writing it
};

// Replays the journal at `path` into `state` over `g`: ops on nodes gone are
// skipped; a torn last line is cut off. Returns the lines read.
size_t ReplayViewJournal(const std::string& path, const SideGraph& g, ViewState* state);

}  // namespace graph_ascend::service
