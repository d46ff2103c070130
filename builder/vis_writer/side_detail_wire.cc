// SideDetailWriter (vis/detail_wire.h): a node's detail written straight
// from its side's dump arrays, with the metrics of a compare, in one pass.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "vis_writer/detail_wire.h"
#include "vis_writer/wire_bytes.h"

namespace graph_ascend::vis {
namespace {

using wire::DoubleBits;
using wire::Int32Bits;
using wire::kDelimited;
using wire::kFixed64;
using wire::kVarint;
using wire::VarintSize;

constexpr uint8_t Tag(uint32_t field, uint32_t type) { return static_cast<uint8_t>(field << 3 | type); }

// The buffer a thread writes its details into (kept from detail to detail).
struct DetailBuffer {
  std::unique_ptr<uint8_t[]> bytes;
  size_t capacity = 0;
};

// The bytes of fields whose value is not a number, which repeat throughout
// a dump ("type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 8],
// "requires_grad": true), kept by each thread: by writer, field name and
// value (a pool id, or the boolean), direct-mapped; and of a floating
// number's field those before its eight bytes, by name.
class FieldCache {
 public:
  static constexpr size_t kMaxBytes = 40;

  struct Entry {
    uint64_t generation = 0;  // 0: empty (writers count from 1)
    uint32_t name = 0;
    uint32_t value = 0;
    uint8_t kind = 0;
    uint8_t size = 0;
    uint8_t bytes[kMaxBytes + 2];  // 64 bytes in all
  };

  // The entry that holds (or would hold) that field.
  Entry* Slot(uint32_t name, uint32_t value, uint8_t kind) {
    uint32_t h = (name * 0x9E3779B1u) ^ (value * 0x85EBCA77u) ^ (static_cast<uint32_t>(kind) << 29);
    return &entries_[(h >> 20) & (kEntries - 1)];
  }
  static bool Holds(const Entry& e, uint64_t generation, uint32_t name, uint32_t value, uint8_t kind) {
    return e.generation == generation && e.name == name && e.value == value && e.kind == kind;
  }

 private:
  static constexpr size_t kEntries = 1024;
  Entry entries_[kEntries];
};

std::atomic<uint64_t> writers{0};

// Makes room for n bytes past the first `used` ones, which are kept; returns the bytes.
[[gnu::noinline]] uint8_t* GrowBuffer(DetailBuffer* buffer, size_t used, size_t n) {
  size_t capacity = std::max(2 * buffer->capacity, used + n + 4096);
  std::unique_ptr<uint8_t[]> bigger(new uint8_t[capacity]);
  if (buffer->bytes != nullptr) memcpy(bigger.get(), buffer->bytes.get(), used);
  buffer->bytes = std::move(bigger);
  buffer->capacity = capacity;
  return buffer->bytes.get();
}

// Writes one detail into a DetailBuffer: room for the detail's tag and
// length, then its body. Sizes that are known before a message is written
// (values, metrics) go before it; an item's or a field's size is known
// after, so the bytes it mostly takes are kept for it and its body moved
// when it needs another number of them. Meant to live in locals
// (the compiler keeps the cursor in registers: stores through the buffer
// may alias anything else in memory).
class DetailBytes {
 public:
  static constexpr size_t kHead = 1 + 5;  // a tag, a length of up to 5 bytes

  explicit DetailBytes(DetailBuffer* buffer)
      : buffer_(buffer), base_(buffer->bytes.get()), p_(base_ + kHead), end_(base_ + buffer->capacity) {
    Ensure(0);
  }

  size_t body_size() const { return p_ - base_ - kHead; }
  // Room for n more bytes.
  [[gnu::always_inline]] void Ensure(size_t n) {
    if (base_ == nullptr || static_cast<size_t>(end_ - p_) < n) Grow(n);
  }
  [[gnu::always_inline]] void Byte(uint8_t b) { *p_++ = b; }
  [[gnu::always_inline]] void Varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<uint8_t>(v);
  }
  [[gnu::always_inline]] void Bytes(std::string_view s) { p_ = wire::Copy(p_, s.data(), s.size()); }
  // The first n of a cached field's kMaxBytes bytes (all are copied, in
  // three moves: room for them is the caller's).
  [[gnu::always_inline]] void Block(const uint8_t* block, size_t n) {
    static_assert(FieldCache::kMaxBytes == 40);
    memcpy(p_, block, 16);
    memcpy(p_ + 16, block + 16, 16);
    memcpy(p_ + 32, block + 32, 8);
    p_ += n;
  }
  size_t offset() const { return p_ - base_; }
  const uint8_t* at(size_t offset) const { return base_ + offset; }
  [[gnu::always_inline]] void Delimited(uint8_t tag, std::string_view s) {
    Byte(tag);
    Varint(s.size());
    Bytes(s);
  }
  [[gnu::always_inline]] void Fixed64(uint8_t tag, double v) {
    Byte(tag);
    DoubleBytes(v);
  }
  [[gnu::always_inline]] void DoubleBytes(double v) {
    uint64_t bits = DoubleBits(v);
    for (int i = 0; i < 8; ++i) *p_++ = static_cast<uint8_t>(bits >> (8 * i));
  }
  // A message's tag and `reserve` bytes for its length (its size is only
  // known once it is written); returns where they are. Room for them is the
  // caller's.
  size_t Open(uint8_t tag, size_t reserve) {
    Byte(tag);
    size_t at = p_ - base_;
    p_ += reserve;
    return at;
  }
  // Writes the length of the message opened at `at`, which ends here.
  void Close(size_t at, size_t reserve) {
    size_t n = p_ - base_ - (at + reserve), v = VarintSize(n);
    if (v != reserve) {
      if (v > reserve) Ensure(v - reserve);
      memmove(base_ + at + v, base_ + at + reserve, n);
      p_ = base_ + at + v + n;
    }
    uint8_t* end = p_;
    p_ = base_ + at;
    Varint(n);
    p_ = end;
  }

  // Writes the detail's tag and length before its body; returns its bytes.
  std::string_view Finish(uint8_t tag) {
    size_t n = body_size();
    uint8_t* end = p_;
    uint8_t* start = base_ + kHead - 1 - VarintSize(n);
    p_ = start;
    Byte(tag);
    Varint(n);
    p_ = end;
    return std::string_view(reinterpret_cast<const char*>(start), end - start);
  }

 private:
  // Out of line, and not given `this`: the cursor stays in registers.
  void Grow(size_t n) {
    size_t used = p_ - base_;
    base_ = GrowBuffer(buffer_, used, n);
    p_ = base_ + used;
    end_ = base_ + buffer_->capacity;
  }

  DetailBuffer* buffer_;
  uint8_t* base_;
  uint8_t* p_;
  uint8_t* end_;
};

// The size of a string field of that content (protobuf leaves out empty ones).
size_t OptionalSize(size_t n) { return n == 0 ? 0 : 1 + VarintSize(n) + n; }

}  // namespace

SideDetailWriter::SideDetailWriter(const StringPool& pool)
    : pool_(&pool), plain_(pool.size()), generation_(writers.fetch_add(1) + 1) {
  for (uint32_t id = 0; id < plain_.size(); ++id) {
    uint64_t any = 0;
    wire::OrView(pool.Get(id), &any);
    plain_[id] = !wire::HighBit(any);
  }
}

bool SideDetailWriter::Append(const graph::Side& side, uint32_t node, int field, std::string* out, size_t* size,
                              const compare::PairMetrics* compared) const {
  if (side.pool != pool_) return false;
  const graph::Graph& g = *side.graph;
  if (node < side.distributed_first.size() && side.distributed_first[node] != graph::kNoNode) return false;
  if (!side.parallel_merge_info.empty() && side.parallel_merge_info.count(node) != 0) return false;
  const StringPool& pool = *side.pool;
  const dump::DumpData& d = side.dump;
  const dump::DumpEntry* e = g.entry[node] == graph::kNoNode ? nullptr : &d.entries[g.entry[node]];
  uint32_t items = e == nullptr ? 0 : e->input_count + e->output_count;
  if (compared != nullptr && compared->items() != items) return false;
  uint64_t any = 0;  // the bits of the metrics' strings (the dump's are checked through plain_)
  thread_local DetailBuffer buffer;
  thread_local std::unique_ptr<FieldCache> field_cache;
  if (field_cache == nullptr) field_cache = std::make_unique<FieldCache>();
  FieldCache& cache = *field_cache;
  DetailBytes b(&buffer);
  for (uint32_t k = 0; k < items; ++k) {
    const dump::DumpItem& it = d.items[e->first_item + k];
    if (!Plain(it.key)) return false;
    // A key under the node's name is stored as its suffix (key_suffix, written last).
    std::string_view key = pool.Get(it.key);
    bool full = (it.flags & dump::kItemFullKey) != 0;
    b.Ensure(key.size() + 16);
    size_t at = b.Open(Tag(k < e->input_count ? 1 : 2, kDelimited), 2);  // most items take 128 to 16383 bytes
    if (full && !key.empty()) b.Delimited(Tag(1, kDelimited), key);
    if (it.state != dump::ItemState::kInput) {
      b.Byte(Tag(2, kVarint));
      b.Varint(Int32Bits(static_cast<int32_t>(it.state)));
    }
    if (it.flags & dump::kItemNull) {
      b.Byte(Tag(3, kVarint));
      b.Byte(1);
    }
    for (uint32_t f = 0; f < it.field_count; ++f) {
      const dump::Field& in = d.fields[it.first_field + f];
      const dump::Value& v = in.value;
      FieldCache::Entry* kept = nullptr;
      // Kept: a floating number's field as its bytes up to its eight (they
      // are a statistic's name), by name; a string, boolean or null field
      // whole, by name and value. Not integers: the Value's size written
      // before one varies with its length.
      if (v.kind != dump::ValueKind::kInteger) {
        bool number = v.kind == dump::ValueKind::kNumber;
        uint32_t value = number || v.kind == dump::ValueKind::kNull ? 0
                         : v.kind == dump::ValueKind::kBool         ? v.boolean
                                                                    : v.string;
        auto kind = static_cast<uint8_t>(v.kind);
        kept = cache.Slot(in.name, value, kind);
        if (FieldCache::Holds(*kept, generation_, in.name, value, kind)) {
          b.Ensure(FieldCache::kMaxBytes + 8);
          b.Block(kept->bytes, kept->size);
          if (number) b.DoubleBytes(v.number);
          continue;
        }
        kept->generation = 0;  // refilled below when the field fits
        kept->name = in.name;
        kept->value = value;
        kept->kind = kind;
      }
      if (!Plain(in.name)) return false;
      std::string_view field_name = pool.Get(in.name);
      std::string_view text;
      if (v.kind == dump::ValueKind::kString || v.kind == dump::ValueKind::kJson) {
        if (!Plain(v.string)) return false;
        text = pool.Get(v.string);
      }
      b.Ensure(field_name.size() + text.size() + 32);
      size_t field_at = b.Open(Tag(4, kDelimited), 1);  // a field mostly takes fewer than 128 bytes
      if (!field_name.empty()) b.Delimited(Tag(1, kDelimited), field_name);
      // The Value message vis::FillDetail stores, its size first.
      b.Byte(Tag(2, kDelimited));
      switch (v.kind) {
        case dump::ValueKind::kNull:
          b.Byte(2);
          b.Byte(Tag(1, kVarint));
          b.Byte(1);
          break;
        case dump::ValueKind::kBool:
          b.Byte(2);
          b.Byte(Tag(2, kVarint));
          b.Byte(v.boolean ? 1 : 0);
          break;
        case dump::ValueKind::kInteger:
          b.Byte(static_cast<uint8_t>(1 + VarintSize(static_cast<uint64_t>(v.integer))));
          b.Byte(Tag(3, kVarint));
          b.Varint(static_cast<uint64_t>(v.integer));
          break;
        case dump::ValueKind::kNumber:
          b.Byte(9);
          b.Fixed64(Tag(4, kFixed64), v.number);
          break;
        case dump::ValueKind::kString:
        case dump::ValueKind::kJson:
          b.Varint(1 + VarintSize(text.size()) + text.size());
          b.Delimited(Tag(v.kind == dump::ValueKind::kString ? 5 : 6, kDelimited), text);
          break;
      }
      b.Close(field_at, 1);
      if (kept != nullptr) {
        size_t start = field_at - 1;  // the field's tag
        // A number's eight bytes are its own.
        if (size_t n = b.offset() - start - (v.kind == dump::ValueKind::kNumber ? 8 : 0); n <= FieldCache::kMaxBytes) {
          memcpy(kept->bytes, b.at(start), n);
          kept->size = static_cast<uint8_t>(n);
          kept->generation = generation_;
        }
      }
    }
    if (compared != nullptr) {
      // Each metric as the vis::Metric compare::StoreMetrics makes of it.
      for (const compare::PairMetric* m = compared->begin(k); m != compared->end(k); ++m) {
        std::string_view text = compared->text(*m);
        if (m->kind == compare::MetricKind::kOther) wire::OrView(m->name, &any);  // the others' names are constants
        bool value = DoubleBits(m->value) != 0;
        size_t metric_size =
            OptionalSize(m->name.size()) + OptionalSize(text.size()) + (value ? 9 : 0) + (m->has_value ? 2 : 0);
        b.Ensure(metric_size + 6);
        b.Byte(Tag(5, kDelimited));
        b.Varint(metric_size);
        if (!m->name.empty()) b.Delimited(Tag(1, kDelimited), m->name);
        if (!text.empty()) b.Delimited(Tag(2, kDelimited), text);
        if (value) b.Fixed64(Tag(3, kFixed64), m->value);
        if (m->has_value) {
          b.Byte(Tag(4, kVarint));
          b.Byte(1);
        }
      }
    }
    if (!full) {
      b.Ensure(key.size() + 6);
      b.Delimited(Tag(6, kDelimited), key);  // present even when empty
    }
    b.Close(at, 2);
  }
  b.Ensure(11 + (compared != nullptr ? 6 + compared->md5_result.size() : 0));
  if (int32_t stack_id = g.stack[node]; stack_id != 0) {
    b.Byte(Tag(3, kVarint));
    b.Varint(Int32Bits(stack_id));
  }
  if (compared != nullptr) {
    wire::OrView(compared->texts(), &any);
    if (!compared->md5_result.empty()) {
      wire::OrView(compared->md5_result, &any);
      b.Delimited(Tag(8, kDelimited), compared->md5_result);
    }
  }
  if (wire::HighBit(any)) return false;
  *size = b.body_size();
  out->append(b.Finish(Tag(static_cast<uint32_t>(field), kDelimited)));
  return true;
}

}  // namespace graph_ascend::vis
