#include "base/status.h"

#include <cstdio>

namespace graph_ascend {
namespace {

// The length of the valid UTF-8 sequence at `s[i]`, 0 when there is none.
size_t Utf8Length(std::string_view s, size_t i) {
  auto c = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return k < s.size() && (c(k) & 0xC0) == 0x80; };
  unsigned char b = c(i);
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (b == 0xE0 && c(i + 1) < 0xA0) return 0;   // overlong
    if (b == 0xED && c(i + 1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (b == 0xF0 && c(i + 1) < 0x90) return 0;   // overlong
    if (b == 0xF4 && c(i + 1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char b = static_cast<unsigned char>(text[i]);
    size_t n = b < 0x20 || b == 0x7F ? 0 : Utf8Length(text, i);
    if (n > 0) {
      out.append(text, i, n);
      i += n;
      continue;
    }
    if (b == '\n') {
      out += "\\n";
    } else if (b == '\r') {
      out += "\\r";
    } else if (b == '\t') {
      out += "\\t";
    } else {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02x", b);
      out += buf;
    }
    ++i;
  }
  return out;
}

std::string QuoteBytes(std::string_view bytes, size_t max) {
  if (bytes.size() <= max) return OneLine(bytes);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(bytes[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return OneLine(bytes.substr(0, cut)) + "...";
}

std::string Error::ToString() const {
  std::string out;
  if (!file.empty()) out += file;
  if (!where.empty()) {
    if (!out.empty()) out += ": ";
    out += where;
  }
  if (!out.empty()) out += ": ";
  out += message;
  return OneLine(out);
}

}  // namespace graph_ascend
