// Interned strings. Each distinct string is stored once in large blocks and
// named by a dense 32-bit id in the order of first interning; id 0 is the
// empty string. Names, item keys, dtypes, shapes and stack lines repeat
// millions of times in a large dump, so the graph stores ids instead of
// std::string.
//
// The table is flat open addressing (linear probing over 64-bit slots of
// hash tag and id), so a lookup is one hash, usually one cache line of the
// table and one compare of the stored string.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
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

  // The 64-bit hash the table uses (exposed for tests of its spread).
  static uint64_t Hash(std::string_view s);

 private:
  struct FreeSlots {
    void operator()(uint64_t* p) const;
  };

  std::string_view Store(std::string_view s);
  // Looks `s` (of hash `h`) up in the table, adding it if new.
  uint32_t InternHashed(std::string_view s, uint64_t h);
  void Grow();
  // A table of `n` empty slots (n a power of two).
  static std::unique_ptr<uint64_t[], FreeSlots> NewSlots(size_t n);

  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  size_t bytes_ = 0;
  std::vector<std::string_view> strings_;
  // Per slot: the high 32 bits of the hash, then the id; kEmpty when free.
  // A string's home slot is its tag modulo the table size, so growing needs
  // no string access. Large tables sit on huge pages where the kernel
  // allows (probes are random: with 4 KiB pages each would also miss the
  // TLB).
  std::unique_ptr<uint64_t[], FreeSlots> slots_;
  size_t mask_ = 0;  // the table has mask_ + 1 slots, a power of two

  // The short-string cache. (first word, last word, size) identify a string
  // of up to 16 bytes completely, so such a hit needs no memcmp; longer ones
  // compare the rest of `text` (which points into the pool).
  struct CacheSlot {
    uint64_t head = 0;
    uint64_t tail = 0;
    const char* text = nullptr;
    uint32_t size = 0;
    uint32_t id = 0;
  };
  static constexpr size_t kCacheSlots = 4096;
  static constexpr size_t kShortMax = 64;
  std::vector<CacheSlot> cache_ = std::vector<CacheSlot>(kCacheSlots);
};

}  // namespace graph_ascend
