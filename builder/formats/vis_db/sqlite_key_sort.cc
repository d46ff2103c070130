// Index keys in SQLite's order, spilled and merged (sqlite_key_sort.h).
#include "formats/vis_db/sqlite_key_sort.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "formats/vis_db/sqlite_btree.h"

namespace graph_ascend::formats::sqlite_file {
namespace {

void AppendBigEndian(uint64_t v, size_t bytes, std::string* out) {
  for (size_t i = bytes; i-- > 0;) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

// An entry: [u32 key length][u32 record length][key][record].
std::string_view KeyOf(const uint8_t* e) { return {reinterpret_cast<const char*>(e + 8), Load32(e)}; }
std::string_view RecordOf(const uint8_t* e) {
  return {reinterpret_cast<const char*>(e + 8 + Load32(e)), Load32(e + 4)};
}
size_t EntrySize(const uint8_t* e) { return 8 + size_t{Load32(e)} + Load32(e + 4); }

bool KeyLess(const uint8_t* a, const uint8_t* b) {
  const uint32_t la = Load32(a), lb = Load32(b);
  const int c = memcmp(a + 8, b + 8, std::min(la, lb));
  return c < 0 || (c == 0 && la < lb);
}

// The key without its rowid: what a unique index keeps unique.
std::string_view Columns(const uint8_t* e) {
  std::string_view k = KeyOf(e);
  return k.substr(0, k.size() - 8);
}

// Reads one sorted run of the run file, or the sorted keys in memory.
class Cursor {
 public:
  Cursor(const uint8_t* const* begin, const uint8_t* const* end) : next_(begin), end_(end) {}
  Cursor(RunFile* file, uint64_t offset, uint64_t length) : file_(file), pos_(offset), stop_(offset + length) {
    buffer_.resize(256 << 10);
  }
  // The current entry, nullptr past the last.
  const uint8_t* entry() const { return entry_; }

  Status Advance() {
    if (!file_) {
      entry_ = next_ == end_ ? nullptr : *next_++;
      return Status::Ok();
    }
    if (entry_) at_ += EntrySize(entry_);
    entry_ = nullptr;
    if (at_ == have_ && pos_ == stop_) return Status::Ok();
    GA_RETURN_IF_ERROR(Fill(8));
    GA_RETURN_IF_ERROR(Fill(EntrySize(buffer_.data() + at_)));
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
  uint64_t pos_ = 0, stop_ = 0;
  std::vector<uint8_t> buffer_;
  size_t at_ = 0, have_ = 0;
  const uint8_t* entry_ = nullptr;
};

}  // namespace

void AppendSortKey(std::span<const SqlValue> values, int64_t rowid, std::string* out) {
  for (const SqlValue& v : values) {
    if (v.kind == SqlValue::kNull || (v.kind == SqlValue::kReal && v.real != v.real)) {
      out->push_back('\0');
    } else if (v.kind == SqlValue::kText) {
      // Text ends with 00 00 and its zero bytes become 00 FF: a prefix sorts first.
      out->push_back('\2');
      std::string_view t = v.text;
      for (size_t zero; (zero = t.find('\0')) != std::string_view::npos; t.remove_prefix(zero + 1)) {
        out->append(t.substr(0, zero));
        out->append("\0\xff", 2);
      }
      out->append(t);
      out->append("\0\0", 2);
    } else {
      // A number: its nearest double, order-preserving, then how far an
      // integer lies from it (beyond 2^53 integers share a double).
      out->push_back('\1');
      double d = v.kind == SqlValue::kReal ? v.real : static_cast<double>(v.integer);
      __int128 off = v.kind == SqlValue::kReal ? 0 : static_cast<__int128>(v.integer) - static_cast<__int128>(d);
      if (d == 0) d = 0;  // -0.0 equals 0
      uint64_t bits = std::bit_cast<uint64_t>(d);
      bits = (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
      AppendBigEndian(bits, 8, out);
      AppendBigEndian(static_cast<uint64_t>(static_cast<int64_t>(off) + 32768), 2, out);
    }
  }
  AppendBigEndian(static_cast<uint64_t>(rowid) ^ (uint64_t{1} << 63), 8, out);
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
    if (n <= 0) return Error{path_, "byte " + std::to_string(size_ + done), std::string("cannot write: ") + strerror(errno)};
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

void KeySorter::Add(std::span<const SqlValue> values, int64_t rowid) {
  const size_t at = arena_.size();
  offsets_.push_back(at);
  arena_.append(8, '\0');
  AppendSortKey(values, rowid, &arena_);
  const uint32_t key = static_cast<uint32_t>(arena_.size() - at - 8);
  record_.clear();
  AppendRecord(values, true, rowid, &record_);
  arena_.append(record_);
  const uint32_t record = static_cast<uint32_t>(record_.size());
  memcpy(arena_.data() + at, &key, 4);
  memcpy(arena_.data() + at + 4, &record, 4);
}

std::vector<const uint8_t*> KeySorter::Sorted() {
  std::vector<const uint8_t*> sorted;
  sorted.reserve(offsets_.size());
  const auto* base = reinterpret_cast<const uint8_t*>(arena_.data());
  for (uint64_t o : offsets_) sorted.push_back(base + o);
  std::sort(sorted.begin(), sorted.end(), KeyLess);
  return sorted;
}

Status KeySorter::Spill(RunFile* runs) {
  const uint64_t offset = runs->size();
  for (const uint8_t* e : Sorted()) {
    GA_RETURN_IF_ERROR(runs->Append({reinterpret_cast<const char*>(e), EntrySize(e)}));
  }
  runs_.push_back({offset, runs->size() - offset});
  std::string().swap(arena_);
  std::vector<uint64_t>().swap(offsets_);
  return Status::Ok();
}

Status KeySorter::Merge(RunFile* runs, const std::function<Status(std::string_view)>& key,
                        const std::function<Error(std::string_view)>& duplicate) {
  const std::vector<const uint8_t*> memory = Sorted();
  std::vector<Cursor> cursors;
  cursors.reserve(runs_.size() + 1);
  for (const Run& r : runs_) cursors.emplace_back(runs, r.offset, r.length);
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
  while (!heap.empty()) {
    Cursor* c;
    if (heap.size() == 1) {
      c = heap.back();
    } else {
      std::pop_heap(heap.begin(), heap.end(), later);
      c = heap.back();
    }
    const uint8_t* e = c->entry();
    if (unique_) {
      std::string_view columns = Columns(e);
      if (last && (runs_.empty() ? Columns(last) : std::string_view(previous)) == columns) {
        return duplicate(RecordOf(e));
      }
      if (!runs_.empty()) previous.assign(columns);
      last = e;
    }
    GA_RETURN_IF_ERROR(key(RecordOf(e)));
    GA_RETURN_IF_ERROR(c->Advance());
    if (!c->entry()) {
      heap.pop_back();
    } else if (heap.size() > 1) {
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  runs_.clear();
  std::string().swap(arena_);
  std::vector<uint64_t>().swap(offsets_);
  return Status::Ok();
}

}  // namespace graph_ascend::formats::sqlite_file
