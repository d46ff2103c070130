#pragma once
#include <chrono>
#include <cstdio>
inline void TraceMark(const char* what) {
  using namespace std::chrono;
  static auto t0 = steady_clock::now();
  fprintf(stderr, "TRACE %8.2f ms %s\n", duration<double, std::milli>(steady_clock::now() - t0).count(), what);
}
