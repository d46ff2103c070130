// Python's text forms of numbers, which msprobe's outputs are made of
// ("20.0%", "1e-05", "inf"). Reproducing them lets graph-ascend give the
// same strings as msprobe for the same numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace graph_ascend {

// repr(float): shortest round-trip digits, "1e-05", "3.0", "inf", "nan".
std::string PyRepr(double x);

// PyRepr written to `out`, which holds at least kPyReprMax chars (no
// terminating NUL); returns the length. For hot paths that append the text
// where it goes instead of building a string.
inline constexpr size_t kPyReprMax = 32;
size_t PyReprTo(double x, char* out);

// round(x, 6) as Python does it (correctly rounded decimal), then repr.
std::string PyRound6(double x);

// "{:.6e}".format(x), e.g. "1.123123e-11".
std::string PyExp6(double x);

// PyExp6(x) when PyRepr(x) has an exponent, else PyRound6(x) (msprobe's text
// of a float statistic), written to `out` (kPyReprMax chars at least);
// returns the length. From x's shortest digits, without reading a rounded
// decimal back, unless those digits end exactly halfway at the place rounded
// to, or the result has more than 15 digits.
size_t PyRound6OrExp6To(double x, char* out);

// "{:.6f}".format(x) (printf's "%.6f"), written to `out` (kPyFixed6Max chars at least);
// returns the length. From x's shortest digits as PyRound6OrExp6To, else std::to_chars.
inline constexpr size_t kPyFixed6Max = 320;
size_t PyFixed6To(double x, char* out);

// CRC-32 (zlib polynomial) of `s`, as "%08x".
std::string Crc32Hex(const std::string& s);

}  // namespace graph_ascend
