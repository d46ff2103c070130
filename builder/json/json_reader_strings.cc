// JSON strings both ways: JsonReader's reading of a string value or key
// (escapes, \u surrogate pairs, UTF-8 checked) and AppendQuoted's writing.
#include "json/json_reader.h"

#include <cstring>

#include "json/byte_scan.h"

namespace graph_ascend::json {

using namespace scan;

namespace {

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

}  // namespace

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

void AppendQuoted(std::string_view s, std::string* out, bool ascii_only) {
  static const char* kHex = "0123456789abcdef";
  out->push_back('"');
  // Characters that need no escape go in runs (the .vis.db writer quotes ~10^8 bytes of items).
  size_t plain = 0;
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  for (size_t i = 0; i < s.size(); ++i) {
    // Eight plain bytes at once: none below 0x20, none '"' or '\\', none above 0x7f when ascii_only.
    // Past the end the last eight bytes are looked at again, or, in a shorter string, plain ones.
    while (i < s.size()) {
      uint64_t v;
      if (i + 8 <= s.size()) {
        memcpy(&v, s.data() + i, 8);
      } else if (s.size() >= 8) {
        memcpy(&v, s.data() + s.size() - 8, 8);
      } else {
        v = kOnes * 'a';
        memcpy(&v, s.data() + i, s.size() - i);
      }
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
