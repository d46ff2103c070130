#include "json/json_reader.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace graph_ascend::json {
namespace {

constexpr size_t kMaxDepth = 1000;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

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

void JsonReader::SkipSpace() {
  while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
}

Status JsonReader::Expect(char c, const char* what) {
  SkipSpace();
  if (pos_ >= text_.size()) {
    return ErrorHere(std::string("unexpected end of input (truncated file?), expected ") + what);
  }
  if (text_[pos_] != c) return ErrorHere(std::string("expected ") + what + ", found " + Describe(text_, pos_));
  ++pos_;
  return Status::Ok();
}

Status JsonReader::CheckDepth() {
  if (stack_.size() >= kMaxDepth) return ErrorHere("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  return Status::Ok();
}

Result<JsonType> JsonReader::Peek() {
  SkipSpace();
  if (pos_ >= text_.size()) return ErrorHere("unexpected end of input (truncated file?), expected a value");
  switch (text_[pos_]) {
    case '{': return JsonType::kObject;
    case '[': return JsonType::kArray;
    case '"': return JsonType::kString;
    case 't':
    case 'f': return JsonType::kBool;
    case 'n': return JsonType::kNull;
    case 'N':
    case 'I':
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return JsonType::kNumber;
    default: return ErrorHere("expected a value, found " + Describe(text_, pos_));
  }
}

Status JsonReader::EnterObject() {
  GA_RETURN_IF_ERROR(CheckDepth());
  GA_RETURN_IF_ERROR(Expect('{', "'{' (an object)"));
  stack_.push_back(true);
  return Status::Ok();
}

Status JsonReader::EnterArray() {
  GA_RETURN_IF_ERROR(CheckDepth());
  GA_RETURN_IF_ERROR(Expect('[', "'[' (a list)"));
  stack_.push_back(true);
  return Status::Ok();
}

Result<bool> JsonReader::NextMember(std::string_view* key) {
  SkipSpace();
  if (pos_ >= text_.size()) return ErrorHere("unexpected end of input (truncated file?) inside an object");
  if (text_[pos_] == '}') {
    ++pos_;
    stack_.pop_back();
    return false;
  }
  if (!stack_.back()) {
    if (text_[pos_] != ',') return ErrorHere("expected ',' or '}' in an object, found " + Describe(text_, pos_));
    ++pos_;
    SkipSpace();
  }
  stack_.back() = false;
  if (pos_ >= text_.size()) return ErrorHere("unexpected end of input (truncated file?) inside an object");
  if (text_[pos_] != '"') return ErrorHere("expected a key string, found " + Describe(text_, pos_));
  auto k = ParseString(&key_scratch_);
  if (!k.ok()) return k.error();
  *key = *k;
  GA_RETURN_IF_ERROR(Expect(':', "':' after a key"));
  return true;
}

Result<bool> JsonReader::NextElement() {
  SkipSpace();
  if (pos_ >= text_.size()) return ErrorHere("unexpected end of input (truncated file?) inside a list");
  if (text_[pos_] == ']') {
    ++pos_;
    stack_.pop_back();
    return false;
  }
  if (!stack_.back()) {
    if (text_[pos_] != ',') return ErrorHere("expected ',' or ']' in a list, found " + Describe(text_, pos_));
    ++pos_;
  }
  stack_.back() = false;
  return true;
}

Result<std::string_view> JsonReader::ParseString(std::string* scratch) {
  // pos_ is at the opening quote.
  size_t start = ++pos_;
  size_t i = start;
  // Fast path: no escapes.
  while (i < text_.size()) {
    char c = text_[i];
    if (c == '"') {
      pos_ = i + 1;
      return text_.substr(start, i - start);
    }
    if (c == '\\') break;
    if (static_cast<unsigned char>(c) < 0x20) return ErrorAt(i, "control character inside a string");
    if (static_cast<unsigned char>(c) >= 0x80) {
      size_t n = Utf8Length(text_, i);
      if (n == 0) return ErrorAt(i, "a string that is not valid UTF-8");
      i += n;
      continue;
    }
    ++i;
  }
  if (i >= text_.size()) return ErrorAt(start - 1, "unterminated string (truncated file?)");
  scratch->assign(text_.data() + start, i - start);
  while (i < text_.size()) {
    char c = text_[i];
    if (c == '"') {
      pos_ = i + 1;
      return std::string_view(*scratch);
    }
    if (static_cast<unsigned char>(c) < 0x20) return ErrorAt(i, "control character inside a string");
    if (c != '\\') {
      size_t n = static_cast<unsigned char>(c) >= 0x80 ? Utf8Length(text_, i) : 1;
      if (n == 0) return ErrorAt(i, "a string that is not valid UTF-8");
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
        auto hex4 = [&](size_t at, uint32_t* out) {
          if (at + 4 > text_.size()) return false;
          uint32_t v = 0;
          for (size_t k = 0; k < 4; ++k) {
            int h = HexValue(text_[at + k]);
            if (h < 0) return false;
            v = v * 16 + static_cast<uint32_t>(h);
          }
          *out = v;
          return true;
        };
        uint32_t cp;
        if (!hex4(i, &cp)) return ErrorAt(i - 2, "bad \\u escape in a string");
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
        if (cp >= 0xD800 && cp < 0xE000) {
          return ErrorAt(i - 6, "a \\u escape of an unpaired surrogate (not valid UTF-8)");
        }
        AppendUtf8(cp, scratch);
        break;
      }
      default: return ErrorAt(i - 2, std::string("bad escape '\\") + e + "' in a string");
    }
  }
  return ErrorAt(start - 1, "unterminated string (truncated file?)");
}

Result<std::string_view> JsonReader::ReadString() {
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    return ErrorHere("expected a string, found " + Describe(text_, pos_));
  }
  return ParseString(&value_scratch_);
}

Result<JsonNumber> JsonReader::ReadNumber() {
  SkipSpace();
  JsonNumber n;
  std::string_view rest = text_.substr(pos_);
  auto literal = [&](std::string_view word, double value) -> bool {
    if (rest.substr(0, word.size()) != word) return false;
    n.number = value;
    pos_ += word.size();
    return true;
  };
  if (literal("NaN", std::numeric_limits<double>::quiet_NaN()) ||
      literal("Infinity", std::numeric_limits<double>::infinity()) ||
      literal("-Infinity", -std::numeric_limits<double>::infinity())) {
    return n;
  }
  size_t i = pos_;
  if (i < text_.size() && text_[i] == '-') ++i;
  size_t digits = i;
  while (i < text_.size() && text_[i] >= '0' && text_[i] <= '9') ++i;
  if (i == digits) return ErrorHere("expected a number, found " + Describe(text_, pos_));
  bool integer = true;
  if (i < text_.size() && text_[i] == '.') {
    integer = false;
    ++i;
    size_t frac = i;
    while (i < text_.size() && text_[i] >= '0' && text_[i] <= '9') ++i;
    if (i == frac) return ErrorAt(i, "expected digits after the decimal point");
  }
  if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
    integer = false;
    ++i;
    if (i < text_.size() && (text_[i] == '+' || text_[i] == '-')) ++i;
    size_t exp = i;
    while (i < text_.size() && text_[i] >= '0' && text_[i] <= '9') ++i;
    if (i == exp) return ErrorAt(i, "expected digits in the exponent");
  }
  const char* b = text_.data() + pos_;
  const char* e = text_.data() + i;
  if (integer) {
    auto r = std::from_chars(b, e, n.integer);
    if (r.ec == std::errc() && r.ptr == e) {
      n.is_integer = true;
      n.number = static_cast<double>(n.integer);
      pos_ = i;
      return n;
    }
  }
  auto r = std::from_chars(b, e, n.number);
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
    n.number = tiny ? (negative ? -0.0 : 0.0)
                    : (negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
  } else if (r.ec != std::errc() || r.ptr != e) {
    return ErrorHere("bad number");
  }
  pos_ = i;
  return n;
}

Result<bool> JsonReader::ReadBool() {
  SkipSpace();
  std::string_view rest = text_.substr(pos_);
  if (rest.substr(0, 4) == "true") {
    pos_ += 4;
    return true;
  }
  if (rest.substr(0, 5) == "false") {
    pos_ += 5;
    return false;
  }
  return ErrorHere("expected true or false, found " + Describe(text_, pos_));
}

Status JsonReader::ReadNull() {
  SkipSpace();
  if (text_.substr(pos_, 4) == "null") {
    pos_ += 4;
    return Status::Ok();
  }
  return ErrorHere("expected null, found " + Describe(text_, pos_));
}

Status JsonReader::Skip() {
  auto type = Peek();
  if (!type.ok()) return type.error();
  switch (*type) {
    case JsonType::kObject: {
      GA_RETURN_IF_ERROR(EnterObject());
      std::string_view key;
      for (;;) {
        auto more = NextMember(&key);
        if (!more.ok()) return more.error();
        if (!*more) return Status::Ok();
        GA_RETURN_IF_ERROR(Skip());
      }
    }
    case JsonType::kArray: {
      GA_RETURN_IF_ERROR(EnterArray());
      for (;;) {
        auto more = NextElement();
        if (!more.ok()) return more.error();
        if (!*more) return Status::Ok();
        GA_RETURN_IF_ERROR(Skip());
      }
    }
    case JsonType::kString: {
      auto s = ParseString(&value_scratch_);
      return s.ok() ? Status::Ok() : Status(s.error());
    }
    case JsonType::kNumber: {
      auto n = ReadNumber();
      return n.ok() ? Status::Ok() : Status(n.error());
    }
    case JsonType::kBool: {
      auto b = ReadBool();
      return b.ok() ? Status::Ok() : Status(b.error());
    }
    case JsonType::kNull: return ReadNull();
  }
  return Status::Ok();
}

Status JsonReader::ReadCompact(std::string* out) {
  auto type = Peek();
  if (!type.ok()) return type.error();
  switch (*type) {
    case JsonType::kObject: {
      GA_RETURN_IF_ERROR(EnterObject());
      out->push_back('{');
      std::string_view key;
      bool first = true;
      for (;;) {
        auto more = NextMember(&key);
        if (!more.ok()) return more.error();
        if (!*more) break;
        if (!first) out->append(", ");
        first = false;
        AppendQuoted(key, out);
        out->append(": ");
        GA_RETURN_IF_ERROR(ReadCompact(out));
      }
      out->push_back('}');
      return Status::Ok();
    }
    case JsonType::kArray: {
      GA_RETURN_IF_ERROR(EnterArray());
      out->push_back('[');
      bool first = true;
      for (;;) {
        auto more = NextElement();
        if (!more.ok()) return more.error();
        if (!*more) break;
        if (!first) out->append(", ");
        first = false;
        GA_RETURN_IF_ERROR(ReadCompact(out));
      }
      out->push_back(']');
      return Status::Ok();
    }
    case JsonType::kString: {
      auto s = ParseString(&value_scratch_);
      if (!s.ok()) return s.error();
      AppendQuoted(*s, out);
      return Status::Ok();
    }
    default: {
      size_t start = (SkipSpace(), pos_);
      GA_RETURN_IF_ERROR(Skip());
      out->append(text_.substr(start, pos_ - start));
      return Status::Ok();
    }
  }
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
