// JsonReader's reads of the members json.dump writes, in one pass where its
// layout allows (json_reader.h: NextScalar, NextKnownRun, ContainerEndAhead),
// and GetCompact's one scan of a list of integers: each falls back to the
// general reads (json_reader.cc) on anything else, changing nothing.
#include "json/json_reader.h"

#include <cstring>
#include <memory>

#include "json/byte_scan.h"
#include "json/number_scan.h"

namespace graph_ascend::json {

using namespace scan;

[[gnu::always_inline]] inline bool JsonReader::ScalarAt(size_t v, Scalar* value, size_t* end) {
  const char* data = text_.data();
  size_t n = text_.size();
  switch (data[v]) {
    case '"': {
      size_t close = PlainRun(data, v + 1, n);
      if (close >= n || data[close] != '"') return false;
      value->type = JsonType::kString;
      value->text = std::string_view(data + v + 1, close - v - 1);
      value->compact = std::string_view(data + v, close + 1 - v);
      *end = close + 1;
      return true;
    }
    case 't':
    case 'f':
    case 'n': {
      std::string_view word = data[v] == 't' ? "true" : data[v] == 'f' ? "false" : "null";
      if (std::string_view(data + v, n - v).substr(0, word.size()) != word) return false;
      value->type = data[v] == 'n' ? JsonType::kNull : JsonType::kBool;
      value->boolean = data[v] == 't';
      value->compact = std::string_view(data + v, word.size());
      *end = v + word.size();
      return true;
    }
    case '[': {
      if (stack_.size() >= kMaxDepth) return false;
      value->type = JsonType::kArray;
      value->text = compact_scratch_;
      // A shape is often the one before it again (consecutive tensors).
      if (!last_list_.empty() && n - v >= last_list_.size() &&
          memcmp(data + v, last_list_.data(), last_list_.size()) == 0) {
        value->list_serial = list_serial_;
        value->compact = compact_scratch_;
        *end = v + last_list_.size();
        return true;
      }
      size_t at = pos_;
      pos_ = v;
      compact_scratch_.clear();
      bool ok = CompactIntegers(&compact_scratch_);
      *end = pos_;
      pos_ = at;
      if (!ok) {
        last_list_ = {};
        return false;
      }
      last_list_ = std::string_view(data + v, *end - v);
      value->list_serial = ++list_serial_;
      value->text = compact_scratch_;
      value->compact = compact_scratch_;
      return true;
    }
    default: {
      // json.dump ends a member's number with ',' or a line break, and a
      // dump repeats most of its statistics (a tensor is dumped as the
      // output of one call and as the input of the next): a text read
      // before, with the same end, is the same number.
      value->type = JsonType::kNumber;
      CachedNumber* slot = nullptr;
      size_t size = 0;
      uint64_t words[3];
      if (v + 32 <= n) {
        uint32_t ends = NumberEnds32(data + v);
        size = ends == 0 ? 0 : static_cast<size_t>(std::countr_zero(ends));
        if (size != 0 && size <= sizeof(words)) {
          words[0] = Load64(data + v) & LowBytes(size);
          words[1] = size > 8 ? Load64(data + v + 8) & LowBytes(size - 8) : 0;
          words[2] = size > 16 ? Load64(data + v + 16) & LowBytes(size - 16) : 0;
          if (numbers_ == nullptr) numbers_ = std::make_unique<CachedNumber[]>(kCachedNumbers);
          uint64_t mixed =
              (words[0] ^ std::rotl(words[1], 21) ^ std::rotl(words[2], 42) ^ size) * 0x9E3779B97F4A7C15ull;
          slot = &numbers_[mixed >> (64 - kCachedNumberBits)];
          if (slot->size == size && slot->text[0] == words[0] && slot->text[1] == words[1] &&
              slot->text[2] == words[2]) {
            value->number = slot->number;
            value->compact = std::string_view(data + v, size);
            *end = v + size;
            return true;
          }
        }
      }
      value->number = JsonNumber();
      if (ScanNumber(data, n, v, &value->number, end) != NumberFault::kNone) return false;
      value->compact = std::string_view(data + v, *end - v);
      if (slot != nullptr && *end == v + size) {
        memcpy(slot->text, words, sizeof(words));
        slot->size = static_cast<uint32_t>(size);
        slot->number = value->number;
      }
      return true;
    }
  }
}

JsonReader::Member JsonReader::NextScalar(std::string_view* key, Scalar* value, MemberHead* head) {
  const char* data = text_.data();
  size_t n = text_.size();
  size_t i = pos_;
  while (i < n && IsSpace(data[i])) i = SpaceRun(data, i + 1, n);
  if (i >= n || stack_.empty()) return Member::kOther;
  if (data[i] == '}') {
    pos_ = i + 1;
    stack_.pop_back();
    return Member::kEnd;
  }
  bool comma = !stack_.back();
  if (comma) {
    if (data[i] != ',') return Member::kOther;
    ++i;
    while (i < n && IsSpace(data[i])) i = SpaceRun(data, i + 1, n);
  }
  if (i >= n || data[i] != '"') return Member::kOther;
  size_t key_end = PlainRun(data, i + 1, n);
  size_t v = key_end + 3;
  if (v >= n || data[key_end] != '"' || data[key_end + 1] != ':' || data[key_end + 2] != ' ') return Member::kOther;
  size_t end;
  if (!ScalarAt(v, value, &end)) return Member::kOther;
  *key = std::string_view(data + i + 1, key_end - i - 1);
  if (head != nullptr) {
    size_t size = v - pos_;
    head->size_ = size <= sizeof(head->bytes_) ? static_cast<uint8_t>(size) : 0;
    head->comma_ = comma;
    memset(head->bytes_, 0, sizeof(head->bytes_));
    if (head->size_ != 0) memcpy(head->bytes_, data + pos_, size);
  }
  stack_.back() = 0;
  pos_ = end;
  return Member::kMore;
}

[[gnu::always_inline]] inline bool JsonReader::HeadMatches(const char* p, const MemberHead& head) {
  static_assert(sizeof(head.bytes_) == 32);
#if defined(__SSE2__)
  auto equal16 = [](const char* a, const char* b) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
    __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)));
  };
  uint32_t equal = equal16(p, head.bytes_) | equal16(p + 16, head.bytes_ + 16) << 16;
  uint32_t wanted = head.size_ == 32 ? ~0u : (1u << head.size_) - 1;
  return (equal & wanted) == wanted;
#else
  return memcmp(p, head.bytes_, head.size_) == 0;
#endif
}

JsonReader::Member JsonReader::NextKnownRun(const MemberHead* heads, size_t count, Scalar* values, size_t* read) {
  const char* data = text_.data();
  size_t n = text_.size();
  *read = 0;
  if (stack_.empty()) return Member::kOther;
  bool first = stack_.back() != 0;
  size_t pos = pos_;
  size_t k = 0;
  for (; k < count; ++k) {
    const MemberHead& head = heads[k];
    if (head.size_ == 0 || pos + sizeof(head.bytes_) >= n || head.comma_ == first || !HeadMatches(data + pos, head)) {
      break;
    }
    size_t end;
    if (!ScalarAt(pos + head.size_, &values[k], &end)) break;
    pos = end;
    first = false;
  }
  *read = k;
  if (k != 0) {
    stack_.back() = 0;
    pos_ = pos;
  }
  // json.dump's `\n<indent>}` after the last member.
  while (pos < n && IsSpace(data[pos])) pos = SpaceRun(data, pos + 1, n);
  if (pos >= n || data[pos] != '}') return Member::kOther;
  pos_ = pos + 1;
  stack_.pop_back();
  return Member::kEnd;
}

size_t JsonReader::ContainerEndAhead(size_t max_depth) const {
  const char* data = text_.data();
  size_t n = text_.size();
  size_t i = pos_;
  if (i >= n || (data[i] != '{' && data[i] != '[')) return 0;
  size_t depth = 0;
  bool in_string = false;
  // Per bracket, quote or backslash at data[k]: 1 at the end, -1 to give up.
  auto step = [&](size_t k) {
    char c = data[k];
    if (c == '\\') return -1;
    if (c == '"') {
      in_string = !in_string;
      return 0;
    }
    if (in_string) return 0;
    if (c == '{' || c == '[') return ++depth > max_depth ? -1 : 0;
    return --depth == 0 ? 1 : 0;
  };
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16) {
    // '{' and '[' differ only in the 0x20 bit, as do '}' and ']'.
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i marks = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')), _mm_cmpeq_epi8(folded, _mm_set1_epi8('}'))),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    for (uint32_t m = static_cast<uint32_t>(_mm_movemask_epi8(marks)); m != 0; m &= m - 1) {
      size_t k = i + static_cast<size_t>(std::countr_zero(m));
      int r = step(k);
      if (r != 0) return r > 0 ? k + 1 : 0;
    }
  }
#endif
  for (; i < n; ++i) {
    char c = data[i];
    if ((c | 0x20) != '{' && (c | 0x20) != '}' && c != '"' && c != '\\') continue;
    int r = step(i);
    if (r != 0) return r > 0 ? i + 1 : 0;
  }
  return 0;
}

bool JsonReader::CompactIntegers(std::string* out) {
  if (stack_.size() >= kMaxDepth) return false;
  const char* data = text_.data();
  size_t n = text_.size();
  size_t i = pos_ + 1;  // past '['
  auto skip_space = [&] {
    while (i < n && IsSpace(data[i])) i = SpaceRun(data, i + 1, n);
  };
  size_t mark = out->size();
  out->push_back('[');
  skip_space();
  if (i < n && data[i] == ']') {
    out->push_back(']');
    pos_ = i + 1;
    return true;
  }
  for (;;) {
    size_t start = i;
    if (i < n && data[i] == '-') ++i;
    size_t digits = i;
    while (i < n && static_cast<unsigned>(data[i] - '0') < 10) ++i;
    if (i == digits) break;
    out->append(data + start, i - start);
    skip_space();
    if (i >= n) break;
    if (data[i] == ']') {
      out->push_back(']');
      pos_ = i + 1;
      return true;
    }
    if (data[i] != ',') break;
    out->append(", ");
    ++i;
    skip_space();
  }
  out->resize(mark);
  return false;
}

}  // namespace graph_ascend::json
