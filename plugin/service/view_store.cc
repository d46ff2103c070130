#include "view_store.h"

#include <set>

namespace graph_ascend::service {

std::shared_ptr<View> ViewStore::Get(const std::string& session, uint64_t file_id, int side, int32_t micro_step) {
  std::string key = session;
  key += '\0';
  key += std::to_string(file_id) + "/" + std::to_string(side) + "/" + std::to_string(micro_step);
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> l(mu_);
  auto it = slots_.find(key);
  if (it != slots_.end()) {
    it->second.used = now;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    auto view = it->second.view;
    EvictLocked(now);
    return view;
  }
  lru_.push_front(key);
  Slot slot{std::make_shared<View>(micro_step), session, now, lru_.begin()};
  auto view = slot.view;
  slots_.emplace(key, std::move(slot));
  EvictLocked(now);
  return view;
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
