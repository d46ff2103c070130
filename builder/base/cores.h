// What this process may use of the machine: cores (the affinity mask, a
// cgroup's cpu.max) and memory (MemAvailable, a cgroup's memory.max), so that
// a batch fills a container or a taskset slice and not the whole host.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace graph_ascend {

// The cores the process may run on: sched_getaffinity's count, lowered to a
// cgroup v2 cpu.max quota (rounded up) when one is set; at least 1.
int UsableCores();

// Bytes the process may still take: /proc/meminfo's MemAvailable, lowered to
// what a cgroup v2 memory.max leaves above memory.current; 0 when unknown.
uint64_t AvailableMemory();

// The cgroup v2 figures behind them, from a cgroup folder's files (tests give
// their own): cpu.max "QUOTA PERIOD" as cores rounded up (0: no limit),
// memory.max less memory.current (UINT64_MAX: no limit).
int CgroupCores(const std::string& cpu_max_text);
uint64_t CgroupMemoryLeft(const std::string& memory_max_text, const std::string& memory_current_text);

// "8G", "512M", "2048K", "1T" or plain bytes: --max-memory's value.
Result<uint64_t> ParseByteSize(const std::string& text, const std::string& where);

}  // namespace graph_ascend
