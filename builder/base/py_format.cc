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
  // The shortest round-trip digits as [-]d[.ddd]e[+-]XX[X], laid out as
  // Python's repr does (this runs for every compared statistic).
  char sci[kPyReprMax];
  char* end = std::to_chars(sci, sci + sizeof(sci), x, std::chars_format::scientific).ptr;
  const char* e = end[-4] == 'e' ? end - 4 : end - 5;
  int exponent = 0;
  for (const char* q = e + 2; q < end; ++q) exponent = exponent * 10 + (*q - '0');
  if (e[1] == '-') exponent = -exponent;
  int decpt = exponent + 1;  // value = 0.DIGITS * 10^decpt
  // Python's exponent form is the same text: at least two exponent digits.
  if (decpt <= -4 || decpt > 16) return std::copy(sci, end, out) - out;
  const char* p = sci;
  char* o = out;
  if (*p == '-') {
    *o++ = '-';
    ++p;
  }
  // The digits: p[0], then rest[0, rest_size).
  const char* rest = p + 2;
  int rest_size = p[1] == '.' ? static_cast<int>(e - rest) : 0;
  int nd = 1 + rest_size;
  if (decpt <= 0) {
    *o++ = '0';
    *o++ = '.';
    for (int i = 0; i < -decpt; ++i) *o++ = '0';
    *o++ = p[0];
    for (int i = 0; i < rest_size; ++i) *o++ = rest[i];
  } else if (decpt >= nd) {
    *o++ = p[0];
    for (int i = 0; i < rest_size; ++i) *o++ = rest[i];
    for (int i = nd; i < decpt; ++i) *o++ = '0';
    *o++ = '.';
    *o++ = '0';
  } else {
    *o++ = p[0];
    for (int i = 0; i < decpt - 1; ++i) *o++ = rest[i];
    *o++ = '.';
    for (int i = decpt - 1; i < rest_size; ++i) *o++ = rest[i];
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
