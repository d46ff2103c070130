#include "json/json_reader.h"

#include <bit>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace graph_ascend::json {
namespace {

static_assert(std::endian::native == std::endian::little, "the word scans below assume little-endian bytes");

constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr uint64_t kHighs = 0x8080808080808080ull;

bool IsSpace(char c) {
  constexpr uint64_t kSpaces = uint64_t{1} << ' ' | uint64_t{1} << '\n' | uint64_t{1} << '\r' | uint64_t{1} << '\t';
  unsigned char u = static_cast<unsigned char>(c);
  return u <= ' ' && (kSpaces >> u & 1) != 0;
}

uint64_t Load64(const char* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

// The high bit of each byte of `w` that ends the plain run of a string: '"',
// '\\', a control character or a non-ASCII byte. Exact at the lowest set bit
// (borrows only reach bytes above a flagged one), which is all a scan needs.
uint64_t StringStops(uint64_t w) {
  uint64_t quote = w ^ (kOnes * '"');
  uint64_t slash = w ^ (kOnes * '\\');
  return (((quote - kOnes) & ~quote) | ((slash - kOnes) & ~slash) | ((w - kOnes * 0x20) & ~w) | w) & kHighs;
}

#if defined(__SSE2__)
// One bit per byte of the 16 at `p` that ends the plain run of a string, as
// StringStops (a signed compare below 0x20 also catches bytes >= 0x80).
inline uint32_t StringStops16(const char* p) {
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
  __m128i slash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
  __m128i stop = _mm_or_si128(_mm_or_si128(quote, slash), _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
  return static_cast<uint32_t>(_mm_movemask_epi8(stop));
}
#endif

// The first byte at or after data[i] that ends the plain run of a string,
// or n.
[[gnu::always_inline]] inline size_t PlainRun(const char* data, size_t i, size_t n) {
#if defined(__SSE2__)
  while (i + 16 <= n) {
    uint32_t stops = StringStops16(data + i);
    if (stops != 0) return i + static_cast<size_t>(std::countr_zero(stops));
    i += 16;
  }
#endif
  while (i + 8 <= n) {
    uint64_t stops = StringStops(Load64(data + i));
    if (stops != 0) return i + (static_cast<size_t>(std::countr_zero(stops)) >> 3);
    i += 8;
  }
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(data[i]);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return i;
    ++i;
  }
  return n;
}

// One bit per byte of the 32 at `p` that is ',' or '\n' (what ends a
// member's number in json.dump's layout).
inline uint32_t NumberEnds32(const char* p) {
#if defined(__SSE2__)
  auto ends16 = [](const char* q) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    __m128i stop = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
    return static_cast<uint32_t>(_mm_movemask_epi8(stop));
  };
  return ends16(p) | ends16(p + 16) << 16;
#else
  uint32_t ends = 0;
  for (int i = 0; i < 32; ++i) ends |= static_cast<uint32_t>(p[i] == ',' || p[i] == '\n') << i;
  return ends;
#endif
}

// A mask of the low `k` bytes of a word (k <= 8).
inline uint64_t LowBytes(size_t k) { return k >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * k)) - 1; }

// The first byte at or after data[i] that is not ' ', or n: an indent,
// sixteen or eight spaces per step.
[[gnu::always_inline]] inline size_t SpaceRun(const char* data, size_t i, size_t n) {
#if defined(__SSE2__)
  while (i + 16 <= n) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    uint32_t other = ~static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')))) & 0xFFFF;
    if (other != 0) return i + static_cast<size_t>(std::countr_zero(other));
    i += 16;
  }
#endif
  while (i + 8 <= n) {
    uint64_t w = Load64(data + i) ^ (kOnes * ' ');
    if (w != 0) return i + (static_cast<size_t>(std::countr_zero(w)) >> 3);
    i += 8;
  }
  while (i < n && data[i] == ' ') ++i;
  return i;
}

// Per byte of `w`: zero for an ASCII digit, non-zero otherwise. Exact up to
// the first non-digit byte (a carry only reaches bytes above a non-digit).
uint64_t NonDigits(uint64_t w) {
  return ((w & 0xF0F0F0F0F0F0F0F0ull) | (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ^
         0x3333333333333333ull;
}

// The value of 8 digit values (bytes 0-9; the first byte is the most
// significant): pairs, then quads, then the whole, by multiplies.
uint64_t EightDigitsValue(uint64_t w) {
  w = w * 10 + (w >> 8);  // each even byte: a two-digit value
  uint64_t pairs = w & 0x000000FF000000FFull;
  uint64_t next = (w >> 16) & 0x000000FF000000FFull;
  return (pairs * (100 + (1000000ull << 32)) + next * (1 + (10000ull << 32))) >> 32;
}

constexpr uint64_t kPow10Int[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// Digits from data[*i] into `mantissa` (wrapping past 19 digits; the caller
// counts them), a word at a time: a run shorter than 8 is shifted up so
// that the missing digits read as leading zeros.
[[gnu::always_inline]] inline void ReadDigits(const char* data, size_t size, size_t* i, uint64_t* mantissa) {
  size_t k = *i;
  uint64_t m = *mantissa;
  while (k + 8 <= size) {
    uint64_t w = Load64(data + k);
    uint64_t other = NonDigits(w);
    uint64_t values = w - kOnes * '0';  // exact below the first non-digit
    if (other == 0) {
      m = m * 100000000 + EightDigitsValue(values);
      k += 8;
      continue;
    }
    unsigned run = static_cast<unsigned>(std::countr_zero(other)) >> 3;
    if (run != 0) {
      m = m * kPow10Int[run] + EightDigitsValue(values << (8 * (8 - run)));
      k += run;
    }
    *i = k;
    *mantissa = m;
    return;
  }
  while (k < size && static_cast<unsigned>(data[k] - '0') < 10) m = m * 10 + (data[k++] - '0');
  *i = k;
  *mantissa = m;
}

// The first byte at or after data[i] that is not '0', or size.
size_t SkipZeros(const char* data, size_t size, size_t i) {
  while (i + 8 <= size) {
    uint64_t other = Load64(data + i) ^ (kOnes * '0');
    if (other != 0) return i + (static_cast<size_t>(std::countr_zero(other)) >> 3);
    i += 8;
  }
  while (i < size && data[i] == '0') ++i;
  return i;
}

// Exact powers of ten for the fast path of double parsing.
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// Why a number could not be read.
enum class NumberFault : uint8_t { kNone, kNotANumber, kNoFraction, kNoExponent, kBad };

// Python's reading of a number's text that the fast paths leave (more than
// 19 significant digits, far exponents, halfway cases, huge integers).
bool NumberFromChars(const char* b, const char* e, bool integer, JsonNumber* n) {
  if (integer) {
    auto r = std::from_chars(b, e, n->integer);
    if (r.ec == std::errc() && r.ptr == e) {
      n->is_integer = true;
      n->number = static_cast<double>(n->integer);
      return true;
    }
  }
  auto r = std::from_chars(b, e, n->number);
  if (r.ec == std::errc::result_out_of_range) {
    // Python reads 1e999 as inf and 1e-999 as 0.0.
    bool negative = *b == '-';
    bool tiny = false;
    for (const char* p = b; p < e; ++p) {
      if (*p == 'e' || *p == 'E') {
        tiny = p + 1 < e && p[1] == '-';
        break;
      }
    }
    n->number = tiny ? (negative ? -0.0 : 0.0)
                     : (negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
  } else if (r.ec != std::errc() || r.ptr != e) {
    return false;
  }
  return true;
}

// Reads the number (or NaN, Infinity, -Infinity) at data[start] into `n`
// (which must be a fresh JsonNumber), setting *end past it; on a fault
// *end is where to report it.
[[gnu::always_inline]] inline NumberFault ScanNumber(const char* data, size_t size, size_t start, JsonNumber* n,
                                                     size_t* end) {
  size_t i = start;
  bool negative = i < size && data[i] == '-';
  i += negative;
  if (i < size && (data[i] == 'N' || data[i] == 'I')) {
    std::string_view rest(data + i, size - i);
    if (!negative && rest.substr(0, 3) == "NaN") {
      n->number = std::numeric_limits<double>::quiet_NaN();
      *end = i + 3;
      return NumberFault::kNone;
    }
    if (rest.substr(0, 8) == "Infinity") {
      n->number = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
      *end = i + 8;
      return NumberFault::kNone;
    }
    return NumberFault::kNotANumber;
  }
  // The digits accumulate into `mantissa`, exact while `significant` (the
  // digits after leading zeros) is at most 19.
  uint64_t mantissa = 0;
  size_t digits = i;
  ReadDigits(data, size, &i, &mantissa);
  if (i == digits) return NumberFault::kNotANumber;
  size_t significant = i - digits;
  // An integer part of zeros (19 digits cannot wrap) carries no digit.
  if (mantissa == 0 && significant <= 19) significant = 0;
  int exponent = 0;
  bool integer = true;
  if (i < size && data[i] == '.') {
    integer = false;
    size_t frac = ++i;
    if (significant == 0) i = SkipZeros(data, size, i);
    size_t first = i;
    ReadDigits(data, size, &i, &mantissa);
    if (i == frac) {
      *end = i;
      return NumberFault::kNoFraction;
    }
    significant += i - first;
    exponent = -static_cast<int>(i - frac);
  }
  if (i < size && (data[i] | 0x20) == 'e') {
    integer = false;
    ++i;
    bool negative_exponent = i < size && data[i] == '-';
    if (i < size && (data[i] == '+' || data[i] == '-')) ++i;
    size_t exp = i;
    int e = 0;
    while (i < size && static_cast<unsigned>(data[i] - '0') < 10) {
      if (e < 100000) e = e * 10 + (data[i] - '0');
      ++i;
    }
    if (i == exp) {
      *end = i;
      return NumberFault::kNoExponent;
    }
    exponent += negative_exponent ? -e : e;
  }
  *end = i;
  if (integer) {
    if (significant <= 18) {
      n->is_integer = true;
      n->integer = negative ? -static_cast<int64_t>(mantissa) : static_cast<int64_t>(mantissa);
      n->number = static_cast<double>(n->integer);
      return NumberFault::kNone;
    }
    return NumberFromChars(data + start, data + i, true, n) ? NumberFault::kNone : NumberFault::kBad;
  }
  // Clinger's fast path: an exact mantissa times an exact power of ten is
  // one correctly rounded operation, so this equals from_chars bit for bit.
  if (significant <= 19 && exponent >= -22 && exponent <= 22) {
    if (mantissa <= (uint64_t{1} << 53)) {
      double v = static_cast<double>(mantissa);
      v = exponent < 0 ? v / kPow10[-exponent] : v * kPow10[exponent];
      n->number = negative ? -v : v;
      return NumberFault::kNone;
    }
#if defined(__x86_64__) && LDBL_MANT_DIG == 64
    // The same in x87 extended precision for mantissas of up to 19 digits
    // (msprobe's float32 statistics have 17): one correctly rounded
    // operation to 64 bits, then to 53. Rounding twice can differ from
    // rounding once only when the first result lies exactly halfway between
    // two doubles (its low 11 bits are 100 0000 0000); those go the slow way.
    long double x = static_cast<long double>(mantissa);
    long double p = static_cast<long double>(kPow10[exponent < 0 ? -exponent : exponent]);
    x = exponent < 0 ? x / p : x * p;
    uint64_t bits;
    memcpy(&bits, &x, 8);
    if ((bits & 0x7FF) != 0x400) {
      double v = static_cast<double>(x);
      n->number = negative ? -v : v;
      return NumberFault::kNone;
    }
#endif
  }
  return NumberFromChars(data + start, data + i, false, n) ? NumberFault::kNone : NumberFault::kBad;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// The length of the UTF-8 sequence starting at text[i] (a byte >= 0x80),
// or 0 when it is not valid UTF-8 (stray continuation, overlong form, an
// encoded surrogate, past U+10FFFF, cut short).
size_t Utf8Length(std::string_view text, size_t i) {
  auto at = [&](size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
  auto cont = [&](size_t k) { return (at(k) & 0xC0) == 0x80; };
  unsigned c = at(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return at(1) >= lo && at(1) <= hi && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return at(1) >= lo && at(1) <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

std::string Describe(std::string_view text, size_t pos) {
  if (pos >= text.size()) return "end of input";
  unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  snprintf(buf, sizeof(buf), "byte 0x%02x", c);
  return buf;
}

}  // namespace

JsonReader::JsonReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {
  // A UTF-8 byte order mark is allowed before the value.
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
  stack_.reserve(64);
}

Error JsonReader::ErrorAt(size_t offset, std::string message) const {
  if (offset > text_.size()) offset = text_.size();
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text_[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  std::string where = "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1) +
                      " (byte " + std::to_string(offset) + ")";
  return Error{file_, std::move(where), std::move(message)};
}

bool JsonReader::Fail(size_t offset, std::string message) {
  error_ = ErrorAt(offset, std::move(message));
  return false;
}

void JsonReader::SkipSpaceRun() {
  const char* data = text_.data();
  size_t n = text_.size();
  size_t i = pos_;
  while (i < n && IsSpace(data[i])) i = SpaceRun(data, i + 1, n);
  pos_ = i;
}

bool JsonReader::Expect(char c, const char* what) {
  SkipSpace();
  if (pos_ >= text_.size()) {
    return Fail(pos_, std::string("unexpected end of input (truncated file?), expected ") + what);
  }
  if (text_[pos_] != c) return Fail(pos_, std::string("expected ") + what + ", found " + Describe(text_, pos_));
  ++pos_;
  return true;
}

bool JsonReader::CheckDepth() {
  if (stack_.size() >= kMaxDepth) return Fail(pos_, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  return true;
}

bool JsonReader::ValueError() {
  if (pos_ >= text_.size()) return Fail(pos_, "unexpected end of input (truncated file?), expected a value");
  return Fail(pos_, "expected a value, found " + Describe(text_, pos_));
}

bool JsonReader::BeginSlow(char c, const char* what) {
  if (!CheckDepth() || !Expect(c, what)) return false;
  stack_.push_back(1);
  return true;
}

JsonReader::Step JsonReader::NextKey(std::string_view* key) {
  // json.dump's layout, `, "plain key": ` or a closing brace after white
  // space, in one pass that changes nothing until it succeeds; anything
  // else is read (or reported) by NextKeySlow from the start.
  const char* data = text_.data();
  size_t n = text_.size();
  size_t i = pos_;
  while (i < n && IsSpace(data[i])) i = SpaceRun(data, i + 1, n);
  if (i >= n || stack_.empty()) return NextKeySlow(key);
  if (data[i] == '}') {
    pos_ = i + 1;
    stack_.pop_back();
    return kEnd;
  }
  if (!stack_.back()) {
    if (data[i] != ',') return NextKeySlow(key);
    ++i;
    while (i < n && IsSpace(data[i])) i = SpaceRun(data, i + 1, n);
  }
  if (i >= n || data[i] != '"') return NextKeySlow(key);
  size_t end = PlainRun(data, i + 1, n);
  if (end + 2 >= n || data[end] != '"' || data[end + 1] != ':' || data[end + 2] != ' ') return NextKeySlow(key);
  *key = std::string_view(data + i + 1, end - i - 1);
  stack_.back() = 0;
  pos_ = end + 3;
  return kMore;
}

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

JsonReader::Step JsonReader::NextKeySlow(std::string_view* key) {
  SkipSpace();
  if (pos_ >= text_.size()) return Fail(pos_, "unexpected end of input (truncated file?) inside an object"), kFailed;
  char c = text_[pos_];
  if (c == '}') {
    ++pos_;
    stack_.pop_back();
    return kEnd;
  }
  if (!stack_.back()) {
    if (c != ',') return Fail(pos_, "expected ',' or '}' in an object, found " + Describe(text_, pos_)), kFailed;
    ++pos_;
    SkipSpace();
    if (pos_ >= text_.size()) return Fail(pos_, "unexpected end of input (truncated file?) inside an object"), kFailed;
    c = text_[pos_];
  }
  stack_.back() = 0;
  if (c != '"') return Fail(pos_, "expected a key string, found " + Describe(text_, pos_)), kFailed;
  if (!ParseString(&key_scratch_, key)) return kFailed;
  // The usual `": "` after a key, without the general white-space skip.
  if (pos_ + 1 < text_.size() && text_[pos_] == ':' && text_[pos_ + 1] == ' ') {
    pos_ += 2;
    return kMore;
  }
  return Expect(':', "':' after a key") ? kMore : kFailed;
}

JsonReader::Step JsonReader::NextItemSlow() {
  // Inline: this is every list's first element and end.
  const char* data = text_.data();
  size_t n = text_.size();
  while (pos_ < n && IsSpace(data[pos_])) pos_ = SpaceRun(data, pos_ + 1, n);
  if (pos_ >= text_.size()) return Fail(pos_, "unexpected end of input (truncated file?) inside a list"), kFailed;
  char c = text_[pos_];
  if (c == ']') {
    ++pos_;
    stack_.pop_back();
    return kEnd;
  }
  if (!stack_.back()) {
    if (c != ',') return Fail(pos_, "expected ',' or ']' in a list, found " + Describe(text_, pos_)), kFailed;
    ++pos_;
  }
  stack_.back() = 0;
  return kMore;
}

bool JsonReader::ParseString(std::string* scratch, std::string_view* out) {
  const char* data = text_.data();
  size_t n = text_.size();
  size_t start = ++pos_;
  size_t i = start;
  for (;;) {
    i = PlainRun(data, i, n);
    if (i >= n) return Fail(start - 1, "unterminated string (truncated file?)");
    unsigned char c = static_cast<unsigned char>(data[i]);
    if (c == '"') {
      pos_ = i + 1;
      *out = std::string_view(data + start, i - start);
      return true;
    }
    if (c == '\\') return ParseEscaped(start, i, scratch, out);
    if (c < 0x20) return Fail(i, "control character inside a string");
    size_t len = Utf8Length(text_, i);  // c >= 0x80
    if (len == 0) return Fail(i, "a string that is not valid UTF-8");
    i += len;
  }
}

bool JsonReader::ParseEscaped(size_t start, size_t i, std::string* scratch, std::string_view* out) {
  scratch->assign(text_.data() + start, i - start);
  while (i < text_.size()) {
    char c = text_[i];
    if (c == '"') {
      pos_ = i + 1;
      *out = *scratch;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20) return Fail(i, "control character inside a string");
    if (c != '\\') {
      size_t n = static_cast<unsigned char>(c) >= 0x80 ? Utf8Length(text_, i) : 1;
      if (n == 0) return Fail(i, "a string that is not valid UTF-8");
      scratch->append(text_.data() + i, n);
      i += n;
      continue;
    }
    if (i + 1 >= text_.size()) break;
    char e = text_[i + 1];
    i += 2;
    switch (e) {
      case '"': scratch->push_back('"'); break;
      case '\\': scratch->push_back('\\'); break;
      case '/': scratch->push_back('/'); break;
      case 'b': scratch->push_back('\b'); break;
      case 'f': scratch->push_back('\f'); break;
      case 'n': scratch->push_back('\n'); break;
      case 'r': scratch->push_back('\r'); break;
      case 't': scratch->push_back('\t'); break;
      case 'u': {
        auto hex4 = [&](size_t at, uint32_t* value) {
          if (at + 4 > text_.size()) return false;
          uint32_t v = 0;
          for (size_t k = 0; k < 4; ++k) {
            int h = HexValue(text_[at + k]);
            if (h < 0) return false;
            v = v * 16 + static_cast<uint32_t>(h);
          }
          *value = v;
          return true;
        };
        uint32_t cp;
        if (!hex4(i, &cp)) return Fail(i - 2, "bad \\u escape in a string");
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= text_.size() && text_[i] == '\\' && text_[i + 1] == 'u') {
          uint32_t lo;
          if (hex4(i + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          }
        }
        // A surrogate left unpaired has no UTF-8 form (protobuf strings, and
        // so the .vis, cannot hold it).
        if (cp >= 0xD800 && cp < 0xE000) return Fail(i - 6, "a \\u escape of an unpaired surrogate (not valid UTF-8)");
        AppendUtf8(cp, scratch);
        break;
      }
      default: return Fail(i - 2, std::string("bad escape '\\") + e + "' in a string");
    }
  }
  return Fail(start - 1, "unterminated string (truncated file?)");
}

bool JsonReader::GetString(std::string_view* s) {
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    return Fail(pos_, "expected a string, found " + Describe(text_, pos_));
  }
  return ParseString(&value_scratch_, s);
}

bool JsonReader::GetNumber(JsonNumber* n) {
  SkipSpace();
  *n = JsonNumber();
  size_t end;
  switch (ScanNumber(text_.data(), text_.size(), pos_, n, &end)) {
    case NumberFault::kNone: pos_ = end; return true;
    case NumberFault::kNotANumber: break;
    case NumberFault::kNoFraction: return Fail(end, "expected digits after the decimal point");
    case NumberFault::kNoExponent: return Fail(end, "expected digits in the exponent");
    case NumberFault::kBad: return Fail(pos_, "bad number");
  }
  return Fail(pos_, "expected a number, found " + Describe(text_, pos_));
}

bool JsonReader::GetBool(bool* b) {
  SkipSpace();
  std::string_view rest = text_.substr(pos_);
  if (rest.substr(0, 4) == "true") {
    pos_ += 4;
    *b = true;
    return true;
  }
  if (rest.substr(0, 5) == "false") {
    pos_ += 5;
    *b = false;
    return true;
  }
  return Fail(pos_, "expected true or false, found " + Describe(text_, pos_));
}

bool JsonReader::GetNull() {
  SkipSpace();
  if (text_.substr(pos_, 4) == "null") {
    pos_ += 4;
    return true;
  }
  return Fail(pos_, "expected null, found " + Describe(text_, pos_));
}

bool JsonReader::SkipValue() {
  JsonType type;
  if (!PeekType(&type)) return false;
  switch (type) {
    case JsonType::kObject: {
      if (!BeginObject()) return false;
      std::string_view key;
      Scalar value;
      for (;;) {
        // A scalar member in one pass (numbers through the cache).
        Member member = NextScalar(&key, &value);
        if (member == Member::kEnd) return true;
        if (member == Member::kMore) continue;
        Step more = NextKey(&key);
        if (more != kMore) return more == kEnd;
        if (!SkipValue()) return false;
      }
    }
    case JsonType::kArray: {
      if (!BeginArray()) return false;
      for (;;) {
        Step more = NextItem();
        if (more != kMore) return more == kEnd;
        if (!SkipValue()) return false;
      }
    }
    case JsonType::kString: {
      std::string_view s;
      return ParseString(&value_scratch_, &s);
    }
    case JsonType::kNumber: {
      JsonNumber n;
      return GetNumber(&n);
    }
    case JsonType::kBool: {
      bool b;
      return GetBool(&b);
    }
    case JsonType::kNull: return GetNull();
  }
  return true;
}

bool JsonReader::GetCompact(std::string* out) {
  JsonType type;
  if (!PeekType(&type)) return false;
  switch (type) {
    case JsonType::kObject: {
      if (!BeginObject()) return false;
      out->push_back('{');
      std::string_view key;
      Scalar value;
      for (bool first = true;; first = false) {
        // A plain key needs no escape, and a scalar's compact text is at hand.
        Member member = NextScalar(&key, &value);
        if (member == Member::kEnd) break;
        if (member == Member::kMore) {
          if (!first) out->append(", ");
          out->push_back('"');
          out->append(key);
          out->append("\": ");
          out->append(value.compact);
          continue;
        }
        Step more = NextKey(&key);
        if (more == kFailed) return false;
        if (more == kEnd) break;
        if (!first) out->append(", ");
        AppendQuoted(key, out);
        out->append(": ");
        if (!GetCompact(out)) return false;
      }
      out->push_back('}');
      return true;
    }
    case JsonType::kArray: {
      if (CompactIntegers(out)) return true;
      if (!BeginArray()) return false;
      out->push_back('[');
      for (bool first = true;; first = false) {
        Step more = NextItem();
        if (more == kFailed) return false;
        if (more == kEnd) break;
        if (!first) out->append(", ");
        if (!GetCompact(out)) return false;
      }
      out->push_back(']');
      return true;
    }
    case JsonType::kString: {
      std::string_view s;
      if (!ParseString(&value_scratch_, &s)) return false;
      AppendQuoted(s, out);
      return true;
    }
    default: {
      size_t start = pos_;  // PeekType skipped the white space
      if (!SkipValue()) return false;
      out->append(text_.data() + start, pos_ - start);
      return true;
    }
  }
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

Status JsonReader::ExpectEnd() {
  SkipSpace();
  if (pos_ != text_.size())
    return ErrorHere("unexpected " + Describe(text_, pos_) + " after the end of the JSON value");
  return Status::Ok();
}

void AppendQuoted(std::string_view s, std::string* out, bool ascii_only) {
  static const char* kHex = "0123456789abcdef";
  out->push_back('"');
  // Characters that need no escape go in runs (the .vis.db writer quotes ~10^8 bytes of items).
  size_t plain = 0;
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  for (size_t i = 0; i < s.size(); ++i) {
    // Eight plain bytes at once: none below 0x20, none '"' or '\\', none above 0x7f when ascii_only.
    while (i + 8 <= s.size()) {
      uint64_t v;
      memcpy(&v, s.data() + i, 8);
      uint64_t special = ((v - kOnes * 0x20) & ~v & kHigh) | has_zero(v ^ (kOnes * '"')) |
                         has_zero(v ^ (kOnes * '\\')) | (ascii_only ? v & kHigh : 0);
      if (special) break;
      i += 8;
    }
    if (i >= s.size()) break;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && (c < 0x80 || !ascii_only)) continue;
    out->append(s.data() + plain, i - plain);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          // c >= 0x80 and ascii_only: decode one UTF-8 sequence and write \uXXXX (surrogate pairs above the BMP).
          uint32_t cp = 0;
          int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
          cp = c & (0x3F >> extra);
          for (int k = 0; k < extra && i + 1 < s.size(); ++k)
            cp = (cp << 6) | (static_cast<unsigned char>(s[++i]) & 0x3F);
          auto put = [&](uint32_t u) {
            out->append("\\u");
            for (int sh = 12; sh >= 0; sh -= 4) out->push_back(kHex[(u >> sh) & 15]);
          };
          if (cp >= 0x10000) {
            cp -= 0x10000;
            put(0xD800 + (cp >> 10));
            put(0xDC00 + (cp & 0x3FF));
          } else {
            put(cp);
          }
        }
    }
    plain = i + 1;
  }
  out->append(s.data() + plain, s.size() - plain);
  out->push_back('"');
}

}  // namespace graph_ascend::json
