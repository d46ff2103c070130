#include "base/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace graph_ascend {

void AdviseHugePages(const void* p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  uintptr_t at = reinterpret_cast<uintptr_t>(p);
  uintptr_t begin = (at + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t end = (at + bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // failure only costs speed
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace graph_ascend
