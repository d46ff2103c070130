// Python's number texts (base/py_format.h): repr(float) against the
// shortest round-trip digits of std::to_chars laid out as Python does, on
// doubles of every exponent, the differences and ratios of float32
// statistics the compare prints, short decimals and their neighbours, and
// powers of two (whose interval is lopsided).
#include "base/py_format.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

namespace graph_ascend {
namespace {

// repr(x) from std::to_chars: its shortest scientific digits, in fixed
// notation for exponents -5 < e < 16 as Python writes them.
std::string Reference(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  char buf[64];
  std::string sci(buf, std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific).ptr);
  std::string sign = x < 0 ? "-" : "";
  std::string m = sci.substr(sign.size(), sci.find('e') - sign.size());
  int exp10 = std::atoi(sci.c_str() + sci.find('e') + 1);
  std::string digits = m.substr(0, 1) + (m.size() > 2 ? m.substr(2) : "");
  int decpt = exp10 + 1;
  if (decpt <= -4 || decpt > 16) return sci;
  int nd = static_cast<int>(digits.size());
  if (decpt <= 0) return sign + "0." + std::string(-decpt, '0') + digits;
  if (decpt >= nd) return sign + digits + std::string(decpt - nd, '0') + ".0";
  return sign + digits.substr(0, decpt) + "." + digits.substr(decpt);
}

double FromBits(uint64_t bits) {
  double x;
  memcpy(&x, &bits, sizeof(x));
  return x;
}

// Checks x and its two neighbours; false at the first difference.
bool Same(double x) {
  for (double y : {x, std::nextafter(x, -INFINITY), std::nextafter(x, INFINITY)}) {
    std::string want = Reference(y);
    char out[kPyReprMax];
    std::string got(out, PyReprTo(y, out));
    uint64_t bits;
    memcpy(&bits, &y, sizeof(bits));
    EXPECT_EQ(got, want) << "bits " << std::hex << bits;
    if (got != want) return false;
    EXPECT_EQ(PyRepr(y), want);
  }
  return true;
}

TEST(PyReprTest, FixedCases) {
  EXPECT_EQ(PyRepr(0.1), "0.1");
  EXPECT_EQ(PyRepr(1e-05), "1e-05");
  EXPECT_EQ(PyRepr(0.0001), "0.0001");
  EXPECT_EQ(PyRepr(-2.5), "-2.5");
  EXPECT_EQ(PyRepr(1e16), "1e+16");
  EXPECT_EQ(PyRepr(1e-300), "1e-300");
  EXPECT_EQ(PyRepr(5e-324), "5e-324");
  EXPECT_EQ(PyRepr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(PyRepr(12345678901234567.0), "1.2345678901234568e+16");
  EXPECT_EQ(PyRepr(0.19999999999999998), "0.19999999999999998");
  EXPECT_EQ(PyRepr(66.66666666666666), "66.66666666666666");
  EXPECT_EQ(PyRepr(-0.0), "-0.0");
  EXPECT_EQ(PyRepr(NAN), "nan");
  EXPECT_EQ(PyRepr(-INFINITY), "-inf");
}

TEST(PyReprTest, EveryExponent) {
  std::mt19937_64 rng(14);
  for (int i = 0; i < 300000; ++i) {
    double x = FromBits((rng() & ~(uint64_t{0x7ff} << 52)) | (static_cast<uint64_t>(rng() % 0x7ff) << 52));
    ASSERT_TRUE(Same(x));
  }
}

TEST(PyReprTest, StatisticsDifferencesAndRatios) {
  std::mt19937_64 rng(15);
  std::uniform_real_distribution<double> exponent(-12, 8);
  std::uniform_real_distribution<double> noise(-0.01, 0.01);
  for (int i = 0; i < 300000; ++i) {
    double a = static_cast<float>(std::pow(10.0, exponent(rng)) * (rng() % 2 ? 1 : -1));
    double b = static_cast<float>(a * (1 + noise(rng)));
    double d = a - b;
    ASSERT_TRUE(Same(d));
    if (b != 0) {
      ASSERT_TRUE(Same(std::fabs(d / b * 100)));
    }
    ASSERT_TRUE(Same(a));
  }
}

TEST(PyReprTest, ShortDecimalsAndTheirNeighbours) {
  std::mt19937_64 rng(16);
  for (int i = 0; i < 200000; ++i) {
    int digits = 1 + static_cast<int>(rng() % 17);
    uint64_t m = rng() % static_cast<uint64_t>(std::pow(10.0, digits));
    int e = static_cast<int>(rng() % 80) - 50;
    std::string text = std::to_string(m) + "e" + std::to_string(e);
    ASSERT_TRUE(Same(std::strtod(text.c_str(), nullptr))) << text;
  }
  for (int m = 1; m < 20000; ++m) {
    ASSERT_TRUE(Same(m));
    ASSERT_TRUE(Same(m / 1000.0));
  }
}

TEST(PyReprTest, PowersOfTwo) {
  for (int e = -1074; e <= 1023; ++e) ASSERT_TRUE(Same(std::ldexp(1.0, e))) << e;
  for (int e = -1022; e <= 1023; ++e) ASSERT_TRUE(Same(std::ldexp(1.5, e))) << e;
}

TEST(PyRound6Test, SameAsPrintfThenStrtod) {
  // PyRound6 and PyExp6 format through to_chars/from_chars; they must give what %.6f and
  // strtod, and %.6e, give (their first form), over every exponent and near the rounding ties.
  auto reference = [](double x) {
    char buf[400];
    snprintf(buf, sizeof(buf), "%.6f", x);
    return PyRepr(std::strtod(buf, nullptr));
  };
  std::mt19937_64 rng(17);
  for (int i = 0; i < 200000; ++i) {
    double x = FromBits(rng());
    if (!std::isfinite(x)) continue;
    ASSERT_EQ(PyRound6(x), reference(x)) << x;
  }
  std::uniform_real_distribution<double> unit(-1000, 1000);
  for (int i = 0; i < 200000; ++i) {
    double tie = std::round(unit(rng) * 1e6) / 1e6 + 5e-7;
    for (double x : {tie, std::nextafter(tie, -INFINITY), std::nextafter(tie, INFINITY)}) {
      ASSERT_EQ(PyRound6(x), reference(x)) << x;
    }
  }
  for (int i = 0; i < 200000; ++i) {
    double x = FromBits(rng());
    if (!std::isfinite(x)) continue;
    char buf[64];
    snprintf(buf, sizeof(buf), "%.6e", x);
    ASSERT_EQ(PyExp6(x), buf);
  }
  EXPECT_EQ(PyExp6(1.5e-7), "1.500000e-07");
  EXPECT_EQ(PyExp6(-2.5e100), "-2.500000e+100");
  EXPECT_EQ(PyRound6(0.0025), "0.0025");
  EXPECT_EQ(PyRound6(-1.23456789), "-1.234568");
  EXPECT_EQ(PyRound6(1e300), reference(1e300));
}

// msprobe's float text, "{:.6e}" when repr has an exponent, else repr(round(x, 6)), from the
// shortest digits: Python's texts (python3 -c 'for x in [...]: print(repr(x),
// f"{x:.6e}" if "e" in repr(x) else repr(round(x, 6)), "%.6f" % x)') at the places where the
// short way hands over to the long one: digits ending exactly at a half (0.0078125 = 2^-7,
// 1.2345675e16), carries (0.9999995, 9.99999951e-05), 2^33, 2^52, 1e16, 1e-4, subnormals.
TEST(PyRound6OrExp6Test, EdgesAsPythonWritesThem) {
  const struct {
    double x;
    const char* python;  // msprobe's rule
    const char* fixed6;  // "%.6f"
  } cases[] = {
      {0.0078125, "0.007812", "0.007812"},
      {-0.0078125, "-0.007812", "-0.007812"},
      {5e-07, "5.000000e-07", "0.000000"},
      {0.00010000005, "0.0001", "0.000100"},
      {0.0001, "0.0001", "0.000100"},
      {9.999995e-05, "9.999995e-05", "0.000100"},
      {9.9999995e-05, "9.999999e-05", "0.000100"},
      {9.99999951e-05, "1.000000e-04", "0.000100"},
      {-9.99999951e-05, "-1.000000e-04", "-0.000100"},
      {0.00099999951, "0.001", "0.001000"},
      {1.2345675e+16, "1.234568e+16", "12345675000000000.000000"},
      {1.2345665e+16, "1.234566e+16", "12345665000000000.000000"},
      {9.9999999e+16, "1.000000e+17", "99999999000000000.000000"},
      {9999999500000000.0, "9999999500000000.0", "9999999500000000.000000"},
      {8589934592.0, "8589934592.0", "8589934592.000000"},
      {8589934591.999999, "8589934591.999999", "8589934591.999999"},
      {8589934592.000002, "8589934592.000002", "8589934592.000002"},
      {4294967296.000001, "4294967296.000001", "4294967296.000001"},
      {0.1234565, "0.123456", "0.123456"},
      {0.1234575, "0.123457", "0.123457"},
      {1.0000005, "1.000001", "1.000001"},
      {2.5000005, "2.500001", "2.500001"},
      {0.9999995, "1.0", "1.000000"},
      {0.99999949999, "0.999999", "0.999999"},
      {999999.9999995, "999999.999999", "999999.999999"},
      {99999999.9999996, "100000000.0", "100000000.000000"},
      {123456789.0000005, "123456789.000001", "123456789.000001"},
      {1e-05, "1.000000e-05", "0.000010"},
      {1.5e-300, "1.500000e-300", "0.000000"},
      {5e-324, "4.940656e-324", "0.000000"},
      {2.2250738585072014e-308, "2.225074e-308", "0.000000"},
      {4.4e-37, "4.400000e-37", "0.000000"},
      {3.9e-37, "3.900000e-37", "0.000000"},
      {4503599627370496.0, "4503599627370496.0", "4503599627370496.000000"},
      {4503599627370497.0, "4503599627370497.0", "4503599627370497.000000"},
      {9007199254740992.0, "9007199254740992.0", "9007199254740992.000000"},
      {1e+16, "1.000000e+16", "10000000000000000.000000"},
      {9999999999999998.0, "9999999999999998.0", "9999999999999998.000000"},
      {1.00000005e-05, "1.000000e-05", "0.000010"},
      {0.0001234565, "0.000123", "0.000123"},
      {0.000123456, "0.000123", "0.000123"},
      {12345678.1234565, "12345678.123457", "12345678.123457"},
      {1.5e-06, "1.500000e-06", "0.000002"},
      {1.49e-06, "1.490000e-06", "0.000001"},
      {5.1e-07, "5.100000e-07", "0.000001"},
      {2.5e-06, "2.500000e-06", "0.000003"},
      {1234567890.123456, "1234567890.123456", "1234567890.123456"},
      {-0.0, "-0.0", "-0.000000"},
      {0.0, "0.0", "0.000000"},
  };
  for (const auto& c : cases) {
    char out[kPyFixed6Max];
    EXPECT_EQ(std::string(out, PyRound6OrExp6To(c.x, out)), c.python) << PyRepr(c.x);
    EXPECT_EQ(std::string(out, PyFixed6To(c.x, out)), c.fixed6) << PyRepr(c.x);
  }
}

// The short ways against the long ones (to_chars, from_chars, printf) over every exponent, the
// decimals of 7 to 9 digits whose last is a 5 (the ties of the rounding, and the doubles beside
// them), and the magnitudes where the short way stops (1e-4, 2^33, 2^52, 1e16).
TEST(PyRound6OrExp6Test, SameAsTheLongWay) {
  auto rule = [](double x) { return PyRepr(x).find('e') != std::string::npos ? PyExp6(x) : PyRound6(x); };
  auto fixed6 = [](double x) {
    char buf[400];
    snprintf(buf, sizeof(buf), "%.6f", x);
    return std::string(buf);
  };
  auto same = [&](double x) {
    char out[kPyFixed6Max];
    std::string got(out, PyRound6OrExp6To(x, out)), want = rule(x);
    EXPECT_EQ(got, want) << PyRepr(x);
    std::string got6(out, PyFixed6To(x, out)), want6 = fixed6(x);
    EXPECT_EQ(got6, want6) << PyRepr(x);
    return got == want && got6 == want6;
  };
  std::mt19937_64 rng(33);
  for (int i = 0; i < 200000; ++i) {
    double x = FromBits(rng());
    if (std::isfinite(x) && std::fabs(x) < 1e300) {
      ASSERT_TRUE(same(x));
    }
  }
  for (int i = 0; i < 300000; ++i) {
    int digits = 7 + static_cast<int>(rng() % 3);
    uint64_t m = (rng() % static_cast<uint64_t>(std::pow(10.0, digits - 1))) * 10 + 5;
    int e = static_cast<int>(rng() % 30) - 18;
    std::string text = std::to_string(m) + "e" + std::to_string(e);
    double tie = std::strtod(text.c_str(), nullptr);
    for (double x : {tie, -tie, std::nextafter(tie, 0.0), std::nextafter(tie, INFINITY)}) ASSERT_TRUE(same(x)) << text;
  }
  for (double edge : {1e-4, 0x1p33, 0x1p52, 1e16, 1e-6, 5e-7}) {
    double x = edge;
    for (int k = 0; k < 2000; ++k, x = std::nextafter(x, 0.0)) ASSERT_TRUE(same(x));
    x = edge;
    for (int k = 0; k < 2000; ++k, x = std::nextafter(x, INFINITY)) ASSERT_TRUE(same(x));
  }
  std::uniform_real_distribution<double> unit(1, 10);
  for (int i = 0; i < 200000; ++i) {
    double x = unit(rng) * std::pow(10.0, static_cast<int>(rng() % 24) - 6);
    ASSERT_TRUE(same(x));
  }
}

}  // namespace
}  // namespace graph_ascend
