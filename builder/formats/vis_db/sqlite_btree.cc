// Records, pages and bottom-up b-trees of the SQLite file format (sqlite_btree.h).
#include "formats/vis_db/sqlite_btree.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace graph_ascend::formats::sqlite_file {
namespace {

void Put2(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

void Put4(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

uint32_t Get4(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

size_t VarintLength(uint64_t v) {
  if (v >> 56) return 9;
  size_t n = 1;
  while (v >>= 7) ++n;
  return n;
}

// SQLite's serial type of an integer (schema format 4: 0 and 1 take no body).
uint64_t IntegerType(int64_t v, size_t* body) {
  uint64_t u = v < 0 ? ~static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  *body = 0;
  if (v == 0) return 8;
  if (v == 1) return 9;
  if (u <= 127) return *body = 1, 1;
  if (u <= 32767) return *body = 2, 2;
  if (u <= 8388607) return *body = 3, 3;
  if (u <= 2147483647) return *body = 4, 4;
  if (u <= 0x7FFFFFFFFFFFull) return *body = 6, 5;
  return *body = 8, 6;
}

uint64_t SerialType(const SqlValue& v, size_t* body) {
  switch (v.kind) {
    case SqlValue::kInteger: return IntegerType(v.integer, body);
    case SqlValue::kReal:
      if (std::isnan(v.real)) break;
      *body = 8;
      return 7;
    case SqlValue::kText: *body = v.text.size(); return 13 + 2 * static_cast<uint64_t>(v.text.size());
    case SqlValue::kNull: break;
  }
  *body = 0;
  return 0;
}

}  // namespace

void AppendVarint(uint64_t v, std::string* out) {
  uint8_t buf[9];
  out->append(reinterpret_cast<char*>(buf), PutVarint(v, buf));
}

size_t PutVarint(uint64_t v, uint8_t* buf) {
  if (v >> 56) {
    buf[8] = static_cast<uint8_t>(v);
    v >>= 8;
    for (int i = 7; i >= 0; --i) {
      buf[i] = static_cast<uint8_t>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    return 9;
  }
  size_t n = VarintLength(v);
  for (size_t i = n; i-- > 0;) {
    buf[i] = static_cast<uint8_t>((v & 0x7f) | (i + 1 < n ? 0x80 : 0));
    v >>= 7;
  }
  return n;
}

size_t ReadVarint(const uint8_t* p, size_t n, uint64_t* v) {
  uint64_t x = 0;
  for (size_t i = 0; i < 9 && i < n; ++i) {
    if (i == 8) {
      *v = (x << 8) | p[i];
      return 9;
    }
    x = (x << 7) | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *v = x;
      return i + 1;
    }
  }
  return 0;
}

void AppendRecord(std::span<const SqlValue> values, bool with_rowid, int64_t rowid, std::string* out) {
  // Each value's serial type and body length, found once.
  constexpr size_t kFew = 32;
  uint64_t few_types[kFew];
  size_t few_bodies[kFew];
  std::vector<uint64_t> many_types;
  std::vector<size_t> many_bodies;
  const size_t count = values.size() + (with_rowid ? 1 : 0);
  uint64_t* types = few_types;
  size_t* bodies = few_bodies;
  if (count > kFew) {
    many_types.resize(count);
    many_bodies.resize(count);
    types = many_types.data();
    bodies = many_bodies.data();
  }
  size_t type_bytes = 0, body_bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    types[i] = i < values.size() ? SerialType(values[i], &bodies[i]) : IntegerType(rowid, &bodies[i]);
    type_bytes += VarintLength(types[i]);
    body_bytes += bodies[i];
  }
  // The header's length counts its own varint.
  size_t header = type_bytes + 1;
  while (type_bytes + VarintLength(header) != header) header = type_bytes + VarintLength(header);
  const size_t start = out->size();
  out->resize(start + header + body_bytes);
  auto* p = reinterpret_cast<uint8_t*>(out->data() + start);
  p += PutVarint(header, p);
  for (size_t i = 0; i < count; ++i) p += PutVarint(types[i], p);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t type = types[i];
    const size_t n = bodies[i];
    if (type == 7) {
      const uint64_t bits = std::bit_cast<uint64_t>(values[i].real);
      for (size_t b = 0; b < 8; ++b) p[b] = static_cast<uint8_t>(bits >> (8 * (7 - b)));
    } else if (type >= 1 && type <= 6) {
      const auto v = static_cast<uint64_t>(i < values.size() ? values[i].integer : rowid);
      for (size_t b = 0; b < n; ++b) p[b] = static_cast<uint8_t>(v >> (8 * (n - 1 - b)));
    } else if (type >= 13 && n > 0) {
      memcpy(p, values[i].text.data(), n);
    }
    p += n;
  }
}

std::string FirstColumnText(std::string_view record) {
  const auto* p = reinterpret_cast<const uint8_t*>(record.data());
  uint64_t header, type;
  size_t a = ReadVarint(p, record.size(), &header);
  size_t b = a ? ReadVarint(p + a, record.size() - a, &type) : 0;
  if (!b || header > record.size()) return "?";
  std::string_view body = record.substr(header);
  if (type == 0) return "NULL";
  if (type == 8 || type == 9) return std::to_string(type - 8);
  if (type >= 13 && type % 2 == 1) return std::string(body.substr(0, (type - 13) / 2));
  if (type >= 1 && type <= 6) {
    static const size_t kBytes[] = {0, 1, 2, 3, 4, 6, 8};
    size_t n = std::min(kBytes[type], body.size());
    int64_t v = n && (static_cast<uint8_t>(body[0]) & 0x80) ? -1 : 0;
    for (size_t i = 0; i < n; ++i) {
      v = static_cast<int64_t>((static_cast<uint64_t>(v) << 8) | static_cast<uint8_t>(body[i]));
    }
    return std::to_string(v);
  }
  return "?";
}

PageFile::PageFile(int fd, std::string path, uint32_t page_size)
    : fd_(fd), path_(std::move(path)), page_size_(page_size), offset_(page_size) {
  buffer_.resize(std::max<size_t>(page_size, 1 << 20) / page_size * page_size);
}

uint8_t* PageFile::Add() {
  if (used_ == buffer_.size()) Flush();
  uint8_t* page = buffer_.data() + used_;
  used_ += page_size_;
  ++next_;
  return page;
}

void PageFile::Flush() {
  size_t done = 0;
  while (status_.ok() && done < used_) {
    ssize_t n = pwrite(fd_, buffer_.data() + done, used_ - done, static_cast<off_t>(offset_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      status_ = Error{path_, "byte " + std::to_string(offset_ + done), std::string("cannot write: ") + strerror(errno)};
      break;
    }
    done += static_cast<size_t>(n);
  }
  offset_ += used_;
  used_ = 0;
}

Status PageFile::Finish(const uint8_t* page1) {
  Flush();
  if (!status_.ok()) return status_;
  size_t done = 0;
  while (done < page_size_) {
    ssize_t n = pwrite(fd_, page1 + done, page_size_ - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{path_, "page 1", std::string("cannot write: ") + strerror(errno)};
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

BtreeBuilder::BtreeBuilder(PageFile* file, bool index, uint32_t reserve)
    : file_(file), index_(index), reserve_(reserve), usable_(file->page_size()) {}

// The part of a payload kept on the b-tree page (file format §1.6): the rest
// goes to overflow pages. Index cells keep less so that four fit a page.
uint32_t BtreeBuilder::PayloadOnPage(uint64_t payload) const {
  const uint64_t u = usable_;
  const uint64_t most = index_ ? (u - 12) * 64 / 255 - 23 : u - 35;
  if (payload <= most) return static_cast<uint32_t>(payload);
  const uint64_t least = (u - 12) * 32 / 255 - 23;
  const uint64_t k = least + (payload - least) % (u - 4);
  return static_cast<uint32_t>(k <= most ? k : least);
}

size_t BtreeBuilder::CellSize(size_t head, size_t payload) const {
  const uint32_t local = PayloadOnPage(payload);
  return head + local + (local < payload ? 4 : 0);
}

// Writes the cell of `head` (its varints) and `record` at the top of `p`
// (the caller checked that it fits), its overflow pages to the file.
void BtreeBuilder::PlaceCell(Page* p, std::string_view head, std::string_view record) {
  const uint32_t local = PayloadOnPage(record.size());
  uint32_t first = 0;
  if (local < record.size()) {
    std::string_view rest = record.substr(local);
    first = file_->next();
    const size_t per_page = usable_ - 4;
    while (!rest.empty()) {
      const size_t n = std::min(rest.size(), per_page);
      const uint32_t self = file_->next();
      uint8_t* page = file_->Add();
      Put4(page, rest.size() > n ? self + 1 : 0);
      memcpy(page + 4, rest.data(), n);
      memset(page + 4 + n, 0, per_page - n);
      rest.remove_prefix(n);
    }
  }
  const size_t size = head.size() + local + (first ? 4 : 0);
  p->top -= static_cast<uint32_t>(size);
  uint8_t* out = p->bytes.data() + p->top;
  memcpy(out, head.data(), head.size());
  memcpy(out + head.size(), record.data(), local);
  if (first) Put4(out + head.size() + local, first);
  p->offsets.push_back(p->top);
}

bool BtreeBuilder::Fits(const Page& p, bool leaf, size_t cell) const {
  const size_t used = (leaf ? 8 : 12) + 2 * (p.offsets.size() + 1) + (usable_ - p.top) + cell;
  return used + reserve_ <= usable_;
}

void BtreeBuilder::Put(Page* p, std::string_view cell) {
  p->top -= static_cast<uint32_t>(cell.size());
  memcpy(p->bytes.data() + p->top, cell.data(), cell.size());
  p->offsets.push_back(p->top);
}

void BtreeBuilder::Reset(Page* p) {
  p->bytes.resize(usable_);
  p->offsets.clear();
  p->top = usable_;
  p->last_rowid = 0;
}

uint32_t BtreeBuilder::Write(Page* p, bool leaf, uint32_t right, uint8_t* page1) {
  uint32_t number = 1;
  uint8_t* out = page1;
  if (page1) {
    memset(page1, 0, usable_);
  } else {
    number = file_->next();
    out = file_->Add();
  }
  const uint32_t h = page1 ? 100 : 0;
  out[h] = leaf ? (index_ ? 0x0A : 0x0D) : (index_ ? 0x02 : 0x05);
  Put2(out + h + 1, 0);  // no freeblock
  Put2(out + h + 3, static_cast<uint32_t>(p->offsets.size()));
  Put2(out + h + 5, p->top == 65536 ? 0 : p->top);  // 0 stands for 65536
  out[h + 7] = 0;                                    // no fragmented bytes
  if (!leaf) Put4(out + h + 8, right);
  uint8_t* pointer = out + h + (leaf ? 8 : 12);
  for (uint32_t offset : p->offsets) {
    Put2(pointer, offset);
    pointer += 2;
  }
  memset(pointer, 0, static_cast<size_t>(out + p->top - pointer));
  memcpy(out + p->top, p->bytes.data() + p->top, usable_ - p->top);
  Reset(p);
  return number;
}

// Adds the interior cell (child, body) to `level`. A full page keeps its last
// child as its right child and sends that child's divider up.
Status BtreeBuilder::PushUp(size_t level, uint32_t child, std::string_view body) {
  if (levels_.size() <= level) Reset(&levels_.emplace_back());
  std::string cell(4, '\0');
  Put4(reinterpret_cast<uint8_t*>(cell.data()), child);
  cell.append(body);
  Page* p = &levels_[level];
  if (!Fits(*p, false, cell.size())) {
    if (p->offsets.size() < 2) return Error{"", "", "a b-tree key too large for the page size"};
    const uint32_t end = p->offsets.size() >= 2 ? p->offsets[p->offsets.size() - 2] : usable_;
    std::string last(reinterpret_cast<const char*>(p->bytes.data() + p->top), end - p->top);
    p->offsets.pop_back();
    p->top = end;
    const uint32_t page = Write(p, false, Get4(reinterpret_cast<const uint8_t*>(last.data())), nullptr);
    GA_RETURN_IF_ERROR(PushUp(level + 1, page, std::string_view(last).substr(4)));
    p = &levels_[level];
  }
  Put(p, cell);
  return Status::Ok();
}

Status BtreeBuilder::AddRow(int64_t rowid, std::string_view record) {
  if (levels_.empty()) Reset(&levels_.emplace_back());
  uint8_t head[18];
  size_t n = PutVarint(record.size(), head);
  n += PutVarint(static_cast<uint64_t>(rowid), head + n);
  if (!Fits(levels_[0], true, CellSize(n, record.size()))) {
    if (levels_[0].offsets.empty()) return Error{"", "rowid " + std::to_string(rowid), "a row too large for the page"};
    std::string key;
    AppendVarint(static_cast<uint64_t>(levels_[0].last_rowid), &key);
    const uint32_t leaf = Write(&levels_[0], true, 0, nullptr);
    GA_RETURN_IF_ERROR(PushUp(1, leaf, key));
  }
  PlaceCell(&levels_[0], {reinterpret_cast<char*>(head), n}, record);
  levels_[0].last_rowid = rowid;
  return Status::Ok();
}

Status BtreeBuilder::AddKey(std::string_view record) {
  if (levels_.empty()) Reset(&levels_.emplace_back());
  uint8_t head[9];
  const size_t n = PutVarint(record.size(), head);
  Page* leaf = &levels_[0];
  if (!Fits(*leaf, true, CellSize(n, record.size()))) {
    if (leaf->offsets.size() < 2) return Error{"", "", "an index key too large for the page size"};
    // The leaf's last key goes up, between this leaf and the next (index
    // b-trees hold each key once, interior keys included).
    const uint32_t end = leaf->offsets[leaf->offsets.size() - 2];
    popped_.assign(reinterpret_cast<const char*>(leaf->bytes.data() + leaf->top), end - leaf->top);
    leaf->offsets.pop_back();
    leaf->top = end;
    const uint32_t page = Write(leaf, true, 0, nullptr);
    GA_RETURN_IF_ERROR(PushUp(1, page, popped_));
    leaf = &levels_[0];
  }
  PlaceCell(leaf, {reinterpret_cast<char*>(head), n}, record);
  return Status::Ok();
}

uint32_t BtreeBuilder::Finish(uint8_t* page1) {
  if (levels_.empty()) Reset(&levels_.emplace_back());
  uint32_t carry = 0;
  for (size_t k = 0; k < levels_.size(); ++k) {
    carry = Write(&levels_[k], k == 0, carry, k + 1 == levels_.size() ? page1 : nullptr);
  }
  levels_.clear();
  return carry;
}

}  // namespace graph_ascend::formats::sqlite_file
