// The byte scans under JsonReader (internal to json/): word-at-a-time and
// SSE2 searches over the input for what ends a run of white space, of a
// string's plain bytes or of a member's number. Those given a size `n` read
// no byte at or past data[n]; those given only `p` read the fixed width they
// name, which the caller must have checked is there.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace graph_ascend::json::scan {

static_assert(std::endian::native == std::endian::little, "the word scans below assume little-endian bytes");

inline constexpr uint64_t kOnes = 0x0101010101010101ull;
inline constexpr uint64_t kHighs = 0x8080808080808080ull;

inline bool IsSpace(char c) {
  constexpr uint64_t kSpaces = uint64_t{1} << ' ' | uint64_t{1} << '\n' | uint64_t{1} << '\r' | uint64_t{1} << '\t';
  unsigned char u = static_cast<unsigned char>(c);
  return u <= ' ' && (kSpaces >> u & 1) != 0;
}

inline uint64_t Load64(const char* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

// The high bit of each byte of `w` that ends the plain run of a string: '"',
// '\\', a control character or a non-ASCII byte. Exact at the lowest set bit
// (borrows only reach bytes above a flagged one), which is all a scan needs.
inline uint64_t StringStops(uint64_t w) {
  uint64_t quote = w ^ (kOnes * '"');
  uint64_t slash = w ^ (kOnes * '\\');
  return (((quote - kOnes) & ~quote) | ((slash - kOnes) & ~slash) | ((w - kOnes * 0x20) & ~w) | w) & kHighs;
}

#if defined(__SSE2__)
// One bit per byte of the 16 at `p` that ends the plain run of a string, as
// StringStops (a signed compare below 0x20 also catches bytes >= 0x80).
inline uint32_t StringStops16(const char* p) {
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
  __m128i slash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
  __m128i stop = _mm_or_si128(_mm_or_si128(quote, slash), _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
  return static_cast<uint32_t>(_mm_movemask_epi8(stop));
}
#endif

// The first byte at or after data[i] that ends the plain run of a string,
// or n.
[[gnu::always_inline]] inline size_t PlainRun(const char* data, size_t i, size_t n) {
#if defined(__SSE2__)
  while (i + 16 <= n) {
    uint32_t stops = StringStops16(data + i);
    if (stops != 0) return i + static_cast<size_t>(std::countr_zero(stops));
    i += 16;
  }
#endif
  while (i + 8 <= n) {
    uint64_t stops = StringStops(Load64(data + i));
    if (stops != 0) return i + (static_cast<size_t>(std::countr_zero(stops)) >> 3);
    i += 8;
  }
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(data[i]);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return i;
    ++i;
  }
  return n;
}

// One bit per byte of the 32 at `p` that is ',' or '\n' (what ends a
// member's number in json.dump's layout).
inline uint32_t NumberEnds32(const char* p) {
#if defined(__SSE2__)
  auto ends16 = [](const char* q) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    __m128i stop = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
    return static_cast<uint32_t>(_mm_movemask_epi8(stop));
  };
  return ends16(p) | ends16(p + 16) << 16;
#else
  uint32_t ends = 0;
  for (int i = 0; i < 32; ++i) ends |= static_cast<uint32_t>(p[i] == ',' || p[i] == '\n') << i;
  return ends;
#endif
}

// A mask of the low `k` bytes of a word (k <= 8).
inline uint64_t LowBytes(size_t k) { return k >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * k)) - 1; }

// The first byte at or after data[i] that is not ' ', or n: an indent,
// sixteen or eight spaces per step.
[[gnu::always_inline]] inline size_t SpaceRun(const char* data, size_t i, size_t n) {
#if defined(__SSE2__)
  while (i + 16 <= n) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    uint32_t other = ~static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')))) & 0xFFFF;
    if (other != 0) return i + static_cast<size_t>(std::countr_zero(other));
    i += 16;
  }
#endif
  while (i + 8 <= n) {
    uint64_t w = Load64(data + i) ^ (kOnes * ' ');
    if (w != 0) return i + (static_cast<size_t>(std::countr_zero(w)) >> 3);
    i += 8;
  }
  while (i < n && data[i] == ' ') ++i;
  return i;
}

}  // namespace graph_ascend::json::scan
