#include "base/py_format.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace graph_ascend {

std::string PyRepr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // The shortest round-trip digits, [-]d[.ddd]e[+-]XX, laid out as Python's
  // repr does; built in fixed buffers (this runs for every compared statistic).
  char sci[64];
  char* end = std::to_chars(sci, sci + sizeof(sci) - 1, x, std::chars_format::scientific).ptr;
  *end = '\0';  // for atoi
  const char* p = sci;
  bool negative = *p == '-';
  if (negative) ++p;
  const char* e = std::find(p, static_cast<const char*>(end), 'e');
  char digits[32];
  size_t nd = 0;
  for (const char* q = p; q < e; ++q) {
    if (*q != '.') digits[nd++] = *q;
  }
  int exponent = std::atoi(e + 1);
  int decpt = exponent + 1;  // value = 0.DIGITS * 10^decpt
  char out[64];
  size_t n = 0;
  if (negative) out[n++] = '-';
  if (decpt <= -4 || decpt > 16) {
    out[n++] = digits[0];
    if (nd > 1) {
      out[n++] = '.';
      for (size_t i = 1; i < nd; ++i) out[n++] = digits[i];
    }
    // e[+-]XX with at least two digits (|exponent| <= 324), without snprintf.
    int a = std::abs(exponent);
    out[n++] = 'e';
    out[n++] = exponent < 0 ? '-' : '+';
    if (a >= 100) out[n++] = static_cast<char>('0' + a / 100);
    out[n++] = static_cast<char>('0' + a / 10 % 10);
    out[n++] = static_cast<char>('0' + a % 10);
  } else if (decpt <= 0) {
    out[n++] = '0';
    out[n++] = '.';
    for (int i = 0; i < -decpt; ++i) out[n++] = '0';
    for (size_t i = 0; i < nd; ++i) out[n++] = digits[i];
  } else if (static_cast<size_t>(decpt) >= nd) {
    for (size_t i = 0; i < nd; ++i) out[n++] = digits[i];
    for (size_t i = nd; i < static_cast<size_t>(decpt); ++i) out[n++] = '0';
    out[n++] = '.';
    out[n++] = '0';
  } else {
    for (size_t i = 0; i < nd; ++i) {
      if (i == static_cast<size_t>(decpt)) out[n++] = '.';
      out[n++] = digits[i];
    }
  }
  return std::string(out, n);
}

std::string PyRound6(double x) {
  if (!std::isfinite(x)) return PyRepr(x);
  // Python rounds the exact binary value half-even at 6 decimals; printing
  // with %.6f gives that correctly rounded decimal, which is then parsed back.
  char buf[400];
  snprintf(buf, sizeof(buf), "%.6f", x);
  return PyRepr(std::strtod(buf, nullptr));
}

std::string PyExp6(double x) {
  if (!std::isfinite(x)) return PyRepr(x);
  char buf[64];
  snprintf(buf, sizeof(buf), "%.6e", x);
  return buf;
}

std::string Crc32Hex(const std::string& s) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char ch : s) crc = table[(crc ^ ch) & 0xFF] ^ (crc >> 8);
  crc ^= 0xFFFFFFFFu;
  char buf[16];
  snprintf(buf, sizeof(buf), "%08x", crc);
  return buf;
}

}  // namespace graph_ascend
