// Linked into the portable executables only (cmake/Portable.cmake). They are
// compiled on Debian 12 (GCC 12, glibc 2.36 headers) but linked against
// Debian 11's glibc 2.31 (scripts/glibc-sysroot.sh) and meant to run on glibc
// 2.28 and later (Kylin V10, openEuler 20.03). The symbols newer than 2.28
// that Debian 12's objects and archives (libstdc++.a, libgcc_eh.a, gRPC,
// abseil, yaml-cpp) refer to are each defined here on what glibc 2.28 has.
// Nothing else in glibc is replaced. The definitions are hidden: they serve
// the executable's own references and interpose nothing of glibc's.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/single_threaded.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__)
#define GA_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define GA_GLIBC_BASE "GLIBC_2.17"
#else
#error "the portable build knows the first glibc symbol version of x86_64 and aarch64 only"
#endif
#define GA_HIDDEN __attribute__((visibility("hidden")))

// glibc 2.32. libstdc++'s headers skip atomic reference counts when it is
// nonzero; zero ("threads may exist") is always correct, only not the fastest.
GA_HIDDEN char __libc_single_threaded = 0;

// glibc 2.36. Debian 12's libstdc++.a (std::random_device) calls it.
extern "C" GA_HIDDEN uint32_t arc4random(void) {
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

// glibc 2.35. GCC 12's static unwinder (libgcc_eh.a) finds the unwind tables of
// the code a C++ exception passes through with it, and reads only
// dlfo_map_start and dlfo_eh_frame; dl_iterate_phdr (what GCC 11 used) gives
// both. dlfo_link_map is left null.
namespace {

struct ObjectSearch {
  uintptr_t pc;
  dl_find_object* result;
};

int FindObjectOf(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<ObjectSearch*>(data);
  uintptr_t start = UINTPTR_MAX;
  uintptr_t end = 0;
  bool contains = false;
  const void* eh_frame = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD) {
      start = std::min(start, begin);
      end = std::max(end, begin + segment.p_memsz);
      contains = contains || (search->pc >= begin && search->pc < begin + segment.p_memsz);
    } else if (segment.p_type == PT_GNU_EH_FRAME) {
      eh_frame = reinterpret_cast<const void*>(begin);
    }
  }
  if (!contains) return 0;
  *search->result = {};
  search->result->dlfo_map_start = reinterpret_cast<void*>(start);
  search->result->dlfo_map_end = reinterpret_cast<void*>(end);
  search->result->dlfo_eh_frame = const_cast<void*>(eh_frame);
  return 1;
}

}  // namespace

extern "C" GA_HIDDEN int _dl_find_object(void* pc, dl_find_object* result) noexcept {
  ObjectSearch search{reinterpret_cast<uintptr_t>(pc), result};
  return dl_iterate_phdr(FindObjectOf, &search) == 1 ? 0 : -1;
}

// glibc 2.29 gave exp, log, log2 and pow new versions without the SVID error
// wrapper; the first versions compute the same values and also set errno.
extern "C" {
double ga_glibc_exp(double);
double ga_glibc_log(double);
double ga_glibc_log2(double);
double ga_glibc_pow(double, double);
}
__asm__(".symver ga_glibc_exp, exp@" GA_GLIBC_BASE);
__asm__(".symver ga_glibc_log, log@" GA_GLIBC_BASE);
__asm__(".symver ga_glibc_log2, log2@" GA_GLIBC_BASE);
__asm__(".symver ga_glibc_pow, pow@" GA_GLIBC_BASE);
// <cmath> declared these already, so GA_HIDDEN would be ignored; the assembler's .hidden is not.
__asm__(".hidden exp\n.hidden log\n.hidden log2\n.hidden pow");
extern "C" double exp(double x) noexcept { return ga_glibc_exp(x); }
extern "C" double log(double x) noexcept { return ga_glibc_log(x); }
extern "C" double log2(double x) noexcept { return ga_glibc_log2(x); }
extern "C" double pow(double x, double y) noexcept { return ga_glibc_pow(x, y); }

// glibc 2.30. libstdc++'s std::condition_variable waits on the steady clock
// with it. Where glibc has it (2.30 on) it is used; before, the steady
// deadline becomes a wall-clock one for pthread_cond_timedwait (what libstdc++
// did before GCC 10: a wall-clock jump during the wait moves its end).
namespace {

using ClockWait = int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*);

ClockWait GlibcClockWait() {
  static const ClockWait wait = reinterpret_cast<ClockWait>(dlvsym(RTLD_NEXT, "pthread_cond_clockwait", "GLIBC_2.30"));
  return wait;
}

}  // namespace

extern "C" GA_HIDDEN int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                                const timespec* deadline) {
  if (ClockWait wait = GlibcClockWait()) return wait(cond, mutex, clock, deadline);
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(cond, mutex, deadline);
  timespec now{};
  timespec wall{};
  if (clock_gettime(clock, &now) != 0 || clock_gettime(CLOCK_REALTIME, &wall) != 0) return EINVAL;
  int64_t left_ns = (deadline->tv_sec - now.tv_sec) * 1000000000LL + (deadline->tv_nsec - now.tv_nsec);
  int64_t end_ns = wall.tv_sec * 1000000000LL + wall.tv_nsec + std::max<int64_t>(left_ns, 0);
  timespec end{static_cast<time_t>(end_ns / 1000000000LL), static_cast<long>(end_ns % 1000000000LL)};
  return pthread_cond_timedwait(cond, mutex, &end);
}
