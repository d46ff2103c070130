#include "json/json_reader.h"

#include <bit>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace graph_ascend::json {
namespace {

static_assert(std::endian::native == std::endian::little, "the word scans below assume little-endian bytes");

constexpr size_t kMaxDepth = 1000;
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

// Whether all 8 bytes of `w` are ASCII digits.
bool EightDigits(uint64_t w) {
  return (((w & 0xF0F0F0F0F0F0F0F0ull) | (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ==
          0x3333333333333333ull);
}

// The value of 8 ASCII digits (the first byte is the most significant):
// pairs, then quads, then the whole, by multiplies.
uint64_t EightDigitsValue(uint64_t w) {
  w -= 0x3030303030303030ull;
  w = w * 10 + (w >> 8);  // each even byte: a two-digit value
  uint64_t pairs = w & 0x000000FF000000FFull;
  uint64_t next = (w >> 16) & 0x000000FF000000FFull;
  return (pairs * (100 + (1000000ull << 32)) + next * (1 + (10000ull << 32))) >> 32;
}

// Digits from data[*i] into `mantissa` (wrapping past 19 digits; the caller
// counts them).
[[gnu::always_inline]] inline void ReadDigits(const char* data, size_t size, size_t* i, uint64_t* mantissa) {
  size_t k = *i;
  uint64_t m = *mantissa;
  while (k + 8 <= size) {
    uint64_t w = Load64(data + k);
    if (!EightDigits(w)) break;
    m = m * 100000000 + EightDigitsValue(w);
    k += 8;
  }
  while (k < size && static_cast<unsigned>(data[k] - '0') < 10) m = m * 10 + (data[k++] - '0');
  *i = k;
  *mantissa = m;
}

// Exact powers of ten for the fast path of double parsing.
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

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


bool JsonReader::BeginObject() {
  if (!CheckDepth() || !Expect('{', "'{' (an object)")) return false;
  stack_.push_back(1);
  return true;
}

bool JsonReader::BeginArray() {
  if (!CheckDepth() || !Expect('[', "'[' (a list)")) return false;
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

JsonReader::Step JsonReader::NextItem() {
  SkipSpace();
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
  const char* data = text_.data();
  size_t size = text_.size();
  size_t i = pos_;
  bool negative = i < size && data[i] == '-';
  i += negative;
  if (i < size && (data[i] == 'N' || data[i] == 'I')) {
    std::string_view rest = text_.substr(pos_);
    auto literal = [&](std::string_view word, double value) -> bool {
      if (rest.substr(0, word.size()) != word) return false;
      n->number = value;
      pos_ += word.size();
      return true;
    };
    if (literal("NaN", std::numeric_limits<double>::quiet_NaN()) ||
        literal("Infinity", std::numeric_limits<double>::infinity()) ||
        literal("-Infinity", -std::numeric_limits<double>::infinity())) {
      return true;
    }
    return Fail(pos_, "expected a number, found " + Describe(text_, pos_));
  }
  // The digits accumulate into `mantissa`; exact while there are at most 19
  // of them after leading zeros.
  uint64_t mantissa = 0;
  size_t digits = i;
  ReadDigits(data, size, &i, &mantissa);
  if (i == digits) return Fail(pos_, "expected a number, found " + Describe(text_, pos_));
  size_t count = i - digits;
  int exponent = 0;
  bool integer = true;
  if (i < size && data[i] == '.') {
    integer = false;
    size_t frac = ++i;
    ReadDigits(data, size, &i, &mantissa);
    if (i == frac) return Fail(i, "expected digits after the decimal point");
    count += i - frac;
    exponent = -static_cast<int>(i - frac);
  }
  if (i < size && (data[i] == 'e' || data[i] == 'E')) {
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
    if (i == exp) return Fail(i, "expected digits in the exponent");
    exponent += negative_exponent ? -e : e;
  }
  size_t start = pos_;
  if (count > 19) {
    // Leading zeros do not count ("0.000123..." is common).
    for (size_t k = digits; k < i && (data[k] == '0' || data[k] == '.'); ++k) count -= data[k] == '0';
  }
  if (integer) {
    if (count <= 18) {
      n->is_integer = true;
      n->integer = negative ? -static_cast<int64_t>(mantissa) : static_cast<int64_t>(mantissa);
      n->number = static_cast<double>(n->integer);
      pos_ = i;
      return true;
    }
    return ParseNumberSlow(start, i, true, n);
  }
  // Clinger's fast path: an exact mantissa times an exact power of ten is
  // one correctly rounded operation, so this equals from_chars bit for bit.
  if (count <= 19 && exponent >= -22 && exponent <= 22) {
    if (mantissa <= (uint64_t{1} << 53)) {
      double v = static_cast<double>(mantissa);
      v = exponent < 0 ? v / kPow10[-exponent] : v * kPow10[exponent];
      n->number = negative ? -v : v;
      pos_ = i;
      return true;
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
      pos_ = i;
      return true;
    }
#endif
  }
  return ParseNumberSlow(start, i, false, n);
}

bool JsonReader::ParseNumberSlow(size_t start, size_t end, bool integer, JsonNumber* n) {
  const char* b = text_.data() + start;
  const char* e = text_.data() + end;
  if (integer) {
    auto r = std::from_chars(b, e, n->integer);
    if (r.ec == std::errc() && r.ptr == e) {
      n->is_integer = true;
      n->number = static_cast<double>(n->integer);
      pos_ = end;
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
    return Fail(start, "bad number");
  }
  pos_ = end;
  return true;
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
      for (;;) {
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
      for (bool first = true;; first = false) {
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
  if (pos_ != text_.size()) return ErrorHere("unexpected " + Describe(text_, pos_) + " after the end of the JSON value");
  return Status::Ok();
}

void AppendQuoted(std::string_view s, std::string* out, bool ascii_only) {
  static const char* kHex = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
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
        } else if (c >= 0x80 && ascii_only) {
          // Decode one UTF-8 sequence and write \uXXXX (surrogate pairs above the BMP).
          uint32_t cp = 0;
          int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
          cp = c & (0x3F >> extra);
          for (int k = 0; k < extra && i + 1 < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[++i]) & 0x3F);
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
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

}  // namespace graph_ascend::json
