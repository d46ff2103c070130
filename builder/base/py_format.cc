#include "base/py_format.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace graph_ascend {

namespace {

// The shortest decimal that reads back as a double (the digits Python's
// repr and std::to_chars give: the fewest significant digits, and of those
// the nearest to the double, a tie to the even one), for the doubles of the
// compare's hot path. Exact integer arithmetic on the double's interval of
// values that round to it, scaled by a power of ten that leaves at most one
// multiple of ten in it (the candidates are then few: the multiple of ten,
// else the integers either side of the scaled double). Covers normal doubles
// from about 4e-37 to 2^52 (the 5^K of the scale fits in 128 bits, the
// scaled fraction too); false for the rest, which take std::to_chars.
using u128 = unsigned __int128;

constexpr int kMaxPow5 = 54;
constexpr std::array<u128, kMaxPow5 + 1> kPow5 = [] {
  std::array<u128, kMaxPow5 + 1> p{};
  p[0] = 1;
  for (int k = 1; k <= kMaxPow5; ++k) p[k] = p[k - 1] * 5;
  return p;
}();

// floor(log10(2^q)) and floor(log10(3 * 2^(q - 2))), for |q| <= 1100.
int FloorLog10Pow2(int q) { return (q * 78913) >> 18; }
int FloorLog10ThreeQuarterPow2(int q) { return (q * 1262611 - 524031) >> 22; }

// x > 0 is digits * 10^exponent with `digits` as short as it can be.
// The shortest of the candidates for x * 10^K = s + f / 2^S: the multiple of
// ten the interval of x may hold (one digit fewer), else the nearer of s and
// s + 1 that it holds (a tie to the even one). f4, one, below and above are
// in units of 2^-(S + 2): the fraction, 1, and how far the interval reaches
// below and above; `closed` when its ends belong to it. T is wide enough for
// 10 units. False when no candidate fits (which this scale rules out).
template <typename T>
bool ChooseDigits(uint64_t s, T f4, T one, T below, T above, bool closed, uint64_t* digits) {
  auto down_in = [&](uint64_t a) {  // s - a lies in the interval
    T d = a * one + f4;
    return closed ? d <= below : d < below;
  };
  auto up_in = [&](uint64_t b) {  // s + b lies in the interval (b >= 1)
    T d = b * one - f4;
    return closed ? d <= above : d < above;
  };
  // Below x the interval reaches less than 5 units, above it less than
  // 5 (20/3 when c is a power of two): s - r can only be in it for r < 5,
  // s - r + 10 for r > 2.
  uint64_t r = s % 10;
  bool down10 = r < 5 && down_in(r), up10 = r > 2 && up_in(10 - r);
  if (down10 != up10) {
    *digits = down10 ? s - r : s - r + 10;
    return true;
  }
  if (down10) return false;  // two multiples of ten: cannot happen at this scale
  bool down = down_in(0), up = up_in(1);
  if (!down && !up) return false;  // cannot happen at this scale either
  if (down && up) {
    T half = one >> 1;
    up = f4 > half || (f4 == half && (s & 1) != 0);
  }
  *digits = up ? s + 1 : s;
  return true;
}

bool ShortestDecimal(double x, uint64_t* digits, int* exponent) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof(bits));
  int biased = static_cast<int>(bits >> 52) & 0x7ff;
  if (biased == 0 || biased == 0x7ff) return false;  // subnormal, inf, NaN
  uint64_t c = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  int q = biased - 1075;  // x = c * 2^q
  // The neighbour below is half as far when c is a power of two (but the smallest).
  bool irregular = c == (uint64_t{1} << 52) && biased > 1;
  int k = irregular ? FloorLog10ThreeQuarterPow2(q) : FloorLog10Pow2(q);
  int K = -k;  // x * 10^K = c * 5^K * 2^(q + K) = N / 2^S
  int S = -(q + K);
  if (K < 0 || K > kMaxPow5 || S < 1 || S > 121) return false;
  *exponent = k;
  // The interval's ends belong to it when c is even (ties round to even);
  // it reaches 5^K / 2 units above x and as far (a quarter when irregular) below.
  bool closed = (c & 1) == 0;
  if (S <= 58 && K <= 27) {
    // Most of the compare's numbers: N fits in 128 bits, the rest in 64
    // (10 units are 10 * 2^(S + 2) < 2^64, 2 * 5^27 < 2^64).
    auto p = static_cast<uint64_t>(kPow5[K]);
    u128 n = static_cast<u128>(c) * p;
    auto s = static_cast<uint64_t>(n >> S);
    uint64_t f = static_cast<uint64_t>(n) & ((uint64_t{1} << S) - 1);
    return ChooseDigits<uint64_t>(s, f << 2, uint64_t{1} << (S + 2), irregular ? p : 2 * p, 2 * p, closed, digits);
  }
  // N = c * 5^K, 181 bits at most: n2:n1:n0.
  u128 p = kPow5[K];
  u128 lo = static_cast<u128>(c) * static_cast<uint64_t>(p);
  u128 hi = static_cast<u128>(c) * static_cast<uint64_t>(p >> 64);
  uint64_t n0 = static_cast<uint64_t>(lo);
  u128 n21 = (lo >> 64) + hi;  // n2:n1 (no carry out: N < 2^181)
  uint64_t s;                  // floor(x * 10^K), below 2^57
  u128 f;                      // its fraction, in units of 2^-S
  if (S >= 64) {
    s = static_cast<uint64_t>(n21 >> (S - 64));
    f = ((n21 & ((static_cast<u128>(1) << (S - 64)) - 1)) << 64) | n0;
  } else {
    u128 n10 = (n21 << 64) | n0;  // N < 2^(57 + S) < 2^121 here
    s = static_cast<uint64_t>(n10 >> S);
    f = n0 & ((uint64_t{1} << S) - 1);
  }
  return ChooseDigits<u128>(s, f << 2, static_cast<u128>(1) << (S + 2), irregular ? p : 2 * p, 2 * p, closed, digits);
}

// The four decimal digits (with leading zeros) of every number below 10^4.
constexpr std::array<char, 4 * 10000> kDigitQuads = [] {
  std::array<char, 4 * 10000> q{};
  for (int i = 0; i < 10000; ++i) {
    q[4 * i] = static_cast<char>('0' + i / 1000);
    q[4 * i + 1] = static_cast<char>('0' + i / 100 % 10);
    q[4 * i + 2] = static_cast<char>('0' + i / 10 % 10);
    q[4 * i + 3] = static_cast<char>('0' + i % 10);
  }
  return q;
}();

// Writes the 8 decimal digits of v < 10^8 (with leading zeros) at p.
void Write8(uint32_t v, char* p) {
  uint32_t hi = v / 10000, lo = v % 10000;
  memcpy(p, kDigitQuads.data() + 4 * hi, 4);
  memcpy(p + 4, kDigitQuads.data() + 4 * lo, 4);
}

// Drops the trailing zeros of d > 0, adding their number to *exponent.
uint64_t StripZeros(uint64_t d, int* exponent) {
  if (d % 10 != 0) return d;  // most of the compare's numbers
  while (d % 100000000 == 0) {
    d /= 100000000;
    *exponent += 8;
  }
  // Fewer than eight zeros are left: 4 + 2 + 1 at most.
  if (d % 10000 == 0) {
    d /= 10000;
    *exponent += 4;
  }
  if (d % 100 == 0) {
    d /= 100;
    *exponent += 2;
  }
  if (d % 10 == 0) {
    d /= 10;
    *exponent += 1;
  }
  return d;
}

constexpr std::array<uint64_t, 20> kPow10 = [] {
  std::array<uint64_t, 20> p{};
  p[0] = 1;
  for (int k = 1; k < 20; ++k) p[k] = p[k - 1] * 10;
  return p;
}();

// The number of decimal digits of d > 0: about log10(2) per bit, then one
// comparison.
int DecimalLength(uint64_t d) {
  int t = ((64 - std::countl_zero(d)) * 1233) >> 12;
  return t - (d < kPow10[t]) + 1;
}

// Writes the n decimal digits of d at p.
void WriteDigits(uint64_t d, int n, char* p) {
  char* q = p + n;
  while (d >= 100000000) {
    uint64_t high = d / 100000000;
    q -= 8;
    Write8(static_cast<uint32_t>(d - high * 100000000), q);
    d = high;
  }
  auto v = static_cast<uint32_t>(d);
  if (v >= 10000) {
    q -= 4;
    memcpy(q, kDigitQuads.data() + 4 * (v % 10000), 4);
    v /= 10000;
  }
  // The 1 to 4 leading digits: the last ones of v's quad.
  const char* quad = kDigitQuads.data() + 4 * v;
  if (v >= 1000) {
    memcpy(q - 4, quad, 4);
  } else if (v >= 100) {
    memcpy(q - 3, quad + 1, 2);
    q[-1] = quad[3];
  } else if (v >= 10) {
    memcpy(q - 2, quad + 2, 2);
  } else {
    q[-1] = quad[3];
  }
}

// Python's repr layout of the n digits d of a value 0.DIGITS * 10^decpt at
// `o`: fixed notation for -4 < decpt <= 16, else d.ddde+XX. Returns the end.
char* Layout(uint64_t d, int n, int decpt, char* o) {
  if (decpt <= -4 || decpt > 16) {
    WriteDigits(d, n, o + 1);
    o[0] = o[1];
    if (n > 1) {
      o[1] = '.';
      o += n + 1;
    } else {
      o += 1;
    }
    *o++ = 'e';
    int e = decpt - 1;
    *o++ = e < 0 ? '-' : '+';
    if (e < 0) e = -e;
    if (e >= 100) {
      *o++ = static_cast<char>('0' + e / 100);
      e %= 100;
    }
    memcpy(o, kDigitQuads.data() + 4 * e + 2, 2);  // two digits at least
    return o + 2;
  }
  if (decpt <= 0) {
    memcpy(o, "0.000", 5);  // "0." and up to three zeros
    o += 2 - decpt;
    WriteDigits(d, n, o);
    return o + n;
  }
  if (decpt >= n) {
    WriteDigits(d, n, o);
    o += n;
    for (int i = n; i < decpt; ++i) *o++ = '0';
    memcpy(o, ".0", 2);
    return o + 2;
  }
  // The digits one place on, then the integer part back in front of the point.
  WriteDigits(d, n, o + 1);
  for (int i = 0; i < decpt; ++i) o[i] = o[i + 1];
  o[decpt] = '.';
  return o + n + 1;
}

// "{:.6e}"'s layout of the 7 digits q of a value 0.DIGITS * 10^decpt at `o`
// ("1.234567e-05"). Returns the end.
char* LayoutExp6(uint64_t q, int decpt, char* o) {
  WriteDigits(q, 7, o + 1);
  o[0] = o[1];
  o[1] = '.';
  o += 8;
  *o++ = 'e';
  int e = decpt - 1;
  *o++ = e < 0 ? '-' : '+';
  if (e < 0) e = -e;
  if (e >= 100) {
    *o++ = static_cast<char>('0' + e / 100);
    e %= 100;
  }
  memcpy(o, kDigitQuads.data() + 4 * e + 2, 2);
  return o + 2;
}

// The shortest digits d (n of them) of x, rounded to their first `keep`
// (1 <= keep < n), half up: rounding x itself there gives the same unless
// the dropped digits are exactly a half (then false). A tie of x's exact
// value H = the kept digits and a 5 would have fewer digits than d, or as
// many and be nearer x, were it on the other side of x than d: the shortest
// digits would be H's.
bool RoundShortest(uint64_t d, int n, int keep, uint64_t* q) {
  uint64_t p = kPow10[n - keep], r = d % p;
  if (r == p / 2) return false;
  *q = d / p + (r > p / 2);
  return true;
}

}  // namespace

size_t PyReprTo(double x, char* out) {
  if (std::isnan(x)) return std::copy_n("nan", 3, out) - out;
  if (std::isinf(x)) return x > 0 ? std::copy_n("inf", 3, out) - out : std::copy_n("-inf", 4, out) - out;
  if (x == 0) return std::signbit(x) ? std::copy_n("-0.0", 4, out) - out : std::copy_n("0.0", 3, out) - out;
  char* o = out;
  if (x < 0) *o++ = '-';
  uint64_t d;
  int exponent;  // the value is d * 10^exponent
  if (!ShortestDecimal(std::fabs(x), &d, &exponent)) {
    // The shortest round-trip digits as d[.ddd]e[+-]XX[X].
    char sci[kPyReprMax];
    char* end = std::to_chars(sci, sci + sizeof(sci), std::fabs(x), std::chars_format::scientific).ptr;
    const char* e = end[-4] == 'e' ? end - 4 : end - 5;
    int exp10 = 0;
    for (const char* q = e + 2; q < end; ++q) exp10 = exp10 * 10 + (*q - '0');
    if (e[1] == '-') exp10 = -exp10;
    d = static_cast<uint64_t>(sci[0] - '0');
    int fraction = 0;
    if (sci[1] == '.') {
      for (const char* q = sci + 2; q < e; ++q, ++fraction) d = d * 10 + static_cast<uint64_t>(*q - '0');
    }
    exponent = exp10 - fraction;
  }
  d = StripZeros(d, &exponent);
  int n = DecimalLength(d);
  return Layout(d, n, exponent + n, o) - out;
}

std::string PyRepr(double x) {
  char out[kPyReprMax];
  return std::string(out, PyReprTo(x, out));
}

std::string PyRound6(double x) {
  if (!std::isfinite(x)) return PyRepr(x);
  // Python rounds the exact binary value half-even at 6 decimals; printing
  // with %.6f gives that correctly rounded decimal, which is then parsed back.
  // to_chars and from_chars are exact as printf and strtod, at a fraction of the cost.
  char buf[400];
  char* end = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::fixed, 6).ptr;
  double rounded = 0;
  std::from_chars(buf, end, rounded);
  return PyRepr(rounded);
}

std::string PyExp6(double x) {
  if (!std::isfinite(x)) return PyRepr(x);
  char buf[64];
  // to_chars writes %.6e's text (two exponent digits at least), exactly.
  return std::string(buf, std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific, 6).ptr);
}

size_t PyRound6OrExp6To(double x, char* out) {
  if (!std::isfinite(x) || x == 0) return PyReprTo(x, out);  // "nan", "-inf", "-0.0": no exponent, round keeps them
  char* o = out;
  if (x < 0) *o++ = '-';
  uint64_t d;
  int exponent;  // the shortest digits of |x|: d * 10^exponent
  if (ShortestDecimal(std::fabs(x), &d, &exponent)) {
    d = StripZeros(d, &exponent);
    int n = DecimalLength(d);
    int decpt = exponent + n;
    if (decpt <= -4 || decpt > 16) {
      // repr has an exponent: 7 significant digits.
      if (n <= 7) return LayoutExp6(d * kPow10[7 - n], decpt, o) - out;
      uint64_t q;
      if (RoundShortest(d, n, 7, &q)) {
        if (q == kPow10[7]) q = kPow10[6], ++decpt;  // 9.9999995 -> 1.000000e+01
        return LayoutExp6(q, decpt, o) - out;
      }
    } else if (exponent >= -6) {
      // Six decimals or fewer: round(x, 6) is x where the doubles are closer than 1e-6
      // (below 2^33), the other six-decimal numbers being 1e-6 from x's digits.
      if (std::fabs(x) < 0x1p33) return Layout(d, n, decpt, o) - out;
    } else {
      // decpt > -4: six decimals keep 3 digits at least.
      uint64_t q;
      if (RoundShortest(d, n, n + exponent + 6, &q) && q < kPow10[15]) {
        // A decimal of 15 digits or fewer is the shortest text of its double: the repr of
        // round(x, 6) is that decimal, q * 10^-6, in fixed notation (1e-4 <= it < 1e16).
        int e = -6;
        q = StripZeros(q, &e);
        int qn = DecimalLength(q);
        return Layout(q, qn, e + qn, o) - out;
      }
    }
  }
  // The rest (ties, long results, subnormals, |x| >= 2^33 with few decimals): as PyExp6 and
  // PyRound6 do it.
  char repr[kPyReprMax];
  size_t n = PyReprTo(x, repr);
  if (memchr(repr, 'e', n) != nullptr) {
    return std::to_chars(out, out + kPyReprMax, x, std::chars_format::scientific, 6).ptr - out;
  }
  char buf[400];
  char* end = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::fixed, 6).ptr;
  double rounded = 0;
  std::from_chars(buf, end, rounded);
  return PyReprTo(rounded, out);
}

size_t PyFixed6To(double x, char* out) {
  uint64_t d;
  int exponent;
  if (std::isfinite(x) && x != 0 && ShortestDecimal(std::fabs(x), &d, &exponent)) {
    d = StripZeros(d, &exponent);
    int n = DecimalLength(d);
    int keep = n + exponent + 6;  // the digits down to the sixth decimal
    uint64_t q = 0;                // |x| rounded to six decimals, in millionths
    bool known = false;
    if (exponent >= -6) {
      // As in PyRound6OrExp6To: no digit to drop, x's digits are the nearest below 2^33.
      known = std::fabs(x) < 0x1p33;
      if (known) q = d * kPow10[exponent + 6];
    } else if (keep > 0) {
      known = RoundShortest(d, n, keep, &q);
    }
    if (known) {
      char* o = out;
      if (x < 0) *o++ = '-';
      uint64_t whole = q / 1000000, millionths = q % 1000000;
      if (whole == 0) {
        *o++ = '0';
      } else {
        int wn = DecimalLength(whole);
        WriteDigits(whole, wn, o);
        o += wn;
      }
      *o++ = '.';
      memset(o, '0', 6);
      if (millionths != 0) {
        int fn = DecimalLength(millionths);
        WriteDigits(millionths, fn, o + 6 - fn);
      }
      return o + 6 - out;
    }
  }
  return std::to_chars(out, out + kPyFixed6Max, x, std::chars_format::fixed, 6).ptr - out;
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
