// Asking the kernel for transparent huge pages (2 MiB) on large arrays.
// With THP in "madvise" mode (Debian's default) an array of tens of MiB
// otherwise takes one page fault per 4 KiB as it fills: about a quarter of
// all faults of a 10^5-node compare, each a kernel entry.
#pragma once

#include <cstddef>

namespace graph_ascend {

// Advises huge pages for the 2 MiB-aligned part of [p, p + bytes). A hint:
// without THP support, or for a block under 2 MiB, nothing changes.
void AdviseHugePages(const void* p, size_t bytes);

}  // namespace graph_ascend
