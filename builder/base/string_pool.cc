#include "base/string_pool.h"

#include <cstring>

namespace graph_ascend {

namespace {
constexpr size_t kBlockSize = 1u << 20;
}

StringPool::StringPool() {
  strings_.push_back(std::string_view());
  ids_.emplace(std::string_view(), 0);
}

std::string_view StringPool::Store(std::string_view s) {
  if (s.size() > block_size_ - block_used_) {
    size_t size = s.size() > kBlockSize / 4 ? s.size() : kBlockSize;
    blocks_.emplace_back(new char[size]);
    block_size_ = size;
    block_used_ = 0;
  }
  char* p = blocks_.back().get() + block_used_;
  memcpy(p, s.data(), s.size());
  block_used_ += s.size();
  bytes_ += s.size();
  return std::string_view(p, s.size());
}

uint32_t StringPool::Intern(std::string_view s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  std::string_view stored = Store(s);
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(stored);
  ids_.emplace(stored, id);
  return id;
}

uint32_t StringPool::InternShort(std::string_view s) {
  if (s.size() > 64) return Intern(s);
  uint32_t h = 2166136261u ^ static_cast<uint32_t>(s.size());
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  CacheSlot& slot = cache_[h & (kCacheSlots - 1)];
  if (slot.text.size() == s.size() && slot.text == s && (slot.id != 0 || s.empty())) return slot.id;
  uint32_t id = Intern(s);
  slot.text = strings_[id];
  slot.id = id;
  return id;
}

int64_t StringPool::Find(std::string_view s) const {
  auto it = ids_.find(s);
  return it == ids_.end() ? -1 : static_cast<int64_t>(it->second);
}

}  // namespace graph_ascend
