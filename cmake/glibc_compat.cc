// Linked into the portable executables only (cmake/Portable.cmake). Debian 12
// builds libstdc++.a against glibc 2.36, so std::random_device refers to
// arc4random, new in glibc 2.36; that one symbol would raise the glibc the
// executables need from 2.34 to 2.36. This definition, on getrandom (glibc
// 2.25), takes its place at link time; nothing else in glibc is replaced.
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

extern "C" uint32_t arc4random(void) {
  uint32_t value = 0;
  auto* out = reinterpret_cast<unsigned char*>(&value);
  size_t filled = 0;
  while (filled < sizeof(value)) {
    ssize_t n = getrandom(out + filled, sizeof(value) - filled, 0);
    if (n > 0) {
      filled += static_cast<size_t>(n);
    } else if (errno != EINTR) {
      abort();  // arc4random cannot fail; without a kernel source of randomness nothing is safe to return
    }
  }
  return value;
}
