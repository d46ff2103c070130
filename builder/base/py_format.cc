#include "base/py_format.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace graph_ascend {

size_t PyReprTo(double x, char* out) {
  if (std::isnan(x)) return std::copy_n("nan", 3, out) - out;
  if (std::isinf(x)) return x > 0 ? std::copy_n("inf", 3, out) - out : std::copy_n("-inf", 4, out) - out;
  if (x == 0) return std::signbit(x) ? std::copy_n("-0.0", 4, out) - out : std::copy_n("0.0", 3, out) - out;
  // The shortest round-trip digits, [-]d[.ddd]e[+-]XX, laid out as Python's
  // repr does (this runs for every compared statistic).
  char sci[kPyReprMax];
  const char* end = std::to_chars(sci, sci + sizeof(sci), x, std::chars_format::scientific).ptr;
  const char* p = sci;
  char* o = out;
  if (*p == '-') {
    *o++ = '-';
    ++p;
  }
  char digits[24];
  size_t nd = 0;
  digits[nd++] = *p++;
  if (*p == '.') {
    for (++p; *p != 'e'; ++p) digits[nd++] = *p;
  }
  ++p;  // 'e'
  bool negative_exponent = *p == '-';
  int exponent = 0;
  for (++p; p < end; ++p) exponent = exponent * 10 + (*p - '0');
  if (negative_exponent) exponent = -exponent;
  int decpt = exponent + 1;  // value = 0.DIGITS * 10^decpt
  if (decpt <= -4 || decpt > 16) {
    *o++ = digits[0];
    if (nd > 1) {
      *o++ = '.';
      o = std::copy_n(digits + 1, nd - 1, o);
    }
    // e[+-]XX with at least two digits (|exponent| <= 324).
    int a = std::abs(exponent);
    *o++ = 'e';
    *o++ = exponent < 0 ? '-' : '+';
    if (a >= 100) *o++ = static_cast<char>('0' + a / 100);
    *o++ = static_cast<char>('0' + a / 10 % 10);
    *o++ = static_cast<char>('0' + a % 10);
  } else if (decpt <= 0) {
    *o++ = '0';
    *o++ = '.';
    o = std::fill_n(o, -decpt, '0');
    o = std::copy_n(digits, nd, o);
  } else if (static_cast<size_t>(decpt) >= nd) {
    o = std::copy_n(digits, nd, o);
    o = std::fill_n(o, decpt - nd, '0');
    *o++ = '.';
    *o++ = '0';
  } else {
    o = std::copy_n(digits, decpt, o);
    *o++ = '.';
    o = std::copy_n(digits + decpt, nd - decpt, o);
  }
  return o - out;
}

std::string PyRepr(double x) {
  char out[kPyReprMax];
  return std::string(out, PyReprTo(x, out));
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
