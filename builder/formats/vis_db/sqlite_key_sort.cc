// Index keys in SQLite's order, spilled and merged (sqlite_key_sort.h).
#include "formats/vis_db/sqlite_key_sort.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <new>

#include "formats/vis_db/sqlite_btree.h"

namespace graph_ascend::formats::sqlite_file {
namespace {

uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

uint64_t LoadBigEndian(const uint8_t* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

// An entry: [u32 columns' length][columns][rowid: 1 + n bytes][a type byte a column].
// The bytes compared: the columns and the rowid.
size_t Compared(const uint8_t* e) {
  const uint32_t columns = Load32(e);
  return size_t{columns} + 1 + e[4 + columns];
}
size_t EntrySize(const uint8_t* e, size_t columns) { return 4 + Compared(e) + columns; }
std::string_view KeyOf(const uint8_t* e, size_t columns) {
  return {reinterpret_cast<const char*>(e + 4), Compared(e) + columns};
}
// The key without its rowid: what a unique index keeps unique.
std::string_view Columns(const uint8_t* e) { return {reinterpret_cast<const char*>(e + 4), Load32(e)}; }

bool KeyLess(const uint8_t* a, const uint8_t* b) {
  const size_t la = Compared(a), lb = Compared(b);
  const int c = memcmp(a + 4, b + 4, std::min(la, lb));
  return c < 0 || (c == 0 && la < lb);
}

// A key with 16 of its bytes held beside it, big-endian: comparing two
// compares the bytes without reading either key (a random read each).
struct Digit {
  uint64_t a, b;
  const uint8_t* e;
  size_t size;  // Compared(e)
};

// Whether x's key sorts before y's, both equal in their first `from` bytes.
bool DigitLessFrom(const Digit& x, const Digit& y, size_t from) {
  const size_t n = std::min(x.size, y.size);
  const int c = n > from ? memcmp(x.e + 4 + from, y.e + 4 + from, n - from) : 0;
  return c < 0 || (c == 0 && x.size < y.size);
}

uint64_t Load8(const uint8_t* e, size_t size, size_t from) {
  if (from + 8 <= size) {
    uint64_t v;
    memcpy(&v, e + 4 + from, 8);
    return __builtin_bswap64(v);
  }
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | (from + i < size ? e[4 + from + i] : 0);
  return v;
}

// How many first bytes all `n` keys share, `depth` or more (they share those).
size_t SharedFrom(const Digit* keys, size_t n, size_t depth) {
  const uint8_t* first = keys[0].e;
  size_t shared = keys[0].size;
  for (size_t i = 1; i < n && shared > depth; ++i) {
    if (i + 8 < n) __builtin_prefetch(keys[i + 8].e + 4 + depth);  // scattered keys: ask ahead
    const uint8_t* e = keys[i].e;
    const size_t m = std::min(shared, keys[i].size);
    size_t j = depth;
    while (j + 8 <= m && memcmp(first + 4 + j, e + 4 + j, 8) == 0) j += 8;
    while (j < m && first[4 + j] == e[4 + j]) ++j;
    shared = j;
  }
  return std::max(shared, depth);
}

// Sorts `keys`, all equal in their first `depth` bytes, 16 bytes at a time:
// by the digit at `depth`, then each group of equal digits by the next one.
// Keys with a long shared start (names of one module, ancestor lists) are
// compared 16 bytes a step in a flat array instead of from the start.
void SortFrom(Digit* keys, size_t n, size_t depth) {
  while (n > 1) {
    if (n <= 16) {
      std::sort(keys, keys + n, [depth](const Digit& x, const Digit& y) { return DigitLessFrom(x, y, depth); });
      return;
    }
    // Skip the bytes all the keys share past depth (a module's names, the
    // ancestors listed first): one read of each key instead of one a digit.
    depth = SharedFrom(keys, n, depth);
    for (size_t i = 0; i < n; ++i) {
      keys[i].a = Load8(keys[i].e, keys[i].size, depth);
      keys[i].b = Load8(keys[i].e, keys[i].size, depth + 8);
    }
    std::sort(keys, keys + n, [](const Digit& x, const Digit& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
    // Each group of equal digits sorts by what follows: the largest here,
    // the others by recursion (at most half as many keys a level down).
    // Keys are prefix-free (texts end in 00 00, numbers and the rowid carry
    // their length), so keys with equal digits go on past them; a group
    // where one does not (read as zeros past its end) sorts whole, a guard.
    const size_t next = depth + 16;
    size_t start = 0;
    Digit* largest = nullptr;
    size_t largest_n = 0;
    for (size_t i = 1; i <= n; ++i) {
      if (i < n && keys[i].a == keys[start].a && keys[i].b == keys[start].b) continue;
      const size_t group = i - start;
      if (group > 1) {
        bool ends = false;
        for (size_t k = start; k < i && !ends; ++k) ends = keys[k].size <= next;
        if (ends) {
          std::sort(keys + start, keys + i,
                    [depth](const Digit& x, const Digit& y) { return DigitLessFrom(x, y, depth); });
        } else if (group > largest_n) {
          if (largest) SortFrom(largest, largest_n, next);
          largest = keys + start;
          largest_n = group;
        } else {
          SortFrom(keys + start, group, next);
        }
      }
      start = i;
    }
    keys = largest;
    n = largest_n;
    depth = next;
  }
}

// Sorts keys as KeyLess orders them.
void SortKeys(std::vector<const uint8_t*>* keys) {
  std::vector<Digit> digits;
  digits.reserve(keys->size());
  for (const uint8_t* e : *keys) digits.push_back({0, 0, e, Compared(e)});
  SortFrom(digits.data(), digits.size(), 0);
  for (size_t i = 0; i < digits.size(); ++i) (*keys)[i] = digits[i].e;
}

// Key tags: they order NULL < negative numbers < [0, 2^32) by integer bytes < 2^32 and more < text.
constexpr uint8_t kNullTag = 0x00, kNegativeTag = 0x01, kSmallTag = 0x10, kLargeTag = 0x14, kTextTag = 0x20;

// Reads one sorted run of the run file, or the sorted keys in memory.
class Cursor {
 public:
  Cursor(const uint8_t* const* begin, const uint8_t* const* end) : next_(begin), end_(end) {}
  Cursor(RunFile* file, size_t columns, uint64_t offset, uint64_t length)
      : file_(file), columns_(columns), pos_(offset), stop_(offset + length) {
    buffer_.resize(256 << 10);
  }
  // The current entry, nullptr past the last.
  const uint8_t* entry() const { return entry_; }

  Status Advance() {
    if (!file_) {
      // Sorted keys lie scattered in memory: ask for one a few ahead.
      if (end_ - next_ > 8) __builtin_prefetch(next_[8]);
      entry_ = next_ == end_ ? nullptr : *next_++;
      return Status::Ok();
    }
    if (entry_) at_ += EntrySize(entry_, columns_);
    entry_ = nullptr;
    if (at_ == have_ && pos_ == stop_) return Status::Ok();
    GA_RETURN_IF_ERROR(Fill(4));
    GA_RETURN_IF_ERROR(Fill(5 + size_t{Load32(buffer_.data() + at_)}));
    GA_RETURN_IF_ERROR(Fill(EntrySize(buffer_.data() + at_, columns_)));
    entry_ = buffer_.data() + at_;
    return Status::Ok();
  }

 private:
  // At least `need` bytes from at_ in the buffer.
  Status Fill(size_t need) {
    if (have_ - at_ >= need) return Status::Ok();
    memmove(buffer_.data(), buffer_.data() + at_, have_ - at_);
    have_ -= at_;
    at_ = 0;
    if (buffer_.size() < need) buffer_.resize(need);
    while (have_ < buffer_.size() && pos_ < stop_) {
      auto n = file_->Read(pos_, buffer_.data() + have_, std::min<uint64_t>(buffer_.size() - have_, stop_ - pos_));
      if (!n.ok()) return n.error();
      if (*n == 0) break;
      have_ += *n;
      pos_ += *n;
    }
    if (have_ < need) return Error{"", "sorted run at byte " + std::to_string(pos_), "cut short"};
    return Status::Ok();
  }

  const uint8_t* const* next_ = nullptr;
  const uint8_t* const* end_ = nullptr;
  RunFile* file_ = nullptr;
  size_t columns_ = 0;
  uint64_t pos_ = 0, stop_ = 0;
  std::vector<uint8_t> buffer_;
  size_t at_ = 0, have_ = 0;
  const uint8_t* entry_ = nullptr;
};

}  // namespace

size_t SortKeyBound(std::span<const SqlValue> values) {
  // A text's zero bytes take two each: counted as if every byte were one
  // (room, not a length; a second pass over the texts cost more).
  size_t most = 9 + values.size();
  for (const SqlValue& v : values) most += v.kind == SqlValue::kText ? 3 + 2 * v.text.size() : 11;
  return most;
}

size_t WriteSortKey(std::span<const SqlValue> values, int64_t rowid, uint8_t* out, size_t* columns) {
  uint8_t* p = out;
  auto put = [&p](uint64_t v, size_t bytes) {
    for (size_t i = bytes; i-- > 0;) *p++ = static_cast<uint8_t>(v >> (8 * i));
  };
  for (const SqlValue& v : values) {
    if (v.kind == SqlValue::kNull || (v.kind == SqlValue::kReal && v.real != v.real)) {
      *p++ = kNullTag;
    } else if (v.kind == SqlValue::kText) {
      // Text ends with 00 00 and its zero bytes become 00 FF: a prefix sorts first.
      *p++ = kTextTag;
      std::string_view t = v.text;
      for (size_t zero; (zero = t.find('\0')) != std::string_view::npos; t.remove_prefix(zero + 1)) {
        memcpy(p, t.data(), zero);
        p += zero;
        *p++ = 0;
        *p++ = 0xff;
      }
      if (!t.empty()) memcpy(p, t.data(), t.size());
      p += t.size();
      *p++ = 0;
      *p++ = 0;
    } else {
      const bool real = v.kind == SqlValue::kReal;
      double d = real ? v.real : static_cast<double>(v.integer);
      if (d == 0) d = 0;  // -0.0 equals 0
      if (d >= 0 && d < 4294967296.0) {
        // [0, 2^32), the common case, in few bytes: the integer part (its
        // length in the tag), then 00, or 01 and the fraction's bits.
        const double whole = real ? std::floor(d) : d;
        const uint64_t w = real ? static_cast<uint64_t>(whole) : static_cast<uint64_t>(v.integer);
        const size_t n = w < (1u << 8) ? 1 : w < (1u << 16) ? 2 : w < (1u << 24) ? 3 : 4;
        *p++ = static_cast<uint8_t>(kSmallTag + n - 1);
        put(w, n);
        const double fraction = d - whole;
        if (fraction == 0) {
          *p++ = 0;
        } else {
          *p++ = 1;
          put(std::bit_cast<uint64_t>(fraction), 8);
        }
      } else {
        // Any other number: its nearest double, order-preserving, then how far
        // an integer lies from it (beyond 2^53 integers share a double).
        const __int128 off = real ? 0 : static_cast<__int128>(v.integer) - static_cast<__int128>(d);
        uint64_t bits = std::bit_cast<uint64_t>(d);
        bits = (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
        *p++ = d < 0 ? kNegativeTag : kLargeTag;
        put(bits, 8);
        put(static_cast<uint64_t>(static_cast<int64_t>(off) + 32768), 2);
      }
    }
  }
  *columns = static_cast<size_t>(p - out);
  // The rowid: its length, then its bytes.
  const auto r = static_cast<uint64_t>(rowid);
  size_t n = 1;
  while (n < 8 && (r >> (8 * n)) != 0) ++n;
  *p++ = static_cast<uint8_t>(n);
  put(r, n);
  for (const SqlValue& v : values) *p++ = v.kind == SqlValue::kReal ? 1 : 0;
  return static_cast<size_t>(p - out);
}

bool DecodeSortKey(std::string_view key, size_t columns, std::vector<SqlValue>* values, int64_t* rowid,
                   std::string* scratch) {
  const auto* p = reinterpret_cast<const uint8_t*>(key.data());
  const uint8_t* end = p + key.size();
  if (key.size() < columns) return false;
  const uint8_t* types = end - columns;
  values->clear();
  scratch->clear();
  // Text views of scratch are made at the end: it may grow meanwhile.
  std::vector<std::pair<size_t, size_t>> in_scratch;
  for (size_t c = 0; c < columns; ++c) {
    if (p >= types) return false;
    const uint8_t tag = *p++;
    const bool real = types[c] == 1;
    if (tag == kNullTag) {
      values->push_back(SqlValue::Null());
    } else if (tag == kTextTag) {
      const uint8_t* q = p;
      bool escaped = false;
      for (;;) {
        q = static_cast<const uint8_t*>(memchr(q, 0, static_cast<size_t>(types - q)));
        if (!q || q + 1 >= types) return false;
        if (q[1] == 0) break;
        escaped = true;
        q += 2;
      }
      if (!escaped) {
        values->push_back(SqlValue::Text({reinterpret_cast<const char*>(p), static_cast<size_t>(q - p)}));
      } else {
        const size_t at = scratch->size();
        for (const uint8_t* r = p; r < q; ++r) {
          scratch->push_back(static_cast<char>(*r));
          if (*r == 0) ++r;  // 00 FF
        }
        in_scratch.push_back({values->size(), at});
        values->push_back(SqlValue::Text({nullptr, scratch->size() - at}));
      }
      p = q + 2;
    } else if (tag >= kSmallTag && tag < kLargeTag) {
      const size_t n = tag - kSmallTag + 1;
      if (types - p < static_cast<ptrdiff_t>(n + 1)) return false;
      const uint64_t w = LoadBigEndian(p, n);
      p += n;
      double fraction = 0;
      if (*p++ == 1) {
        if (types - p < 8) return false;
        fraction = std::bit_cast<double>(LoadBigEndian(p, 8));
        p += 8;
      }
      values->push_back(real ? SqlValue::Real(static_cast<double>(w) + fraction)
                             : SqlValue::Integer(static_cast<int64_t>(w)));
    } else if (tag == kNegativeTag || tag == kLargeTag) {
      if (types - p < 10) return false;
      uint64_t bits = LoadBigEndian(p, 8);
      bits = (bits >> 63) ? bits & ~(uint64_t{1} << 63) : ~bits;
      const double d = std::bit_cast<double>(bits);
      const int64_t off = static_cast<int64_t>(LoadBigEndian(p + 8, 2)) - 32768;
      p += 10;
      values->push_back(real ? SqlValue::Real(d)
                             : SqlValue::Integer(static_cast<int64_t>(static_cast<__int128>(d) + off)));
    } else {
      return false;
    }
  }
  if (p >= types) return false;
  const size_t n = *p++;
  if (n < 1 || n > 8 || types - p != static_cast<ptrdiff_t>(n)) return false;
  *rowid = static_cast<int64_t>(LoadBigEndian(p, n));
  for (auto [v, at] : in_scratch) (*values)[v].text = std::string_view(scratch->data() + at, (*values)[v].text.size());
  return true;
}

RunFile::RunFile(const std::string& path, int fd) : path_(path), temp_(path), fd_(fd) {}

Result<std::unique_ptr<RunFile>> RunFile::Create(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Error{path, "", std::string("cannot create the index sort file: ") + strerror(errno)};
  return std::unique_ptr<RunFile>(new RunFile(path, fd));
}

RunFile::~RunFile() {
  close(fd_);
  unlink(path_.c_str());
}

Status RunFile::Append(std::string_view bytes) {
  buffer_.append(bytes);
  return buffer_.size() >= (1 << 20) ? Flush() : Status::Ok();
}

Status RunFile::Flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t n = pwrite(fd_, buffer_.data() + done, buffer_.size() - done, static_cast<off_t>(size_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Error{path_, "byte " + std::to_string(size_ + done), std::string("cannot write: ") + strerror(errno)};
    }
    done += static_cast<size_t>(n);
  }
  size_ += done;
  buffer_.clear();
  return Status::Ok();
}

Result<size_t> RunFile::Read(uint64_t offset, uint8_t* out, size_t n) {
  if (!buffer_.empty()) GA_RETURN_IF_ERROR(Flush());
  for (;;) {
    ssize_t got = pread(fd_, out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Error{path_, "byte " + std::to_string(offset), std::string("cannot read: ") + strerror(errno)};
    return static_cast<size_t>(got);
  }
}

uint8_t* KeySorter::Room(size_t bytes) {
  if (bytes > left_) {
    // Blocks double from 64 KiB to 1 MiB: a small index allocates little,
    // and the room left in each index's last block stays small beside the
    // budget. (Huge pages made the faults fewer but the keys slower to add:
    // the kernel compacts memory to find 2 MiB.)
    const size_t size =
        std::max(blocks_.empty() ? size_t{64} << 10 : std::min<size_t>(size_t{1} << 20, 2 * last_block_), bytes);
    auto* block = static_cast<uint8_t*>(malloc(size));
    if (!block) throw std::bad_alloc();
    blocks_.emplace_back(block);
    last_block_ = size;
    free_ = block;
    left_ = size;
  }
  return free_;
}

void KeySorter::Add(std::span<const SqlValue> values, int64_t rowid) {
  uint8_t* e = Room(4 + SortKeyBound(values));
  size_t columns = 0;
  const size_t n = 4 + WriteSortKey(values, rowid, e + 4, &columns);
  const auto length = static_cast<uint32_t>(columns);
  memcpy(e, &length, 4);
  free_ += n;
  left_ -= n;
  used_ += n;
  if (runs_known_ && !keys_.empty() && KeyLess(e, keys_.back())) {
    if (run_starts_.size() < 32) {
      run_starts_.push_back(static_cast<uint32_t>(keys_.size()));
    } else {
      runs_known_ = false;
    }
  }
  keys_.push_back(e);
}

std::vector<const uint8_t*> KeySorter::Sorted() {
  std::vector<const uint8_t*> sorted = std::move(keys_);
  keys_.clear();
  if (!runs_known_) {
    SortKeys(&sorted);
    return sorted;
  }
  // Merge the ascending runs pairwise.
  std::vector<size_t> starts(run_starts_.begin(), run_starts_.end());
  starts.insert(starts.begin(), 0);
  while (starts.size() > 1) {
    std::vector<size_t> merged;
    for (size_t i = 0; i < starts.size(); i += 2) {
      merged.push_back(starts[i]);
      if (i + 1 == starts.size()) break;
      const size_t end = i + 2 < starts.size() ? starts[i + 2] : sorted.size();
      std::inplace_merge(sorted.begin() + starts[i], sorted.begin() + starts[i + 1], sorted.begin() + end, KeyLess);
    }
    starts.swap(merged);
  }
  return sorted;
}

void KeySorter::Clear() {
  blocks_.clear();
  free_ = nullptr;
  left_ = last_block_ = used_ = 0;
  std::vector<const uint8_t*>().swap(keys_);
  run_starts_.clear();
  runs_known_ = true;
}

Status KeySorter::Spill(RunFile* runs) {
  const uint64_t offset = runs->size();
  for (const uint8_t* e : Sorted()) {
    GA_RETURN_IF_ERROR(runs->Append({reinterpret_cast<const char*>(e), EntrySize(e, columns_)}));
  }
  runs_.push_back({offset, runs->size() - offset});
  Clear();
  return Status::Ok();
}

Status KeySorter::Merge(RunFile* runs, const std::function<Status(std::string_view)>& key,
                        const std::function<Error(std::string_view)>& duplicate) {
  const std::vector<const uint8_t*> memory = Sorted();
  std::vector<Cursor> cursors;
  cursors.reserve(runs_.size() + 1);
  for (const Run& r : runs_) cursors.emplace_back(runs, columns_, r.offset, r.length);
  cursors.emplace_back(memory.data(), memory.data() + memory.size());
  auto later = [](const Cursor* a, const Cursor* b) { return KeyLess(b->entry(), a->entry()); };
  std::vector<Cursor*> heap;
  for (Cursor& c : cursors) {
    GA_RETURN_IF_ERROR(c.Advance());
    if (c.entry()) heap.push_back(&c);
  }
  std::make_heap(heap.begin(), heap.end(), later);
  std::string previous;  // a unique index's last columns, when they may be overwritten (runs)
  const uint8_t* last = nullptr;
  int64_t rowid = 0;
  while (!heap.empty()) {
    Cursor* c;
    if (heap.size() == 1) {
      c = heap.back();
    } else {
      std::pop_heap(heap.begin(), heap.end(), later);
      c = heap.back();
    }
    const uint8_t* e = c->entry();
    if (!DecodeSortKey(KeyOf(e, columns_), columns_, &values_, &rowid, &scratch_)) {
      return Error{"", "", "a damaged index key"};
    }
    record_.clear();
    AppendRecord(values_, true, rowid, &record_);
    if (unique_) {
      std::string_view columns = Columns(e);
      if (last && (runs_.empty() ? Columns(last) : std::string_view(previous)) == columns) {
        return duplicate(record_);
      }
      if (!runs_.empty()) previous.assign(columns);
      last = e;
    }
    GA_RETURN_IF_ERROR(key(record_));
    GA_RETURN_IF_ERROR(c->Advance());
    if (!c->entry()) {
      heap.pop_back();
    } else if (heap.size() > 1) {
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  runs_.clear();
  Clear();
  return Status::Ok();
}

}  // namespace graph_ascend::formats::sqlite_file
