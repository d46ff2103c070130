// Helpers for writing protobuf's wire format by hand (vis/detail_wire and
// vis/side_detail_wire): the same bytes protobuf writes, without building
// messages. Internal to vis/.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace graph_ascend::vis::wire {

// Wire types of the tags written here.
inline constexpr uint32_t kVarint = 0, kFixed64 = 1, kDelimited = 2;

inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// int32 and enum fields: a negative value is written as its 64-bit sign extension.
inline uint64_t Int32Bits(int32_t v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }

inline uint64_t DoubleBits(double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof(bits));
  return bits;
}

// The bits of every byte of `s`, OR-ed into `any` a word at a time: the high
// bit of a byte set means `s` is not plain ASCII.
inline void OrView(std::string_view s, uint64_t* any) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t acc = 0;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    acc |= w;
  }
  for (; n > 0; ++p, --n) acc |= static_cast<unsigned char>(*p);
  *any |= acc;
}

inline bool HighBit(uint64_t any) { return (any & 0x8080808080808080ull) != 0; }

// memcpy for the short strings details are made of (field names, dtypes,
// metric texts), without a library call: overlapping word copies that stay
// within [src, src + n) and [dst, dst + n).
[[gnu::always_inline]] inline uint8_t* Copy(uint8_t* dst, const char* src, size_t n) {
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    memcpy(&a, src, 8);
    memcpy(&b, src + n - 8, 8);
    memcpy(dst, &a, 8);
    memcpy(dst + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    memcpy(&a, src, 4);
    memcpy(&b, src + n - 4, 4);
    memcpy(dst, &a, 4);
    memcpy(dst + n - 4, &b, 4);
  } else if (n < 4) {
    for (size_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(src[i]);
  } else {
    memcpy(dst, src, n);
  }
  return dst + n;
}

}  // namespace graph_ascend::vis::wire
