// View state per client session: one ViewState per (session, file, side,
// micro step), so two browser tabs never disturb each other.
//
// Bounded: at most `max_views` views holding at most `max_bytes` of layout;
// the least recently used go first, and views idle for longer than
// `idle_seconds` are dropped. A dropped view comes back fresh (root expanded).
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

namespace graph_ascend::service {

struct View {
  std::mutex mu;  // guards state
  ViewState state;
  std::atomic<size_t> bytes{0};  // state.MemoryBytes() after the last request, for the store's budget
  explicit View(int32_t micro_step) : state(micro_step) {}
};

class ViewStore {
 public:
  ViewStore(size_t max_views, size_t max_bytes, int64_t idle_seconds)
      : max_views_(max_views), max_bytes_(max_bytes), idle_(idle_seconds) {}

  // The view of the key, created (root expanded) when missing. `file_id`
  // identifies the open file: a file opened again starts fresh views.
  std::shared_ptr<View> Get(const std::string& session, uint64_t file_id, int side, int32_t micro_step);

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

  const size_t max_views_;
  const size_t max_bytes_;
  const int64_t idle_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Slot> slots_;
  std::list<std::string> lru_;  // most recent first
};

}  // namespace graph_ascend::service
