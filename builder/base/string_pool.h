// Interned strings. Each distinct string is stored once in large blocks and
// named by a dense 32-bit id; id 0 is the empty string. Names, item keys,
// dtypes, shapes and stack lines repeat millions of times in a large dump,
// so the graph stores ids instead of std::string.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace graph_ascend {

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;

  // The id of `s`, adding it if new.
  uint32_t Intern(std::string_view s);
  // Intern() through a small direct-mapped cache: for the short strings a
  // dump repeats millions of times (field names, dtypes, shapes, item keys),
  // which would otherwise each cost a probe of the large table.
  uint32_t InternShort(std::string_view s);
  // The id of `s`, or -1 if it was never interned.
  int64_t Find(std::string_view s) const;
  std::string_view Get(uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  std::string_view Store(std::string_view s);

  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  size_t bytes_ = 0;
  std::vector<std::string_view> strings_;
  std::unordered_map<std::string_view, uint32_t> ids_;

  struct CacheSlot {
    std::string_view text;  // points into the pool
    uint32_t id = 0;
  };
  static constexpr size_t kCacheSlots = 4096;
  std::vector<CacheSlot> cache_ = std::vector<CacheSlot>(kCacheSlots);
};

}  // namespace graph_ascend
