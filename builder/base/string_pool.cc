#include "base/string_pool.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>

#include "base/huge_pages.h"

namespace graph_ascend {

namespace {

static_assert(std::endian::native == std::endian::little, "the word loads below assume little-endian bytes");

constexpr size_t kBlockSize = 1u << 20;
constexpr uint64_t kEmpty = ~uint64_t{0};
constexpr uint64_t kMul1 = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMul2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kMul3 = 0x165667B19E3779F9ull;

uint64_t Load64(const char* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

uint64_t Load32(const char* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

// A 64x64 -> 128 bit multiply folded to 64 bits: a cheap, well-spreading mix.
uint64_t Fold(uint64_t a, uint64_t b) {
  unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// The first and last word of a string of at most 16 bytes, which together
// hold every byte of it (words overlap when it is shorter than 16).
inline void Words(const char* p, size_t n, uint64_t* head, uint64_t* tail) {
  if (n >= 8) {
    *head = Load64(p);
    *tail = Load64(p + n - 8);
  } else if (n >= 4) {
    *head = Load32(p);
    *tail = Load32(p + n - 4);
  } else if (n > 0) {
    *head = static_cast<unsigned char>(p[0]) | static_cast<uint64_t>(static_cast<unsigned char>(p[n >> 1])) << 8 |
            static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16;
    *tail = 0;
  } else {
    *head = *tail = 0;
  }
}

uint64_t HashWords(uint64_t head, uint64_t tail, uint64_t seed) { return Fold(head ^ kMul1, tail ^ seed ^ kMul2); }

}  // namespace

uint64_t StringPool::Hash(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t seed = n * kMul3;
  uint64_t head, tail;
  if (n <= 16) {
    Words(p, n, &head, &tail);
    return HashWords(head, tail, seed);
  }
  while (n > 16) {
    seed = Fold(Load64(p) ^ kMul1, Load64(p + 8) ^ seed);
    p += 16;
    n -= 16;
  }
  return HashWords(Load64(p + n - 16), Load64(p + n - 8), seed);
}

void StringPool::FreeSlots::operator()(uint64_t* p) const { free(p); }

std::unique_ptr<uint64_t[], StringPool::FreeSlots> StringPool::NewSlots(size_t n) {
  constexpr size_t kHugePage = size_t{2} << 20;
  size_t bytes = n * sizeof(uint64_t);
  void* p = nullptr;
  if (bytes >= kHugePage) {
    p = aligned_alloc(kHugePage, bytes);  // bytes is a multiple of kHugePage
    if (p != nullptr) AdviseHugePages(p, bytes);
  } else {
    p = malloc(bytes);
  }
  if (p == nullptr) throw std::bad_alloc();
  uint64_t* slots = static_cast<uint64_t*>(p);
  std::fill(slots, slots + n, kEmpty);
  return std::unique_ptr<uint64_t[], FreeSlots>(slots);
}

StringPool::StringPool() : slots_(NewSlots(1024)), mask_(1023) {
  strings_.push_back(std::string_view());
  uint64_t tag = Hash(std::string_view()) >> 32;
  slots_[tag & mask_] = tag << 32;  // id 0
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

void StringPool::Grow() {
  size_t old_size = mask_ + 1;
  auto old = NewSlots(old_size * 2);
  old.swap(slots_);
  mask_ = old_size * 2 - 1;
  for (size_t k = 0; k < old_size; ++k) {
    uint64_t slot = old[k];
    if (slot == kEmpty) continue;
    size_t i = (slot >> 32) & mask_;
    while (slots_[i] != kEmpty) i = (i + 1) & mask_;
    slots_[i] = slot;
  }
}

uint32_t StringPool::InternHashed(std::string_view s, uint64_t h) {
  uint64_t tag = h >> 32;
  size_t i = tag & mask_;
  for (;;) {
    uint64_t slot = slots_[i];
    if (slot == kEmpty) break;
    if ((slot >> 32) == tag) {
      uint32_t id = static_cast<uint32_t>(slot);
      if (strings_[id] == s) return id;
    }
    i = (i + 1) & mask_;
  }
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(Store(s));
  slots_[i] = tag << 32 | id;
  if (strings_.size() * 2 > mask_ + 1) Grow();
  return id;
}

uint32_t StringPool::Intern(std::string_view s) { return InternHashed(s, Hash(s)); }

uint32_t StringPool::InternShort(std::string_view s) {
  size_t n = s.size();
  if (n > kShortMax) return Intern(s);
  uint64_t head, tail, h;
  if (n <= 16) {
    Words(s.data(), n, &head, &tail);
    h = HashWords(head, tail, n * kMul3);
  } else {
    head = Load64(s.data());
    tail = Load64(s.data() + n - 8);
    h = Hash(s);
  }
  CacheSlot& slot = cache_[h & (kCacheSlots - 1)];
  if (slot.size == n && slot.head == head && slot.tail == tail &&
      (n <= 16 || memcmp(slot.text + 8, s.data() + 8, n - 16) == 0)) {
    return slot.id;
  }
  uint32_t id = InternHashed(s, h);
  slot.head = head;
  slot.tail = tail;
  slot.text = strings_[id].data();
  slot.size = static_cast<uint32_t>(n);
  slot.id = id;
  return id;
}

int64_t StringPool::Find(std::string_view s) const {
  uint64_t tag = Hash(s) >> 32;
  size_t i = tag & mask_;
  for (;;) {
    uint64_t slot = slots_[i];
    if (slot == kEmpty) return -1;
    if ((slot >> 32) == tag && strings_[static_cast<uint32_t>(slot)] == s) return static_cast<uint32_t>(slot);
    i = (i + 1) & mask_;
  }
}

}  // namespace graph_ascend
