// Reading a number's text (internal to json/): Python's json dialect, NaN,
// Infinity and -Infinity included, to the double (and int64) Python reads,
// bit for bit, by fast paths for the digits json.dump writes and
// std::from_chars for the rest. Shared by JsonReader's checked reads and its
// one-pass member reads, which must give the same numbers and faults.
#pragma once

#include <bit>
#include <cfloat>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "json/byte_scan.h"
#include "json/json_reader.h"

namespace graph_ascend::json::scan {

// Per byte of `w`: zero for an ASCII digit, non-zero otherwise. Exact up to
// the first non-digit byte (a carry only reaches bytes above a non-digit).
inline uint64_t NonDigits(uint64_t w) {
  return ((w & 0xF0F0F0F0F0F0F0F0ull) | (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ^
         0x3333333333333333ull;
}

// The value of 8 digit values (bytes 0-9; the first byte is the most
// significant): pairs, then quads, then the whole, by multiplies.
inline uint64_t EightDigitsValue(uint64_t w) {
  w = w * 10 + (w >> 8);  // each even byte: a two-digit value
  uint64_t pairs = w & 0x000000FF000000FFull;
  uint64_t next = (w >> 16) & 0x000000FF000000FFull;
  return (pairs * (100 + (1000000ull << 32)) + next * (1 + (10000ull << 32))) >> 32;
}

inline constexpr uint64_t kPow10Int[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

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
inline size_t SkipZeros(const char* data, size_t size, size_t i) {
  while (i + 8 <= size) {
    uint64_t other = Load64(data + i) ^ (kOnes * '0');
    if (other != 0) return i + (static_cast<size_t>(std::countr_zero(other)) >> 3);
    i += 8;
  }
  while (i < size && data[i] == '0') ++i;
  return i;
}

// Exact powers of ten for the fast path of double parsing.
inline constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// Why a number could not be read.
enum class NumberFault : uint8_t { kNone, kNotANumber, kNoFraction, kNoExponent, kBad };

// Python's reading of a number's text that the fast paths leave (more than
// 19 significant digits, far exponents, halfway cases, huge integers).
inline bool NumberFromChars(const char* b, const char* e, bool integer, JsonNumber* n) {
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

}  // namespace graph_ascend::json::scan
